"""The OpenAI Responses API wire format, without the SDK (requests and responses as JSON)."""

from __future__ import annotations

import base64
import json
from typing import Any

from eventide import types
from eventide.models._connector_support import (
    CallIdAssigner,
    code_part_as_text,
    fill_missing_call_ids,
    json_arguments,
    openai_tool_choice,
    reject_builtin_tools,
    response_payload,
)
from eventide.models.llm_request import LlmRequest
from eventide.models.llm_response import LlmResponse

__all__ = ["parse_responses_response", "responses_request"]


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


def parse_responses_response(data: dict[str, Any], *, calls_before: int) -> LlmResponse:
    """An :class:`LlmResponse` from a Responses API response object."""
    parts: list[types.Part] = []
    refusals: list[str] = []
    problems: list[str] = []
    for item in data.get("output") or ():
        kind = item.get("type")
        if kind == "reasoning":
            texts = [s.get("text", "") for s in item.get("summary") or ()]
            texts += [c.get("text", "") for c in item.get("content") or ()]
            text = "".join(texts)
            if text:
                parts.append(types.Part(text=text, thought=True))
        elif kind == "message":
            for piece in item.get("content") or ():
                if piece.get("type") == "output_text":
                    parts.append(types.Part(text=piece.get("text", "")))
                elif piece.get("type") == "refusal":
                    refusals.append(piece.get("refusal", ""))
        elif kind == "function_call":
            args, problem = json_arguments(item.get("arguments"))
            if problem:
                problems.append(f"{item.get('name')}: {problem}")
            parts.append(
                types.Part(
                    function_call=types.FunctionCall(
                        id=item.get("call_id") or None, name=item.get("name"), args=args
                    )
                )
            )
    fill_missing_call_ids(parts, calls_before=calls_before)
    status = data.get("status")
    incomplete = (data.get("incomplete_details") or {}).get("reason")
    finish = {"completed": "STOP", "incomplete": "MAX_TOKENS"}.get(status or "", None)
    if incomplete == "content_filter":
        finish = "SAFETY"
    response = LlmResponse(
        content=types.Content(role="model", parts=parts) if parts else None,
        finish_reason=finish,
        usage_metadata=_usage(data.get("usage")),
        model_version=data.get("model"),
        turn_complete=True,
    )
    error = data.get("error")
    if status == "failed" or isinstance(error, dict):
        error = error or {}
        response.error_code = str(error.get("code") or "FAILED")
        response.error_message = error.get("message") or "The response failed."
    elif refusals or finish == "SAFETY":
        response.error_code = "SAFETY"
        response.error_message = (
            "The model refused: " + " ".join(refusals)
            if refusals
            else ("The provider's content filter stopped the response.")
        )
    elif problems:
        response.error_code = "MALFORMED_FUNCTION_CALL"
        response.error_message = "; ".join(problems)
    return response


def _usage(usage: Any) -> types.UsageMetadata | None:
    if not isinstance(usage, dict):
        return None
    return types.UsageMetadata(
        prompt_token_count=usage.get("input_tokens"),
        candidates_token_count=usage.get("output_tokens"),
        total_token_count=usage.get("total_tokens"),
        cached_content_token_count=(usage.get("input_tokens_details") or {}).get("cached_tokens"),
        thoughts_token_count=(usage.get("output_tokens_details") or {}).get("reasoning_tokens"),
    )
