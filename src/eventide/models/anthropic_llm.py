"""Anthropic connector (the ``anthropic`` SDK, Messages API).

Install with ``pip install 'eventide[anthropic]'``. Model names ``claude-*`` and
``anthropic/<model>`` resolve here; the key comes from ``ANTHROPIC_API_KEY`` and the server
from ``ANTHROPIC_BASE_URL`` when set.

Thoughts come back as ``Part(thought=True)`` with the block's signature in
``thought_signature``; signed thoughts are sent back in later turns (extended thinking with
tools requires it), unsigned ones are dropped. ``config.thinking_budget`` switches extended
thinking on; ``config.response_json_schema`` asks for structured output. ``seed``,
``presence_penalty`` and ``frequency_penalty`` have no Messages API equivalent.
"""

from __future__ import annotations

import base64
from collections.abc import AsyncGenerator, AsyncIterator
from typing import Any

from eventide import types
from eventide.models._connector_support import (
    CallIdAssigner,
    OpenedStream,
    ProviderFailure,
    RemoteLlm,
    api_key_from_env,
    call_with_retries,
    close_stream,
    code_part_as_text,
    count_function_calls,
    fill_missing_call_ids,
    fit_to_signature,
    guarded_stream,
    open_stream_with_retries,
    partial_text_response,
    reject_builtin_tools,
    response_dict,
    response_payload,
    retry_after_seconds,
    status_code_failure,
)
from eventide.models.llm_request import LlmRequest
from eventide.models.llm_response import LlmResponse

__all__ = ["AnthropicLlm", "Claude"]

_STOP_REASONS = {
    "end_turn": "STOP",
    "stop_sequence": "STOP",
    "tool_use": "STOP",
    "pause_turn": "STOP",
    "max_tokens": "MAX_TOKENS",
    "model_context_window_exceeded": "MAX_TOKENS",
    "refusal": "SAFETY",
}


class AnthropicLlm(RemoteLlm):
    """A Claude model through the Messages API.

    Attributes:
        model: ``claude-sonnet-4-5`` or ``anthropic/<model>`` (prefix stripped).
        api_key: the key; default ``ANTHROPIC_API_KEY``.
        base_url: the server; default ``ANTHROPIC_BASE_URL`` or Anthropic's own.
        max_tokens: the output limit when the request sets no ``max_output_tokens`` (the
            Messages API requires one).
    """

    model: str = "claude-sonnet-4-5"
    api_key: str | None = None
    base_url: str | None = None
    max_tokens: int = 4096

    @classmethod
    def supported_models(cls) -> list[str]:
        """``claude-*`` and ``anthropic/*``."""
        return [r"claude-.*", r"anthropic/.*"]

    def _get_client(self) -> Any:
        if self._client is None:
            import anthropic

            key = api_key_from_env(self.api_key, ["ANTHROPIC_API_KEY"], provider="Anthropic")
            self._client = anthropic.AsyncAnthropic(
                api_key=key,
                base_url=self.base_url,
                timeout=self.timeout,
                # Retries happen in Eventide, with its own policy, for every connector alike.
                max_retries=0,
            )
        return self._client

    def _body(self, llm_request: LlmRequest) -> dict[str, Any]:
        model = self.model.removeprefix("anthropic/")
        return messages_request(llm_request, model=model, default_max_tokens=self.max_tokens)

    async def generate_content_async(
        self, llm_request: LlmRequest, stream: bool = False
    ) -> AsyncGenerator[LlmResponse, None]:
        """Call the model; see :class:`~eventide.models.base_llm.BaseLlm`."""
        client = self._get_client()
        body = fit_to_signature(client.messages.create, self._body(llm_request))
        calls_before = count_function_calls(llm_request)
        policy = self._retry_policy()
        if not stream:
            result = await call_with_retries(
                lambda: client.messages.create(**body), policy=policy, classify=_classify
            )
            if isinstance(result, ProviderFailure):
                yield result.to_response()
            else:
                yield parse_message(response_dict(result), calls_before=calls_before)
            return

        async def open_stream() -> AsyncIterator[Any]:
            return aiter(await client.messages.create(**body, stream=True))

        opened = await open_stream_with_retries(open_stream, policy=policy, classify=_classify)
        if isinstance(opened, ProviderFailure):
            yield opened.to_response()
            return
        try:
            async for response in _message_stream(opened, calls_before):
                yield response
        finally:
            await close_stream(opened.rest)


Claude = AnthropicLlm
"""google-adk's name for this connector, so ported code keeps working."""


