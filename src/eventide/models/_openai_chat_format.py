"""The OpenAI Chat Completions wire format, without the SDK.

Shared by the OpenAI connector and the LiteLLM connector (LiteLLM speaks this format to
every provider). Requests are built as plain JSON data and responses are read as plain JSON
data, so one translation serves both SDKs and any OpenAI-compatible server.
"""

from __future__ import annotations

import base64
import json
import logging
from collections.abc import AsyncGenerator
from typing import Any

from eventide import types
from eventide.errors import UsageError
from eventide.models._connector_support import (
    CallIdAssigner,
    Classifier,
    OpenedStream,
    ProviderFailure,
    code_part_as_text,
    fill_missing_call_ids,
    guarded_stream,
    json_arguments,
    openai_tool_choice,
    partial_text_response,
    reject_builtin_tools,
    response_dict,
    response_payload,
)
from eventide.models.llm_request import LlmRequest
from eventide.models.llm_response import LlmResponse

__all__ = [
    "ChatStreamAccumulator",
    "chat_request",
    "parse_chat_completion",
    "stream_chat_completion",
]

_LOG = logging.getLogger("eventide.models")

_FINISH_REASONS = {
    "stop": "STOP",
    "tool_calls": "STOP",
    "function_call": "STOP",
    "length": "MAX_TOKENS",
    "content_filter": "SAFETY",
}


def chat_request(
    llm_request: LlmRequest, *, model: str, max_tokens_field: str = "max_completion_tokens"
) -> dict[str, Any]:
    """The Chat Completions request body for ``llm_request`` (without ``stream``).

    Args:
        llm_request: the request to translate.
        model: the model name to send.
        max_tokens_field: ``max_completion_tokens`` (OpenAI) or ``max_tokens`` (older
            OpenAI-compatible servers).
    """
    reject_builtin_tools(llm_request, provider="Chat Completions")
    config = llm_request.config
    body: dict[str, Any] = {"model": model, "messages": chat_messages(llm_request)}
    tools = [
        {
            "type": "function",
            "function": _function_spec(declaration),
        }
        for tool in config.tools or ()
        for declaration in tool.function_declarations or ()
    ]
    if tools:
        body["tools"] = tools
        choice = openai_tool_choice(
            config.tool_config,
            function_ref=lambda name: {"type": "function", "function": {"name": name}},
            allowed=lambda refs: {
                "type": "allowed_tools",
                "allowed_tools": {"mode": "required", "tools": refs},
            },
        )
        if choice is not None:
            body["tool_choice"] = choice
    if config.response_json_schema is not None:
        body["response_format"] = {
            "type": "json_schema",
            "json_schema": {
                "name": _schema_name(config.response_json_schema),
                "schema": config.response_json_schema,
            },
        }
    elif config.response_mime_type == "application/json":
        body["response_format"] = {"type": "json_object"}
    settings = {
        "temperature": config.temperature,
        "top_p": config.top_p,
        max_tokens_field: config.max_output_tokens,
        "stop": config.stop_sequences,
        "seed": config.seed,
        "presence_penalty": config.presence_penalty,
        "frequency_penalty": config.frequency_penalty,
        "n": config.candidate_count,
    }
    body.update({key: value for key, value in settings.items() if value is not None})
    return body


def chat_messages(llm_request: LlmRequest) -> list[dict[str, Any]]:
    """The ``messages`` list: system instruction, then the history in order."""
    messages: list[dict[str, Any]] = []
    if llm_request.config.system_instruction:
        messages.append({"role": "system", "content": llm_request.config.system_instruction})
    ids = CallIdAssigner()
    for content in llm_request.contents:
        parts = content.parts or []
        if content.role == "model":
            message = _assistant_message(parts, ids)
            if message is not None:
                messages.append(message)
            continue
        user_content: list[dict[str, Any]] = []
        for part in parts:
            if part.function_response is not None:
                messages.append(
                    {
                        "role": "tool",
                        "tool_call_id": ids.response_id(part.function_response),
                        "content": response_payload(part.function_response),
                    }
                )
            else:
                item = _user_item(part)
                if item is not None:
                    user_content.append(item)
        if user_content:
            if len(user_content) == 1 and user_content[0]["type"] == "text":
                messages.append({"role": "user", "content": user_content[0]["text"]})
            else:
                messages.append({"role": "user", "content": user_content})
    return messages


def _assistant_message(parts: list[types.Part], ids: CallIdAssigner) -> dict[str, Any] | None:
    texts: list[str] = []
    calls: list[dict[str, Any]] = []
    for part in parts:
        if part.function_call is not None:
            call = part.function_call
            calls.append(
                {
                    "id": ids.call_id(call),
                    "type": "function",
                    "function": {
                        "name": call.name or "",
                        "arguments": json.dumps(call.args or {}, ensure_ascii=False),
                    },
                }
            )
        elif part.text is not None and not part.thought:
            # Chat Completions takes no reasoning back, so thoughts stay out of the history.
            texts.append(part.text)
        else:
            rendered = code_part_as_text(part)
            if rendered is not None:
                texts.append(rendered)
    if not texts and not calls:
        return None
    # "" rather than null next to tool calls: llama.cpp's and Ollama's servers refuse null,
    # and every OpenAI-compatible server (and OpenAI) accepts "".
    message: dict[str, Any] = {"role": "assistant", "content": "".join(texts)}
    if calls:
        message["tool_calls"] = calls
    return message


