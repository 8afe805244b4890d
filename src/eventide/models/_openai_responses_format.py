"""The OpenAI Responses API wire format, without the SDK (requests and responses as JSON)."""

from __future__ import annotations

import base64
import json
from typing import Any

from eventide import types
from eventide.models._history import (
    CallIdAssigner,
    code_part_as_text,
    reject_builtin_tools,
    response_payload,
)
from eventide.models._json import JsonObject, integer, obj, objects, string
from eventide.models._openai_chat_format import openai_tool_choice
from eventide.models._stream_assembler import StreamAssembler, partial_response, token_usage
from eventide.models.llm_request import LlmRequest
from eventide.models.llm_response import LlmResponse

__all__ = ["feed_responses_event", "read_responses_response", "responses_request"]


def responses_request(llm_request: LlmRequest, *, model: str) -> dict[str, Any]:
    """The Responses API request body for ``llm_request`` (without ``stream``).

    ``stop_sequences`` and ``seed`` have no Responses API equivalent and are not sent.
    """
    reject_builtin_tools(llm_request, provider="the OpenAI Responses API connector")
    config = llm_request.config
    body: dict[str, Any] = {"model": model, "input": _input_items(llm_request)}
    if config.system_instruction:
        body["instructions"] = config.system_instruction
    tools: list[dict[str, Any]] = []
    for tool in config.tools or ():
        for declaration in tool.function_declarations or ():
            spec: dict[str, Any] = {
                "type": "function",
                "name": declaration.name,
                "parameters": declaration.parameters_json_schema
                or {"type": "object", "properties": {}},
                "strict": False,
            }
            if declaration.description:
                spec["description"] = declaration.description
            tools.append(spec)
    if tools:
        body["tools"] = tools
        choice = openai_tool_choice(
            config.tool_config,
            declared=[
                declaration.name or ""
                for tool in config.tools or ()
                for declaration in tool.function_declarations or ()
            ],
            function_ref=lambda name: {"type": "function", "name": name},
            allowed=lambda refs: {"type": "allowed_tools", "mode": "required", "tools": refs},
        )
        if choice is not None:
            body["tool_choice"] = choice
    if config.response_json_schema is not None:
        body["text"] = {
            "format": {
                "type": "json_schema",
                "name": "response",
                "schema": config.response_json_schema,
                "strict": False,
            }
        }
    elif config.response_mime_type == "application/json":
        body["text"] = {"format": {"type": "json_object"}}
    if config.thinking_budget is not None and config.thinking_budget > 0:
        effort = (
            "low"
            if config.thinking_budget <= 2048
            else "medium"
            if config.thinking_budget <= 16384
            else "high"
        )
        body["reasoning"] = {"effort": effort, "summary": "auto"}
    settings = {
        "temperature": config.temperature,
        "top_p": config.top_p,
        "max_output_tokens": config.max_output_tokens,
    }
    body.update({key: value for key, value in settings.items() if value is not None})
    return body


def _input_items(llm_request: LlmRequest) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = []
    ids = CallIdAssigner()
    for content in llm_request.contents:
        role = "assistant" if content.role == "model" else "user"
        pending: list[dict[str, Any]] = []
        for part in content.parts or ():
            if part.function_call is None and part.function_response is None:
                if not part.thought:
                    # Reasoning items can only be replayed with their encrypted ids: skipped.
                    item = _content_item(part, assistant=role == "assistant")
                    if item is not None:
                        pending.append(item)
                continue
            if pending:
                items.append({"role": role, "content": pending})
                pending = []
            if part.function_call is not None:
                call = part.function_call
                items.append(
                    {
                        "type": "function_call",
                        "call_id": ids.call_id(call),
                        "name": call.name or "",
                        "arguments": json.dumps(call.args or {}, ensure_ascii=False),
                    }
                )
            elif part.function_response is not None:
                items.append(
                    {
                        "type": "function_call_output",
                        "call_id": ids.response_id(part.function_response),
                        "output": response_payload(part.function_response),
                    }
                )
        if pending:
            items.append({"role": role, "content": pending})
    return items