def messages_request(
    llm_request: LlmRequest, *, model: str, default_max_tokens: int
) -> dict[str, Any]:
    """The Messages API request body for ``llm_request`` (without ``stream``)."""
    reject_builtin_tools(llm_request, provider="Anthropic")
    config = llm_request.config
    body: dict[str, Any] = {
        "model": model,
        "max_tokens": config.max_output_tokens or default_max_tokens,
        "messages": _messages(llm_request),
    }
    if config.system_instruction:
        body["system"] = config.system_instruction
    tools = []
    for tool in config.tools or ():
        for declaration in tool.function_declarations or ():
            spec: dict[str, Any] = {
                "name": declaration.name,
                "input_schema": declaration.parameters_json_schema
                or {"type": "object", "properties": {}},
            }
            if declaration.description:
                spec["description"] = declaration.description
            tools.append(spec)
    if tools:
        body["tools"] = tools
        choice = _tool_choice(config.tool_config)
        if choice is not None:
            body["tool_choice"] = choice
    if config.response_json_schema is not None:
        body["output_config"] = {
            "format": {"type": "json_schema", "schema": config.response_json_schema}
        }
    if config.thinking_budget:
        body["thinking"] = {"type": "enabled", "budget_tokens": config.thinking_budget}
    settings = {
        "temperature": config.temperature,
        "top_p": config.top_p,
        "top_k": int(config.top_k) if config.top_k is not None else None,
        "stop_sequences": config.stop_sequences,
    }
    body.update({key: value for key, value in settings.items() if value is not None})
    if config.extra:
        body["extra_body"] = dict(config.extra)
    return body


def _messages(llm_request: LlmRequest) -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = []
    ids = CallIdAssigner()
    for content in llm_request.contents:
        role = "assistant" if content.role == "model" else "user"
        blocks = [
            block
            for part in content.parts or ()
            if (block := _block(part, ids, assistant=role == "assistant")) is not None
        ]
        if not blocks:
            continue
        # The Messages API wants user and assistant turns to alternate; Eventide's history
        # may hold several user contents in a row (tool results, then a new message).
        if messages and messages[-1]["role"] == role:
            messages[-1]["content"].extend(blocks)
        else:
            messages.append({"role": role, "content": blocks})
    return messages


def _block(part: types.Part, ids: CallIdAssigner, *, assistant: bool) -> dict[str, Any] | None:
    if part.function_call is not None:
        call = part.function_call
        return {
            "type": "tool_use",
            "id": ids.call_id(call),
            "name": call.name or "",
            "input": call.args or {},
        }
    if part.function_response is not None:
        return {
            "type": "tool_result",
            "tool_use_id": ids.response_id(part.function_response),
            "content": response_payload(part.function_response),
        }
    if part.thought:
        if not assistant or not part.thought_signature:
            # Claude accepts earlier thinking only with the signature it issued.
            return None
        try:
            signature = part.thought_signature.decode("utf-8")
        except UnicodeDecodeError:
            return None  # another provider's binary signature (Gemini): not Claude's
        return {"type": "thinking", "thinking": part.text or "", "signature": signature}
    if part.text is not None:
        return {"type": "text", "text": part.text} if part.text else None
    if part.inline_data is not None and part.inline_data.data is not None:
        mime = part.inline_data.mime_type or "application/octet-stream"
        source = {
            "type": "base64",
            "media_type": mime,
            "data": base64.b64encode(part.inline_data.data).decode("ascii"),
        }
        return {"type": "image" if mime.startswith("image/") else "document", "source": source}
    if part.file_data is not None and part.file_data.file_uri:
        mime = part.file_data.mime_type or "image/"
        kind = "image" if mime.startswith("image/") else "document"
        return {"type": kind, "source": {"type": "url", "url": part.file_data.file_uri}}
    rendered = code_part_as_text(part)
    return {"type": "text", "text": rendered} if rendered else None


def _tool_choice(tool_config: types.ToolConfig | None) -> dict[str, Any] | None:
    if tool_config is None or tool_config.mode is None:
        return None
    if tool_config.mode == "NONE":
        return {"type": "none"}
    if tool_config.mode == "AUTO":
        return {"type": "auto"}
    names = tool_config.allowed_function_names or []
    if len(names) == 1:
        return {"type": "tool", "name": names[0]}
    # The Messages API cannot restrict "any" to a subset; every declared tool stays allowed.
    return {"type": "any"}


def parse_message(data: dict[str, Any], *, calls_before: int) -> LlmResponse:
    """An :class:`LlmResponse` from a Messages API message."""
    parts: list[types.Part] = []
    for block in data.get("content") or ():
        kind = block.get("type")
        if kind == "text":
            parts.append(types.Part(text=block.get("text", "")))
        elif kind == "thinking":
            signature = block.get("signature")
            parts.append(
                types.Part(
                    text=block.get("thinking", ""),
                    thought=True,
                    thought_signature=signature.encode("utf-8") if signature else None,
                )
            )
        elif kind == "tool_use":
            parts.append(
                types.Part(
                    function_call=types.FunctionCall(
                        id=block.get("id") or None,
                        name=block.get("name"),
                        args=block.get("input") or {},
                    )
                )
            )
    fill_missing_call_ids(parts, calls_before=calls_before)
    stop = data.get("stop_reason")
    finish = _STOP_REASONS.get(stop, "OTHER") if stop else None
    response = LlmResponse(
        content=types.Content(role="model", parts=parts) if parts else None,
        finish_reason=finish,
        usage_metadata=_usage(data.get("usage")),
        model_version=data.get("model"),
        turn_complete=True,
    )
    if stop == "refusal":
        response.error_code = "SAFETY"
        response.error_message = "Claude declined to answer (stop_reason 'refusal')."
    return response


