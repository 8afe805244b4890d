"""The pydantic base every wire-crossing Eventide record derives from.

Field names are snake_case (the spec's JSON). Bytes travel as base64, as the Gemini API
does. Schemas are built on first use (``defer_build``), which keeps ``import eventide`` fast;
JSON from front ends that write camelCase keys is converted with :func:`snake_case_keys`.
"""

from __future__ import annotations

from typing import Any, cast

from pydantic import BaseModel, ConfigDict, ValidationError

from eventide._json import JsonValue
from eventide.errors import EventideError

__all__ = [
    "DATA_FIELDS",
    "EventideModel",
    "camel_case_keys",
    "foreign_to_dict",
    "raise_own_error",
    "snake_case_keys",
]


class EventideModel(BaseModel):
    """Base of Eventide's data records: snake_case JSON, bytes as base64."""

    model_config = ConfigDict(
        ser_json_bytes="base64",
        val_json_bytes="base64",
        defer_build=True,
    )

    def to_json_dict(self) -> dict[str, Any]:
        """This record as JSON-ready data, without the fields left unset (None)."""
        return self.model_dump(mode="json", exclude_none=True)


def foreign_to_dict(value: Any) -> Any:
    """Turn a value from another library (google.genai types, dataclasses) into plain data.

    Objects from ``google.genai.types`` are pydantic models with the same snake_case field
    names as Eventide's; they are converted by value, so core never imports google-genai.
    """
    dump = getattr(value, "model_dump", None)
    if callable(dump):
        return dump(exclude_none=True)
    return value


def json_fields(data: object) -> dict[str, Any] | None:
    """``data`` as a dict of fields when it is one (a "before" validator's raw input), else
    None."""
    return cast("dict[str, Any]", data) if isinstance(data, dict) else None


def _to_snake(name: str) -> str:
    out: list[str] = []
    for char in name:
        if char.isupper():
            out.append("_")
            out.append(char.lower())
        else:
            out.append(char)
    return "".join(out)


def snake_case_keys(data: JsonValue) -> JsonValue:
    """Recursively rename camelCase dict keys to snake_case (``functionCall`` ->
    ``function_call``), for JSON written by front ends of other runtimes.

    Keys that are data rather than field names (inside ``args``, ``response``,
    ``state_delta``, ``state``, ``custom_metadata``, schemas) are left as they are.
    """
    if isinstance(data, list):
        return [snake_case_keys(item) for item in data]
    if not isinstance(data, dict):
        return data
    converted: dict[str, JsonValue] = {}
    for key, value in data.items():
        name = _to_snake(key)
        if name in DATA_FIELDS:
            converted[name] = value
        else:
            converted[name] = snake_case_keys(value)
    return converted


# Field names whose values are user data: keys inside them are never renamed.
DATA_FIELDS = frozenset(
    {
        "args",
        "response",
        "state_delta",
        "state",
        "artifact_delta",
        "custom_metadata",
        "parameters_json_schema",
        "response_json_schema",
        "requested_auth_configs",
        "agent_state",
        "payload",
        "grounding_metadata",
        "output",
    }
)


# Field names seen so far and their camelCase spelling. Only field names are renamed (keys
# inside data fields never are), so this stays small; the cap is a guard, not a limit hit.
_camel_names: dict[str, str] = {}
_CAMEL_NAMES_CAP = 4096


def _to_camel(name: str) -> str:
    camel = _camel_names.get(name)
    if camel is None:
        head, *rest = name.split("_")
        camel = head + "".join(word[:1].upper() + word[1:] for word in rest)
        if len(_camel_names) < _CAMEL_NAMES_CAP:
            _camel_names[name] = camel
    return camel


def camel_case_keys(data: JsonValue) -> JsonValue:
    """Recursively rename snake_case field names to camelCase (``function_call`` ->
    ``functionCall``), for front ends that read camelCase; keys inside data fields
    (:data:`DATA_FIELDS`) keep their spelling."""
    if isinstance(data, list):
        return [camel_case_keys(item) if isinstance(item, dict | list) else item for item in data]
    if not isinstance(data, dict):
        return data
    # Servers run this on every event they send: scalars are not recursed into, and known
    # names are looked up rather than rebuilt.
    names = _camel_names
    converted: dict[str, Any] = {}
    for key, value in data.items():
        if key not in DATA_FIELDS and isinstance(value, dict | list):
            value = camel_case_keys(value)
        converted[names.get(key) or _to_camel(key)] = value
    return converted


def raise_own_error(exc: ValidationError) -> None:
    """Raise the Eventide error a validator raised inside ``exc`` (a bad name, a bad
    setting) as itself, not wrapped in pydantic's ``ValidationError``; return when none did."""
    for error in exc.errors():
        original = (error.get("ctx") or {}).get("error")
        if isinstance(original, EventideError):
            raise original from None