def _user_item(part: types.Part) -> dict[str, Any] | None:
    if part.text is not None:
        return {"type": "text", "text": part.text}
    if part.inline_data is not None and part.inline_data.data is not None:
        mime = part.inline_data.mime_type or "application/octet-stream"
        encoded = base64.b64encode(part.inline_data.data).decode("ascii")
        if mime.startswith("image/"):
            return {"type": "image_url", "image_url": {"url": f"data:{mime};base64,{encoded}"}}
        if mime in {"audio/wav", "audio/x-wav", "audio/mpeg", "audio/mp3"}:
            fmt = "mp3" if "mp" in mime else "wav"
            return {"type": "input_audio", "input_audio": {"data": encoded, "format": fmt}}
        return {
            "type": "file",
            "file": {
                "filename": part.inline_data.display_name or "file",
                "file_data": f"data:{mime};base64,{encoded}",
            },
        }
    if part.file_data is not None and part.file_data.file_uri:
        uri = part.file_data.file_uri
        mime = part.file_data.mime_type or ""
        if mime.startswith("image/") or not mime:
            return {"type": "image_url", "image_url": {"url": uri}}
        if uri.startswith("file-"):
            return {"type": "file", "file": {"file_id": uri}}
        raise UsageError(
            f"Chat Completions cannot fetch the {mime} file {uri!r} by URI: only images can "
            "be sent as URLs. Send the bytes inline (Part.from_bytes) or upload it and pass "
            "its file id ('file-...')."
        )
    rendered = code_part_as_text(part)
    if rendered is not None:
        return {"type": "text", "text": rendered}
    return None


def _function_spec(declaration: types.FunctionDeclaration) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "name": declaration.name,
        "parameters": declaration.parameters_json_schema or {"type": "object", "properties": {}},
    }
    if declaration.description:
        spec["description"] = declaration.description
    return spec


def _schema_name(schema: dict[str, Any]) -> str:
    title = schema.get("title")
    if isinstance(title, str) and title.replace("_", "").replace("-", "").isalnum():
        return title[:64]
    return "response"


def parse_chat_completion(data: dict[str, Any], *, calls_before: int) -> LlmResponse:
    """An :class:`LlmResponse` from a Chat Completions response body.

    Args:
        data: the response as JSON data.
        calls_before: function calls already in the history (numbers missing call ids).
    """
    choices = data.get("choices") or []
    if not choices:
        return LlmResponse(
            error_code="EMPTY_RESPONSE",
            error_message="The model returned no choices.",
            usage_metadata=_usage(data.get("usage")),
            turn_complete=True,
        )
    choice = choices[0]
    message = choice.get("message") or {}
    parts: list[types.Part] = []
    reasoning = message.get("reasoning_content") or message.get("reasoning")
    if isinstance(reasoning, str) and reasoning:
        parts.append(types.Part(text=reasoning, thought=True))
    if message.get("content"):
        parts.append(types.Part(text=message["content"]))
    problems: list[str] = []
    for tool_call in message.get("tool_calls") or ():
        function = tool_call.get("function") or {}
        args, problem = json_arguments(function.get("arguments"))
        if problem:
            problems.append(f"{function.get('name')}: {problem}")
        parts.append(
            types.Part(
                function_call=types.FunctionCall(
                    id=tool_call.get("id") or None, name=function.get("name"), args=args
                )
            )
        )
    fill_missing_call_ids(parts, calls_before=calls_before)
    raw_finish = choice.get("finish_reason")
    finish = _FINISH_REASONS.get(raw_finish, "OTHER") if raw_finish else None
    response = LlmResponse(
        content=types.Content(role="model", parts=parts) if parts else None,
        finish_reason=finish,
        usage_metadata=_usage(data.get("usage")),
        model_version=data.get("model"),
        turn_complete=True,
    )
    if message.get("refusal"):
        response.error_code = "SAFETY"
        response.error_message = f"The model refused: {message['refusal']}"
    elif finish == "SAFETY":
        response.error_code = "SAFETY"
        response.error_message = "The provider's content filter stopped the response."
    elif problems:
        response.error_code = "MALFORMED_FUNCTION_CALL"
        response.error_message = "; ".join(problems)
    return response


