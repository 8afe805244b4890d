"""Chat Completions messages and Responses input items, read into one form: a list of
:class:`ConversationItem` (who said it, as Eventide parts).

Rules, the same for both APIs:

- ``system`` and ``developer`` messages (and ``instructions``) are read and not used: the
  agent's own instructions govern it.
- The turn's new input is what follows the last assistant item (an assistant message, a tool
  call): the user messages' parts and the tool results, in order, as one user message whose
  tool results are ``FunctionResponse`` parts answering the calls by id.
- The items before it are the conversation so far, imported into a session that does not
  hold it yet (see :mod:`eventide.openai_compat.sessions`).

Text, images (a ``data:`` URL inline, any other URL by reference) and files given as base64
are read; any other content part is refused with a 400 naming it.
"""

from __future__ import annotations

import base64
import binascii
import json
from dataclasses import dataclass
from typing import Any, Literal, cast

from eventide import types
from eventide.openai_compat.openai_errors import openai_error
from eventide.openai_compat.request_fields import as_list, as_object

__all__ = [
    "ConversationItem",
    "chat_messages_to_items",
    "response_input_to_items",
    "split_new_input",
]

Role = Literal["user", "assistant", "tool", "system"]


@dataclass(slots=True)
class ConversationItem:
    """One message of the conversation: ``tool`` items hold one ``FunctionResponse`` part,
    ``assistant`` items text and ``FunctionCall`` parts."""

    role: Role
    parts: list[types.Part]


def chat_messages_to_items(messages: list[Any]) -> list[ConversationItem]:
    """Chat Completions ``messages`` as conversation items.

    Raises:
        ProtocolInputError: a message is not one the API defines, or holds a part not read here.
    """
    items: list[ConversationItem] = []
    names: dict[str, str] = {}
    for index, message in enumerate(messages):
        where = f"messages[{index}]"
        if not isinstance(message, dict):
            raise openai_error(400, f"{where} must be an object.", param=where)
        data = cast("dict[str, Any]", message)
        role = data.get("role")
        content = data.get("content")
        if role in ("system", "developer"):
            items.append(ConversationItem("system", []))
        elif role == "user":
            items.append(ConversationItem("user", _content_parts(content, f"{where}.content")))
        elif role == "assistant":
            parts = _content_parts(content, f"{where}.content") if content is not None else []
            for position, call in enumerate(_list(data.get("tool_calls"), f"{where}.tool_calls")):
                parts.append(_chat_tool_call(call, f"{where}.tool_calls[{position}]", names))
            items.append(ConversationItem("assistant", parts))
        elif role == "tool":
            call_id = data.get("tool_call_id")
            if not isinstance(call_id, str) or not call_id:
                raise openai_error(
                    400,
                    f"{where} is a tool message without a tool_call_id: give the id of the "
                    "call it answers.",
                    param=f"{where}.tool_call_id",
                )
            output = _text_of(content, f"{where}.content")
            items.append(ConversationItem("tool", [_answer(call_id, names.get(call_id), output)]))
        else:
            raise openai_error(
                400,
                f"{where}.role is {role!r}: use 'system', 'developer', 'user', 'assistant' or "
                "'tool'.",
                param=f"{where}.role",
            )
    return items


def response_input_to_items(value: Any) -> list[ConversationItem]:
    """Responses ``input`` (a string or a list of items) as conversation items.

    Raises:
        ProtocolInputError: an item is not one the API defines, or holds a part not read here.
    """
    if isinstance(value, str):
        return [ConversationItem("user", [types.Part(text=value)])]
    items: list[ConversationItem] = []
    names: dict[str, str] = {}
    for index, raw in enumerate(_list(value, "input")):
        where = f"input[{index}]"
        if not isinstance(raw, dict):
            raise openai_error(400, f"{where} must be an object.", param=where)
        item = cast("dict[str, Any]", raw)
        kind = item.get("type", "message")
        if kind == "message":
            role = item.get("role")
            content = item.get("content")
            if role in ("system", "developer"):
                items.append(ConversationItem("system", []))
            elif role in ("user", "assistant"):
                parts = _content_parts(content, f"{where}.content")
                items.append(ConversationItem(cast("Role", role), parts))
            else:
                raise openai_error(
                    400,
                    f"{where}.role is {role!r}: use 'user', 'assistant', 'system' or 'developer'.",
                    param=f"{where}.role",
                )
        elif kind == "function_call":
            call_id = _required_str(item, "call_id", where)
            name = _required_str(item, "name", where)
            names[call_id] = name
            args = _arguments(item.get("arguments", "{}"), f"{where}.arguments")
            call = types.FunctionCall(id=call_id, name=name, args=args)
            items.append(ConversationItem("assistant", [types.Part(function_call=call)]))
        elif kind == "function_call_output":
            call_id = _required_str(item, "call_id", where)
            output = _text_of(item.get("output"), f"{where}.output")
            items.append(ConversationItem("tool", [_answer(call_id, names.get(call_id), output)]))
        elif kind == "reasoning":
            continue  # the agent's reasoning is its own: nothing to carry over
        else:
            raise openai_error(
                400,
                f"{where}.type is {kind!r}: this server reads 'message', 'function_call', "
                "'function_call_output' and 'reasoning' items.",
                param=f"{where}.type",
            )
    return items


def split_new_input(
    items: list[ConversationItem],
) -> tuple[list[ConversationItem], types.Content | None]:
    """The conversation before the turn, and the turn's new message (None when the items
    end with an assistant item, so there is nothing new to answer)."""
    last_assistant = -1
    for index, item in enumerate(items):
        if item.role == "assistant":
            last_assistant = index
    history = items[: last_assistant + 1]
    parts = [part for item in items[last_assistant + 1 :] for part in item.parts]
    if not parts:
        return history, None
    return history, types.Content(role="user", parts=parts)


