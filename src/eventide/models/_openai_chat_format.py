"""The OpenAI Chat Completions wire format, without the SDK.

Shared by the OpenAI connector and the LiteLLM connector (LiteLLM speaks this format to
every provider). Requests are built as plain JSON data and responses are read as plain JSON
data, so one translation serves both SDKs and any OpenAI-compatible server.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Callable
from typing import Any, cast

from eventide import types
from eventide._fastpath import construct_trusted
from eventide.errors import UsageError
from eventide.models._history import (
    CallIdAssigner,
    code_part_as_text,
    reject_builtin_tools,
    response_payload,
)
from eventide.models._json import JsonObject, integer, obj, objects, string
from eventide.models._stream_assembler import StreamAssembler, token_usage
from eventide.models.llm_request import Conversation, LlmRequest
from eventide.models.llm_response import LlmResponse

__all__ = [
    "chat_request",
    "feed_chat_chunk",
    "openai_tool_choice",
    "read_chat_completion",
]

_FINISH_REASONS = {
    "stop": "STOP",
    "tool_calls": "STOP",
    "function_call": "STOP",
    "length": "MAX_TOKENS",
    "content_filter": "SAFETY",
}


def chat_request(
    llm_request: LlmRequest,
    *,
    model: str,
    max_tokens_field: str = "max_completion_tokens",
    reuse_history: bool = False,
) -> dict[str, Any]:
    """The Chat Completions request body for ``llm_request`` (without ``stream``).

    Args:
        llm_request: the request to translate.
        model: the model name to send.
        max_tokens_field: ``max_completion_tokens`` (OpenAI) or ``max_tokens`` (older
            OpenAI-compatible servers).
        reuse_history: reuse and keep the messages of the conversation's earlier contents
            (see :func:`chat_messages`); only for a client that never changes the messages
            it is given (the openai SDK serializes them as they are).
    """
    reject_builtin_tools(llm_request, provider="Chat Completions")
    config = llm_request.config
    messages = chat_messages(llm_request, reuse_history=reuse_history)
    body: dict[str, Any] = {"model": model, "messages": messages}
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
            declared=[
                declaration.name or ""
                for tool in config.tools or ()
                for declaration in tool.function_declarations or ()
            ],
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


def chat_messages(llm_request: LlmRequest, *, reuse_history: bool = False) -> list[dict[str, Any]]:
    """The ``messages`` list: system instruction, then the history in order.

    With ``reuse_history``, when the contents are the conversation as the flow's cache built it (a
    :class:`~eventide.models.llm_request.Conversation`, ``history_unchanged``), the messages
    made of its first contents on an earlier call are reused from its ``translations`` and
    only the contents after them are translated; the cache guarantees those first contents
    are the same, unchanged.
    """
    messages: list[dict[str, Any]] = []
    if llm_request.config.system_instruction:
        messages.append({"role": "system", "content": llm_request.config.system_instruction})
    contents = llm_request.contents
    if (
        not reuse_history
        or not llm_request.history_unchanged
        or not isinstance(contents, Conversation)
    ):
        ids = CallIdAssigner()
        for content in contents:
            _add_messages(messages, content, ids)
        return messages
    translations = contents.translations
    done: _Translated | None = translations.get(_FORMAT)
    head = len(messages)  # the system message's, not the conversation's
    if done is not None and done.count <= len(contents):
        start, ids = done.count, done.ids.copy()
        messages.extend(done.messages)
    else:
        start, ids = 0, CallIdAssigner()
    for index in range(start, len(contents)):
        _add_messages(messages, contents[index], ids)
    translations[_FORMAT] = _Translated(len(contents), messages[head:], ids.copy())
    return messages


class _Translated:
    """The messages of a conversation's first ``count`` contents, and the call ids' state
    after them (kept in :attr:`Conversation.translations <eventide.models.llm_request.
    Conversation>` under ``chat_completions``)."""

    __slots__ = ("count", "ids", "messages")

    def __init__(self, count: int, messages: list[dict[str, Any]], ids: CallIdAssigner) -> None:
        self.count = count
        self.messages = messages
        self.ids = ids


_FORMAT = "chat_completions"


def _add_messages(
    messages: list[dict[str, Any]], content: types.Content, ids: CallIdAssigner
) -> None:
    """Append the messages of one content to ``messages``."""
    parts = content.parts or []
    if content.role == "model":
        if len(parts) == 1:
            part = parts[0]
            if part.text is not None and part.function_call is None and not part.thought:
                # The model's plain text answer, the other most common content: what
                # _assistant_message makes of it, without its lists and join.
                messages.append({"role": "assistant", "content": part.text})
                return
        message = _assistant_message(parts, ids)
        if message is not None:
            messages.append(message)
        return
    if len(parts) == 1:
        part = parts[0]
        if part.text is not None and part.function_response is None:
            # A user's plain text message, the most common content: sent as a string
            # (what the loop below makes of it too), without building its item first.
            messages.append({"role": "user", "content": part.text})
            return
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


def openai_tool_choice(
    tool_config: types.ToolConfig | None,
    *,
    declared: list[str],
    function_ref: Callable[[str], JsonObject],
    allowed: Callable[[list[JsonObject]], JsonObject],
) -> str | JsonObject | None:
    """An OpenAI ``tool_choice`` for a ``ToolConfig`` (None: leave it to the API).

    Chat Completions and the Responses API spell a named function and a list of allowed
    tools differently; ``function_ref`` and ``allowed`` give those shapes. ``ANY`` with a
    single declared function names it: the same rule, and servers that cannot do
    ``"required"`` (llama.cpp's) can force a named function.
    """
    if tool_config is None or tool_config.mode is None:
        return None
    if tool_config.mode == "NONE":
        return "none"
    if tool_config.mode == "AUTO":
        return "auto"
    names = tool_config.allowed_function_names or []
    if len(names) == 1:
        return function_ref(names[0])
    if names:
        return allowed([function_ref(n) for n in names])
    if len(declared) == 1:
        return function_ref(declared[0])
    return "required"


def read_chat_completion(data: JsonObject, assembler: StreamAssembler) -> None:
    """Feed a whole Chat Completions response body into ``assembler``."""
    _read_common(data, assembler)
    choices = objects(data.get("choices"))
    if not choices:
        assembler.end_with(
            LlmResponse(
                error_code="EMPTY_RESPONSE",
                error_message="The model returned no choices.",
                usage_metadata=assembler.usage,
                turn_complete=True,
            )
        )
        return
    choice = choices[0]
    message = obj(choice.get("message"))
    raw_finish = string(choice.get("finish_reason"))
    text = _plain_text(message)
    if text is not None:
        finish = _FINISH_REASONS.get(raw_finish, "OTHER") if raw_finish else None
        if finish != "SAFETY":
            # The usual answer, text alone: the response the assembler would build from it,
            # built directly.
            # (Values of the fields' types, read above: taken without validation.)
            part = construct_trusted(types.Part, {"text": text})
            content = construct_trusted(types.Content, {"role": "model", "parts": [part]})
            assembler.end_with(
                construct_trusted(
                    LlmResponse,
                    {
                        "content": content,
                        "finish_reason": finish,
                        "usage_metadata": assembler.usage,
                        "grounding_metadata": assembler.grounding_metadata,
                        "model_version": assembler.model_version,
                        "turn_complete": True,
                    },
                )
            )
            return
    _read_choice(message, raw_finish, assembler)


def _read_choice(message: JsonObject, raw_finish: str | None, assembler: StreamAssembler) -> None:
    """Feed a whole response's message and finish reason into ``assembler``, part by part."""
    _read_message(message, assembler, whole=True)
    _read_finish(raw_finish, assembler)
    # A finish reason may be missing from a whole response; the response is complete.
    assembler.finish(None)


def _plain_text(message: JsonObject) -> str | None:
    """The message's text when that is all it holds (no reasoning, refusal or tool calls)."""
    text = message.get("content")
    if not text or not isinstance(text, str):
        return None
    for key in _NOT_PLAIN:
        if message.get(key):
            return None
    return text


_NOT_PLAIN = ("reasoning_content", "reasoning", "refusal", "tool_calls")


def feed_chat_chunk(data: JsonObject, assembler: StreamAssembler) -> list[LlmResponse]:
    """Feed one streamed chunk into ``assembler``; return the partials to stream."""
    _read_common(data, assembler)
    partials: list[LlmResponse] = []
    for choice in objects(data.get("choices")):
        if (integer(choice.get("index")) or 0) != 0:
            continue
        partials.extend(_read_message(obj(choice.get("delta")), assembler, whole=False))
        finish = string(choice.get("finish_reason"))
        if finish:
            _read_finish(finish, assembler)
    return partials


def _read_common(data: JsonObject, assembler: StreamAssembler) -> None:
    # Read on every response and stream chunk: absent fields cost a lookup, not a helper call.
    model = data.get("model")
    if model and isinstance(model, str):
        assembler.model_version = model
    usage = data.get("usage")
    if usage and isinstance(usage, dict):
        usage = cast(JsonObject, usage)
        prompt_details = usage.get("prompt_tokens_details")
        output_details = usage.get("completion_tokens_details")
        assembler.usage = token_usage(
            prompt=integer(usage.get("prompt_tokens")),
            output=integer(usage.get("completion_tokens")),
            total=integer(usage.get("total_tokens")),
            cached=integer(obj(prompt_details).get("cached_tokens")) if prompt_details else None,
            thoughts=integer(obj(output_details).get("reasoning_tokens"))
            if output_details
            else None,
        )


def _read_message(
    message: JsonObject, assembler: StreamAssembler, *, whole: bool
) -> list[LlmResponse]:
    partials: list[LlmResponse] = []
    # Reasoning text: DeepSeek, Qwen and vLLM send reasoning_content, Ollama reasoning.
    reasoning = string(message.get("reasoning_content")) or string(message.get("reasoning"))
    for text, thought in ((reasoning, True), (message.get("content"), False)):
        if text and isinstance(text, str):
            partial = assembler.text(text, thought=thought)
            if partial is not None:
                partials.append(partial)
    refusal = message.get("refusal")
    if refusal and isinstance(refusal, str):
        assembler.fail("SAFETY", f"The model refused: {refusal}")
    tool_calls = message.get("tool_calls")
    if not tool_calls:
        return partials
    for position, call in enumerate(objects(tool_calls)):
        function = obj(call.get("function"))
        # A streamed fragment names its call by index; Ollama sends whole calls, some
        # servers without an index.
        key = position if whole else integer(call.get("index"))
        assembler.tool_call(
            key,
            call_id=string(call.get("id")),
            name=string(function.get("name")),
            arguments=string(function.get("arguments")),
        )
    return partials


def _read_finish(raw: str | None, assembler: StreamAssembler) -> None:
    if not raw:
        return
    finish = _FINISH_REASONS.get(raw, "OTHER")
    assembler.finish(finish)
    if finish == "SAFETY":
        assembler.fail("SAFETY", "The provider's content filter stopped the response.")