def _usage(usage: Any) -> types.UsageMetadata | None:
    if not isinstance(usage, dict):
        return None
    prompt_details = usage.get("prompt_tokens_details") or {}
    completion_details = usage.get("completion_tokens_details") or {}
    return types.UsageMetadata(
        prompt_token_count=usage.get("prompt_tokens"),
        candidates_token_count=usage.get("completion_tokens"),
        total_token_count=usage.get("total_tokens"),
        cached_content_token_count=prompt_details.get("cached_tokens"),
        thoughts_token_count=completion_details.get("reasoning_tokens"),
    )


class ChatStreamAccumulator:
    """Rebuilds a complete Chat Completions response from its streamed chunks.

    Tool-call arguments arrive as string fragments keyed by the call's ``index``; they are
    joined here and parsed only once the stream ends, so no half-built call escapes.
    """

    def __init__(self) -> None:
        self._text: list[str] = []
        self._reasoning: list[str] = []
        self._calls: dict[int, dict[str, Any]] = {}
        self._finish: str | None = None
        self._usage: dict[str, Any] | None = None
        self._model: str | None = None
        self._refusal: list[str] = []

    def add(self, chunk: dict[str, Any]) -> list[tuple[str, bool]]:
        """Take one chunk; return the ``(text, is_thought)`` deltas to stream on."""
        deltas: list[tuple[str, bool]] = []
        self._model = chunk.get("model") or self._model
        if isinstance(chunk.get("usage"), dict):
            self._usage = chunk["usage"]
        for choice in chunk.get("choices") or ():
            if choice.get("index", 0) != 0:
                continue
            delta = choice.get("delta") or {}
            reasoning = delta.get("reasoning_content") or delta.get("reasoning")
            if isinstance(reasoning, str) and reasoning:
                self._reasoning.append(reasoning)
                deltas.append((reasoning, True))
            if delta.get("content"):
                self._text.append(delta["content"])
                deltas.append((delta["content"], False))
            if delta.get("refusal"):
                self._refusal.append(delta["refusal"])
            for fragment in delta.get("tool_calls") or ():
                slot = self._calls.setdefault(
                    fragment.get("index", len(self._calls)),
                    {"id": None, "name": "", "arguments": []},
                )
                slot["id"] = fragment.get("id") or slot["id"]
                function = fragment.get("function") or {}
                if function.get("name"):
                    slot["name"] += function["name"]
                if function.get("arguments"):
                    slot["arguments"].append(function["arguments"])
            if choice.get("finish_reason"):
                self._finish = choice["finish_reason"]
        return deltas

    @property
    def finished(self) -> bool:
        """Whether a chunk carried a finish reason (a stream cut short never does)."""
        return self._finish is not None

    @property
    def complete(self) -> bool:
        """Whether what arrived is usable without a finish reason: some text or tool calls,
        and every tool call's arguments whole JSON."""
        if not self._text and not self._calls:
            return False
        for slot in self._calls.values():
            if not slot["name"] or json_arguments("".join(slot["arguments"]))[1] is not None:
                return False
        return True

    def completion(self) -> dict[str, Any]:
        """The aggregated response, shaped like a non-streaming Chat Completions body."""
        message: dict[str, Any] = {"role": "assistant", "content": "".join(self._text) or None}
        if self._reasoning:
            message["reasoning_content"] = "".join(self._reasoning)
        if self._refusal:
            message["refusal"] = "".join(self._refusal)
        if self._calls:
            message["tool_calls"] = [
                {
                    "id": slot["id"],
                    "type": "function",
                    "function": {"name": slot["name"], "arguments": "".join(slot["arguments"])},
                }
                for _, slot in sorted(self._calls.items())
            ]
        data: dict[str, Any] = {
            "choices": [{"index": 0, "message": message, "finish_reason": self._finish}],
        }
        if self._model:
            data["model"] = self._model
        if self._usage is not None:
            data["usage"] = self._usage
        return data


async def stream_chat_completion(
    opened: OpenedStream[Any],
    calls_before: int,
    classify: Classifier,
) -> AsyncGenerator[LlmResponse, None]:
    """Partial text responses as a Chat Completions stream arrives, then the complete one
    (shared by the OpenAI and LiteLLM connectors, which differ only in ``classify``)."""
    accumulator = ChatStreamAccumulator()
    async for chunk in guarded_stream(opened, classify=classify):
        if isinstance(chunk, ProviderFailure):
            yield chunk.to_response()
            return
        for text, thought in accumulator.add(response_dict(chunk)):
            yield partial_text_response(text, thought=thought)
    if not accumulator.finished:
        if not accumulator.complete:
            yield ProviderFailure(
                code="MALFORMED_STREAM",
                message="The stream ended without a finish reason and without complete "
                "content (cut short?); retry the turn.",
            ).to_response()
            return
        # llama.cpp's server ends streams this way when tool_choice is set; what arrived
        # is whole, so it is used.
        _LOG.warning(
            "The model's stream ended without a finish reason; its content is complete, "
            "so it is used as the answer."
        )
    yield parse_chat_completion(accumulator.completion(), calls_before=calls_before)