def _answer(call_id: str, name: str | None, output: str) -> types.Part:
    """A tool result: a JSON object is kept as it is, anything else under ``result``."""
    try:
        value = json.loads(output)
    except ValueError:
        value = output
    response = cast("dict[str, Any]", value) if isinstance(value, dict) else {"result": value}
    return types.Part(
        function_response=types.FunctionResponse(id=call_id, name=name or "", response=response)
    )


def _chat_tool_call(call: Any, where: str, names: dict[str, str]) -> types.Part:
    if not isinstance(call, dict):
        raise openai_error(400, f"{where} must be an object.", param=where)
    data = cast("dict[str, Any]", call)
    call_id = _required_str(data, "id", where)
    function = data.get("function")
    if not isinstance(function, dict):
        raise openai_error(400, f"{where}.function must be an object.", param=f"{where}.function")
    described = cast("dict[str, Any]", function)
    name = _required_str(described, "name", f"{where}.function")
    names[call_id] = name
    args = _arguments(described.get("arguments", "{}"), f"{where}.function.arguments")
    return types.Part(function_call=types.FunctionCall(id=call_id, name=name, args=args))


def _arguments(value: Any, where: str) -> dict[str, Any]:
    if isinstance(value, dict):
        return cast("dict[str, Any]", value)
    try:
        parsed: object = json.loads(value) if isinstance(value, str) and value.strip() else {}
    except ValueError as exc:
        raise openai_error(400, f"{where} is not valid JSON: {exc}.", param=where) from exc
    found = as_object(parsed)
    if found is None:
        raise openai_error(400, f"{where} must be a JSON object.", param=where)
    return found


def _content_parts(content: Any, where: str) -> list[types.Part]:
    """A message's content (a string or a list of parts) as Eventide parts."""
    if content is None:
        return []
    if isinstance(content, str):
        return [types.Part(text=content)] if content else []
    parts: list[types.Part] = []
    for index, raw in enumerate(_list(content, where)):
        part_where = f"{where}[{index}]"
        if not isinstance(raw, dict):
            raise openai_error(400, f"{part_where} must be an object.", param=part_where)
        part = cast("dict[str, Any]", raw)
        kind = part.get("type")
        if kind in ("text", "input_text", "output_text", "refusal"):
            text = part.get("text", part.get("refusal"))
            if not isinstance(text, str):
                raise openai_error(400, f"{part_where}.text must be a string.", param=part_where)
            parts.append(types.Part(text=text))
        elif kind in ("image_url", "input_image"):
            url = part.get("image_url")
            if isinstance(url, dict):
                url = cast("dict[str, Any]", url).get("url")
            if not isinstance(url, str) or not url:
                raise openai_error(
                    400, f"{part_where} has no image URL.", param=f"{part_where}.image_url"
                )
            parts.append(_media_part(url, "image/*", part_where))
        elif kind in ("file", "input_file"):
            parts.append(_file_part(part, part_where))
        else:
            raise openai_error(
                400,
                f"{part_where}.type is {kind!r}: this server reads text, images and files "
                "(base64) in messages.",
                param=f"{part_where}.type",
            )
    return parts


def _media_part(url: str, default_type: str, where: str) -> types.Part:
    if not url.startswith("data:"):
        return types.Part(file_data=types.FileData(file_uri=url, mime_type=default_type))
    header, _, payload = url.partition(",")
    mime_type = header[5:].split(";")[0] or default_type
    if ";base64" not in header:
        raise openai_error(400, f"{where}: only base64 data URLs are read.", param=where)
    return types.Part(inline_data=types.Blob(mime_type=mime_type, data=_decoded(payload, where)))


def _file_part(part: dict[str, Any], where: str) -> types.Part:
    described = part.get("file", part)
    if not isinstance(described, dict):
        raise openai_error(400, f"{where}.file must be an object.", param=where)
    data = cast("dict[str, Any]", described)
    payload = data.get("file_data")
    if not isinstance(payload, str):
        raise openai_error(
            400,
            f"{where} has no file_data: this server reads files sent inline (base64 or a "
            "data: URL), not uploaded file ids.",
            param=where,
        )
    name = data.get("filename")
    if payload.startswith("data:"):
        media = _media_part(payload, "application/octet-stream", where)
        if media.inline_data is not None and isinstance(name, str):
            media.inline_data.display_name = name
        return media
    blob = types.Blob(
        mime_type="application/octet-stream",
        data=_decoded(payload, where),
        display_name=name if isinstance(name, str) else None,
    )
    return types.Part(inline_data=blob)


def _decoded(payload: str, where: str) -> bytes:
    try:
        return base64.b64decode(payload, validate=True)
    except (binascii.Error, ValueError) as exc:
        raise openai_error(400, f"{where} is not valid base64: {exc}.", param=where) from exc


def _text_of(content: Any, where: str) -> str:
    if isinstance(content, str):
        return content
    if content is None:
        return ""
    texts: list[str] = []
    for part in _content_parts(content, where):
        if part.text is None:
            raise openai_error(400, f"{where} may hold only text.", param=where)
        texts.append(part.text)
    return "".join(texts)


def _list(value: Any, where: str) -> list[object]:
    if value is None:
        return []
    listed = as_list(value)
    if listed is None:
        raise openai_error(400, f"{where} must be a list.", param=where)
    return listed


def _required_str(data: dict[str, Any], key: str, where: str) -> str:
    value = data.get(key)
    if not isinstance(value, str) or not value:
        raise openai_error(
            400, f"{where}.{key} must be a non-empty string.", param=f"{where}.{key}"
        )
    return value