def _content_item(part: types.Part, *, assistant: bool) -> dict[str, Any] | None:
    text = part.text if part.text is not None else code_part_as_text(part)
    if text is not None:
        return {"type": "output_text" if assistant else "input_text", "text": text}
    if part.inline_data is not None and part.inline_data.data is not None:
        mime = part.inline_data.mime_type or "application/octet-stream"
        url = f"data:{mime};base64,{base64.b64encode(part.inline_data.data).decode('ascii')}"
        if mime.startswith("image/"):
            return {"type": "input_image", "image_url": url}
        return {
            "type": "input_file",
            "filename": part.inline_data.display_name or "file",
            "file_data": url,
        }
    if part.file_data is not None and part.file_data.file_uri:
        uri = part.file_data.file_uri
        if (part.file_data.mime_type or "image/").startswith("image/"):
            return {"type": "input_image", "image_url": uri}
        if uri.startswith("file-"):
            return {"type": "input_file", "file_id": uri}
        return {"type": "input_file", "file_url": uri}
    return None


def read_responses_response(data: JsonObject, assembler: StreamAssembler) -> None:
    """Feed a whole Responses API response object into ``assembler``."""
    status = string(data.get("status"))
    if status == "failed" or isinstance(data.get("error"), dict):
        details = obj(data.get("error"))
        assembler.fail(
            str(details.get("code") or "FAILED"),
            string(details.get("message")) or "The response failed.",
        )
    refusals: list[str] = []
    for item in objects(data.get("output")):
        kind = item.get("type")
        if kind == "reasoning":
            pieces = objects(item.get("summary")) + objects(item.get("content"))
            assembler.text("".join(string(p.get("text")) or "" for p in pieces), thought=True)
        elif kind == "message":
            for piece in objects(item.get("content")):
                if piece.get("type") == "output_text":
                    assembler.text(string(piece.get("text")) or "")
                elif piece.get("type") == "refusal":
                    refusals.append(string(piece.get("refusal")) or "")
        elif kind == "function_call":
            assembler.tool_call(
                None,
                call_id=string(item.get("call_id")),
                name=string(item.get("name")),
                arguments=string(item.get("arguments")),
            )
    incomplete = string(obj(data.get("incomplete_details")).get("reason"))
    finish = {"completed": "STOP", "incomplete": "MAX_TOKENS"}.get(status or "")
    if incomplete == "content_filter":
        finish = "SAFETY"
    assembler.finish(finish)
    if refusals:
        assembler.fail("SAFETY", "The model refused: " + " ".join(refusals))
    elif finish == "SAFETY":
        assembler.fail("SAFETY", "The provider's content filter stopped the response.")
    usage = obj(data.get("usage"))
    if usage:
        assembler.usage = token_usage(
            prompt=integer(usage.get("input_tokens")),
            output=integer(usage.get("output_tokens")),
            total=integer(usage.get("total_tokens")),
            cached=integer(obj(usage.get("input_tokens_details")).get("cached_tokens")),
            thoughts=integer(obj(usage.get("output_tokens_details")).get("reasoning_tokens")),
        )
    assembler.model_version = string(data.get("model"))


_DELTAS = {
    "response.output_text.delta": False,
    "response.reasoning_summary_text.delta": True,
    "response.reasoning_text.delta": True,
}


def feed_responses_event(data: JsonObject, assembler: StreamAssembler) -> list[LlmResponse]:
    """Feed one Responses API stream event; return the partials to stream.

    Deltas are streamed as they come; the closing event carries the whole response, the
    same object a non-streamed call returns, so both paths end in the same response.
    """
    kind = string(data.get("type")) or ""
    delta = string(data.get("delta"))
    if kind in _DELTAS:
        if not delta:
            return []
        # Deltas are streamed, not assembled (the closing event carries the whole
        # response): note that content came, so a stream cut before it is not "empty".
        assembler.scratch["streamed"] = True
        return [partial_response(delta, thought=_DELTAS[kind])]
    if kind in {"response.completed", "response.incomplete", "response.failed"}:
        whole = StreamAssembler(calls_before=lambda: assembler.calls_before, partials=False)
        read_responses_response(obj(data.get("response")), whole)
        assembler.end_with(whole.final())
    elif kind == "error":
        assembler.end_with(
            LlmResponse(
                error_code=str(data.get("code") or "STREAM_ERROR"),
                error_message=string(data.get("message"))
                or "The provider reported a stream error.",
                turn_complete=True,
            )
        )
    return []
