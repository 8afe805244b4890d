"""The request fields both OpenAI APIs share, checked with the API's error for each."""

from __future__ import annotations

from typing import Any, Literal, cast

from eventide import types
from eventide.openai_compat.openai_errors import openai_error

__all__ = [
    "ToolCallsShown",
    "as_list",
    "as_object",
    "client_tools",
    "metadata_of",
    "optional_str",
    "tool_calls_shown",
]

ToolCallsShown = Literal["shown", "hidden"]


def as_object(value: object) -> dict[str, Any] | None:
    """``value`` as a JSON object, or None when it is not one."""
    return cast("dict[str, Any]", value) if isinstance(value, dict) else None


def as_list(value: object) -> list[object] | None:
    """``value`` as a JSON array, or None when it is not one."""
    return cast("list[object]", value) if isinstance(value, list) else None


def client_tools(value: Any, *, nested: bool) -> list[types.FunctionDeclaration]:
    """The request's function tools as declarations: Chat Completions nests the function
    (``{"type": "function", "function": {...}}``, ``nested``), Responses does not.

    Raises:
        ProtocolInputError: a tool is not a function tool with a name.
    """
    if value is None:
        return []
    listed = as_list(value)
    if listed is None:
        raise openai_error(400, "tools must be a list of function tools.", param="tools")
    declarations: list[types.FunctionDeclaration] = []
    for index, raw in enumerate(listed):
        where = f"tools[{index}]"
        if not isinstance(raw, dict) or cast("dict[str, Any]", raw).get("type") != "function":
            raise openai_error(
                400,
                f"{where} is not a function tool: this server takes tools of type 'function' "
                "(the client runs them and sends their results back).",
                param=where,
            )
        tool = cast("dict[str, Any]", raw)
        function = tool.get("function") if nested else tool
        if not isinstance(function, dict):
            raise openai_error(400, f"{where}.function must be an object.", param=where)
        described = cast("dict[str, Any]", function)
        name = described.get("name")
        if not isinstance(name, str) or not name:
            raise openai_error(400, f"{where} has no name.", param=f"{where}.name")
        parameters = described.get("parameters")
        description = described.get("description")
        declarations.append(
            types.FunctionDeclaration(
                name=name,
                description=description if isinstance(description, str) else None,
                parameters_json_schema=cast("dict[str, Any]", parameters)
                if isinstance(parameters, dict)
                else None,
            )
        )
    return declarations


def metadata_of(body: dict[str, Any]) -> dict[str, Any]:
    """The request's ``metadata`` object (empty when absent).

    Raises:
        ProtocolInputError: it is not an object.
    """
    value = body.get("metadata")
    if value is None:
        return {}
    found = as_object(value)
    if found is None:
        raise openai_error(400, "metadata must be an object.", param="metadata")
    return found


def optional_str(body: dict[str, Any], key: str) -> str | None:
    """``body[key]`` when it is a non-empty string, None when absent.

    Raises:
        ProtocolInputError: it is present and not a string.
    """
    value = body.get(key)
    if value is None or value == "":
        return None
    if not isinstance(value, str):
        raise openai_error(400, f"{key} must be a string.", param=key)
    return value


def tool_calls_shown(headers: Any, metadata: dict[str, Any]) -> bool:
    """Whether the agent's own tool calls are shown: the ``X-Eventide-Tool-Calls`` header or
    ``metadata.eventide_tool_calls`` set to ``shown`` (default ``hidden``).

    Raises:
        ProtocolInputError: another value.
    """
    value = headers.get("x-eventide-tool-calls") or metadata.get("eventide_tool_calls")
    if value is None or value == "hidden":
        return False
    if value == "shown":
        return True
    raise openai_error(
        400,
        f"X-Eventide-Tool-Calls (or metadata.eventide_tool_calls) is {value!r}: use 'shown' or "
        "'hidden'.",
        param="metadata.eventide_tool_calls",
    )
