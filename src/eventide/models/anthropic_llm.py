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
from collections.abc import AsyncIterator
from typing import Any

from eventide import types
from eventide.models._history import (
    CallIdAssigner,
    code_part_as_text,
    reject_builtin_tools,
    response_payload,
)
from eventide.models._json import JsonObject, integer, obj, objects, string
from eventide.models._sdk_calls import fit_to_signature, response_dict
from eventide.models._stream_assembler import StreamAssembler, token_usage
from eventide.models.llm_request import LlmRequest
from eventide.models.llm_response import LlmResponse
from eventide.models.providers import AnthropicProvider, Provider
from eventide.models.remote_llm import RemoteLlm, WireCall

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
        provider: where the model is served (overrides ``api_key``, ``base_url`` and
            ``timeout``).
    """

    model: str = "claude-sonnet-4-5"
    api_key: str | None = None
    base_url: str | None = None
    max_tokens: int = 4096
    provider: AnthropicProvider | None = None

    @classmethod
    def supported_models(cls) -> list[str]:
        """``claude-*`` and ``anthropic/*``."""
        return [r"claude-.*", r"anthropic/.*"]

    def _make_provider(self) -> AnthropicProvider:
        if self.provider is not None:
            return self.provider
        return AnthropicProvider(api_key=self.api_key, base_url=self.base_url, timeout=self.timeout)

    def _wire_call(self, llm_request: LlmRequest, provider: Provider) -> WireCall:
        client: Any = provider.client()
        model = self.model.removeprefix("anthropic/")
        body = messages_request(llm_request, model=model, default_max_tokens=self.max_tokens)
        kwargs = fit_to_signature(client.messages.create, body)

        async def send() -> object:
            result: object = await client.messages.create(**kwargs)
            return result

        async def open_stream() -> AsyncIterator[object]:
            return aiter(await client.messages.create(**kwargs, stream=True))

        return WireCall(send=send, open_stream=open_stream, read=_read, feed=_feed)


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
    tools: list[dict[str, Any]] = []
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


def read_message(data: JsonObject, assembler: StreamAssembler) -> None:
    """Feed a whole Messages API message into ``assembler``."""
    for index, block in enumerate(objects(data.get("content"))):
        _read_block_start(index, block, assembler)
    _read_message_fields(data, assembler)
    assembler.finish(None)


def _read_block_start(index: int, block: JsonObject, assembler: StreamAssembler) -> None:
    kind = block.get("type")
    if kind == "text":
        assembler.text(string(block.get("text")) or "", block=index)
    elif kind == "thinking":
        signature = string(block.get("signature"))
        assembler.text(
            string(block.get("thinking")) or "",
            thought=True,
            signature=signature.encode("utf-8") if signature else None,
            block=index,
        )
    elif kind == "tool_use":
        assembler.tool_call(
            index,
            call_id=string(block.get("id")),
            name=string(block.get("name")),
            args=obj(block.get("input")),
        )


def _read_message_fields(data: JsonObject, assembler: StreamAssembler) -> None:
    model = string(data.get("model"))
    if model:
        assembler.model_version = model
    usage = obj(assembler.scratch.get("usage"))
    usage.update({k: v for k, v in obj(data.get("usage")).items() if v is not None})
    if usage:
        assembler.scratch["usage"] = usage
        assembler.usage = _usage(usage)
    stop = string(data.get("stop_reason"))
    if stop:
        assembler.finish(_STOP_REASONS.get(stop, "OTHER"))
        if stop == "refusal":
            assembler.fail("SAFETY", "Claude declined to answer (stop_reason 'refusal').")


def _usage(usage: JsonObject) -> types.UsageMetadata:
    cache_read = integer(usage.get("cache_read_input_tokens")) or 0
    prompt = (integer(usage.get("input_tokens")) or 0) + cache_read
    prompt += integer(usage.get("cache_creation_input_tokens")) or 0
    return token_usage(
        prompt=prompt,
        output=integer(usage.get("output_tokens")) or 0,
        cached=cache_read or None,
    )


def feed_event(event: JsonObject, assembler: StreamAssembler) -> list[LlmResponse]:
    """Feed one Messages stream event; return the partials to stream."""
    kind = event.get("type")
    index = integer(event.get("index"))
    if kind == "message_start":
        _read_message_fields(obj(event.get("message")), assembler)
    elif kind == "content_block_start" and index is not None:
        _read_block_start(index, obj(event.get("content_block")), assembler)
    elif kind == "content_block_delta" and index is not None:
        delta = obj(event.get("delta"))
        delta_type = delta.get("type")
        if delta_type == "text_delta":
            partial = assembler.text(string(delta.get("text")) or "", block=index)
            return [partial] if partial is not None else []
        if delta_type == "thinking_delta":
            partial = assembler.text(string(delta.get("thinking")) or "", thought=True, block=index)
            return [partial] if partial is not None else []
        if delta_type == "signature_delta":
            assembler.signature((string(delta.get("signature")) or "").encode("utf-8"), block=index)
        elif delta_type == "input_json_delta":
            assembler.tool_call(index, arguments=string(delta.get("partial_json")))
    elif kind == "message_delta":
        fields = {**obj(event.get("delta")), "usage": obj(event.get("usage"))}
        _read_message_fields(fields, assembler)
    return []


def _read(result: object, assembler: StreamAssembler) -> None:
    read_message(response_dict(result), assembler)


def _feed(item: object, assembler: StreamAssembler) -> list[LlmResponse]:
    return feed_event(response_dict(item), assembler)