def _usage(usage: Any) -> types.UsageMetadata | None:
    if not isinstance(usage, dict):
        return None
    cache_read = usage.get("cache_read_input_tokens") or 0
    prompt = (usage.get("input_tokens") or 0) + cache_read
    prompt += usage.get("cache_creation_input_tokens") or 0
    output = usage.get("output_tokens") or 0
    return types.UsageMetadata(
        prompt_token_count=prompt,
        candidates_token_count=output,
        total_token_count=prompt + output,
        cached_content_token_count=cache_read or None,
    )


async def _message_stream(
    opened: OpenedStream[Any], calls_before: int
) -> AsyncGenerator[LlmResponse, None]:
    """Partial text and thoughts as they arrive, then the message rebuilt from the events."""
    message: dict[str, Any] = {}
    blocks: dict[int, dict[str, Any]] = {}
    json_fragments: dict[int, list[str]] = {}
    async for item in guarded_stream(opened, classify=_classify):
        if isinstance(item, ProviderFailure):
            yield item.to_response()
            return
        event = response_dict(item)
        kind = event.get("type")
        if kind == "message_start":
            message = dict(event.get("message") or {})
        elif kind == "content_block_start":
            blocks[event["index"]] = dict(event.get("content_block") or {})
        elif kind == "content_block_delta":
            index = event["index"]
            block = blocks.setdefault(index, {})
            delta = event.get("delta") or {}
            delta_type = delta.get("type")
            if delta_type == "text_delta":
                block["text"] = block.get("text", "") + delta.get("text", "")
                yield partial_text_response(delta.get("text", ""))
            elif delta_type == "thinking_delta":
                block["thinking"] = block.get("thinking", "") + delta.get("thinking", "")
                yield partial_text_response(delta.get("thinking", ""), thought=True)
            elif delta_type == "signature_delta":
                block["signature"] = block.get("signature", "") + delta.get("signature", "")
            elif delta_type == "input_json_delta":
                json_fragments.setdefault(index, []).append(delta.get("partial_json", ""))
        elif kind == "message_delta":
            message.update(event.get("delta") or {})
            usage = dict(message.get("usage") or {})
            usage.update({k: v for k, v in (event.get("usage") or {}).items() if v is not None})
            message["usage"] = usage
        elif kind == "message_stop":
            for index, fragments in json_fragments.items():
                failure = _assemble_input(blocks[index], "".join(fragments))
                if failure is not None:
                    yield failure.to_response()
                    return
            message["content"] = [blocks[i] for i in sorted(blocks)]
            yield parse_message(message, calls_before=calls_before)
            return
    yield ProviderFailure(
        code="MALFORMED_STREAM",
        message="The Messages stream ended without message_stop (cut short?); retry the turn.",
    ).to_response()


def _assemble_input(block: dict[str, Any], raw: str) -> ProviderFailure | None:
    import json

    try:
        block["input"] = json.loads(raw) if raw else {}
    except json.JSONDecodeError as exc:
        return ProviderFailure(
            code="MALFORMED_FUNCTION_CALL",
            message=f"Claude streamed tool input for {block.get('name')!r} that is not JSON "
            f"({exc}): {raw[:200]!r}",
        )
    return None


def _classify(exc: Exception) -> ProviderFailure | None:
    import anthropic

    if isinstance(exc, anthropic.APITimeoutError):
        return ProviderFailure(
            code="TIMEOUT",
            message=f"Anthropic did not answer in time ({exc}). Raise the connector's timeout.",
        )
    if isinstance(exc, anthropic.APIConnectionError):
        return ProviderFailure(
            code="CONNECTION_ERROR", message=f"Cannot reach the server: {exc}", retryable=True
        )
    if isinstance(exc, anthropic.APIStatusError):
        body = exc.body if isinstance(exc.body, dict) else {}
        error = body.get("error") if isinstance(body.get("error"), dict) else body
        error_type = error.get("type") if isinstance(error, dict) else None
        message = error.get("message") if isinstance(error, dict) else None
        failure = status_code_failure(
            exc.status_code,
            str(error_type) if error_type else None,
            str(message or exc.message),
            provider="Anthropic",
        )
        if error_type == "overloaded_error" and exc.status_code < 400:
            # An overload reported inside a stream that had not started yet is transient too.
            failure.retryable = True
        failure.retry_after = retry_after_seconds(exc.response.headers)
        return failure
    if isinstance(exc, anthropic.APIError):
        return ProviderFailure(code="STREAM_ERROR", message=exc.message)
    return None
