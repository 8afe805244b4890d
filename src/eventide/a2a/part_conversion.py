"""Eventide ``Part`` <-> A2A ``Part``, in the wire conventions google-adk uses.

A2A has text, file (bytes or URL) and data parts. Function calls and responses (the pause
for a long-running tool, a confirmation or a credential, and their answers) travel as data
parts whose metadata says what they are: ``adk_type`` is ``function_call`` or
``function_response`` and ``adk_is_long_running`` marks a call the task waits on. These are
google-adk's keys, so either runtime's client reads the other's server. A generic data part
(JSON from another runtime) becomes a text part holding the JSON, which a model can read.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any, cast

from a2a.types import a2a_pb2
from google.protobuf import json_format, struct_pb2

from eventide import types

__all__ = [
    "ADK_METADATA_PREFIX",
    "IS_LONG_RUNNING_KEY",
    "THOUGHT_KEY",
    "TYPE_FUNCTION_CALL",
    "TYPE_FUNCTION_RESPONSE",
    "TYPE_KEY",
    "data_of",
    "metadata_of",
    "to_a2a_part",
    "to_a2a_parts",
    "to_eventide_part",
    "to_eventide_parts",
]

ADK_METADATA_PREFIX = "adk_"
TYPE_KEY = "adk_type"
IS_LONG_RUNNING_KEY = "adk_is_long_running"
THOUGHT_KEY = "adk_thought"
TYPE_FUNCTION_CALL = "function_call"
TYPE_FUNCTION_RESPONSE = "function_response"
_TYPE_EXECUTABLE_CODE = "executable_code"
_TYPE_CODE_RESULT = "code_execution_result"


def metadata_of(part: a2a_pb2.Part) -> dict[str, Any]:
    """A part's metadata as a plain dict (empty when it has none)."""
    if not part.HasField("metadata"):
        return {}
    metadata: dict[str, Any] = json_format.MessageToDict(part.metadata)
    return metadata


def _whole_numbers(value: Any) -> Any:
    # protobuf's Value holds every number as a double; JSON has one number type, so a whole
    # number goes back to an int (a tool declared with ``amount: int`` gets 40, not 40.0).
    if isinstance(value, float) and value.is_integer() and abs(value) < 2**53:
        return int(value)
    if isinstance(value, dict):
        items = cast("dict[str, Any]", value)
        return {key: _whole_numbers(item) for key, item in items.items()}
    if isinstance(value, list):
        return [_whole_numbers(item) for item in cast("list[object]", value)]
    return value


def data_of(part: a2a_pb2.Part) -> Any:
    """A data part's value as plain JSON data."""
    return _whole_numbers(json_format.MessageToDict(part.data))


def _data_part(data: dict[str, Any], metadata: dict[str, Any]) -> a2a_pb2.Part:
    part = a2a_pb2.Part()
    json_format.ParseDict(data, part.data)
    part.metadata.update(metadata)
    return part


def to_a2a_part(part: types.Part, long_running_ids: set[str] | None = None) -> a2a_pb2.Part | None:
    """The A2A form of one Eventide part (None for a part with nothing to send).

    Args:
        part: the part.
        long_running_ids: the ids of calls the task waits on; their parts are marked
            ``adk_is_long_running``.
    """
    if part.text is not None:
        converted = a2a_pb2.Part(text=part.text)
        if part.thought:
            converted.metadata.update({THOUGHT_KEY: True})
        return converted
    if part.inline_data is not None and part.inline_data.data is not None:
        blob = part.inline_data
        return a2a_pb2.Part(
            raw=blob.data,
            media_type=blob.mime_type or "application/octet-stream",
            filename=blob.display_name or "",
        )
    if part.file_data is not None and part.file_data.file_uri:
        file = part.file_data
        return a2a_pb2.Part(
            url=file.file_uri or "",
            media_type=file.mime_type or "",
            filename=file.display_name or "",
        )
    call = part.function_call
    if call is not None:
        metadata: dict[str, Any] = {TYPE_KEY: TYPE_FUNCTION_CALL}
        if long_running_ids and call.id in long_running_ids:
            metadata[IS_LONG_RUNNING_KEY] = True
        return _data_part(call.model_dump(mode="json", exclude_none=True), metadata)
    response = part.function_response
    if response is not None:
        data = response.model_dump(mode="json", exclude_none=True)
        return _data_part(data, {TYPE_KEY: TYPE_FUNCTION_RESPONSE})
    if part.executable_code is not None:
        data = part.executable_code.model_dump(mode="json", exclude_none=True)
        return _data_part(data, {TYPE_KEY: _TYPE_EXECUTABLE_CODE})
    if part.code_execution_result is not None:
        data = part.code_execution_result.model_dump(mode="json", exclude_none=True)
        return _data_part(data, {TYPE_KEY: _TYPE_CODE_RESULT})
    return None


def to_a2a_parts(
    parts: list[types.Part] | None, long_running_ids: set[str] | None = None
) -> list[a2a_pb2.Part]:
    """The A2A form of a list of Eventide parts (parts with nothing to send are left out)."""
    converted: list[a2a_pb2.Part] = []
    for part in parts or ():
        one = to_a2a_part(part, long_running_ids)
        if one is not None:
            converted.append(one)
    return converted


def to_eventide_part(part: a2a_pb2.Part) -> types.Part | None:
    """The Eventide form of one A2A part (None for an empty part)."""
    kind = part.WhichOneof("content")
    metadata = metadata_of(part)
    if kind == "text":
        thought = metadata.get(THOUGHT_KEY)
        return types.Part(text=part.text, thought=True if thought is True else None)
    if kind == "raw":
        return types.Part(
            inline_data=types.Blob(
                data=part.raw,
                mime_type=part.media_type or "application/octet-stream",
                display_name=part.filename or None,
            )
        )
    if kind == "url":
        return types.Part(
            file_data=types.FileData(
                file_uri=part.url,
                mime_type=part.media_type or None,
                display_name=part.filename or None,
            )
        )
    if kind == "data":
        data = data_of(part)
        kind_of_data = metadata.get(TYPE_KEY)
        if isinstance(data, dict):
            fields = cast("dict[str, Any]", data)
            if kind_of_data == TYPE_FUNCTION_CALL:
                return types.Part(function_call=types.FunctionCall.model_validate(fields))
            if kind_of_data == TYPE_FUNCTION_RESPONSE:
                return types.Part(function_response=types.FunctionResponse.model_validate(fields))
            if kind_of_data == _TYPE_EXECUTABLE_CODE:
                return types.Part(executable_code=types.ExecutableCode.model_validate(fields))
            if kind_of_data == _TYPE_CODE_RESULT:
                return types.Part(
                    code_execution_result=types.CodeExecutionResult.model_validate(fields)
                )
        # JSON from another runtime: a model reads it best as text.
        return types.Part(text=json.dumps(data, ensure_ascii=False))
    return None


def to_eventide_parts(parts: Iterable[a2a_pb2.Part]) -> list[types.Part]:
    """The Eventide form of a sequence of A2A parts (empty parts are left out)."""
    converted: list[types.Part] = []
    for part in parts:
        one = to_eventide_part(part)
        if one is not None:
            converted.append(one)
    return converted


def struct_of(data: dict[str, Any]) -> struct_pb2.Struct:
    """A protobuf ``Struct`` holding ``data`` (for metadata fields)."""
    struct = struct_pb2.Struct()
    struct.update(data)
    return struct
