"""Checking the user's answer to a ``RequestInput`` against the request's ``response_schema``.

A request travels with its schema as JSON Schema (``request_input_event`` converts a Python
type), so the answer is checked against that form when the workflow reads it back from the
log, in this process or another. The check coerces as pydantic's lax mode does (``"42"``
for an integer gives ``42``, ``"true"`` for a boolean ``True``), and follows the schema
down: nested objects and their required keys, array items, ``enum``, ``anyOf``/``oneOf``,
nullable types and the ``$defs`` a pydantic model's schema refers to. An object keeps the
keys it was given (absent optional keys stay absent, extra keys stay).

An answer that does not fit raises :class:`~eventide.errors.WorkflowDataError` before any
node runs again; the user answers the same request again (the latest answer counts).
"""

from __future__ import annotations

import json
import logging
from functools import lru_cache
from typing import Any, Literal, NotRequired, Required, Union, cast

from pydantic import ConfigDict, TypeAdapter, ValidationError
from typing_extensions import TypedDict  # pydantic needs it on Python < 3.12

from eventide.errors import WorkflowDataError

__all__ = ["validate_answer"]

_log = logging.getLogger(__name__)

_SCALARS: dict[str, Any] = {
    "integer": int,
    "number": float,
    "string": str,
    "boolean": bool,
    "null": type(None),
}


def validate_answer(interrupt_id: str, answer: Any, schema: Any) -> Any:
    """``answer`` (the user's, to request ``interrupt_id``) checked against ``schema`` (a
    JSON Schema dict, or a Python type), coerced where the schema says so.

    Raises:
        WorkflowDataError: the answer does not fit; the message says how and what to do.
    """
    if schema is None:
        return answer
    try:
        mapping = _as_dict(schema)
        adapter = _adapter(json.dumps(mapping)) if mapping is not None else TypeAdapter(schema)
    except Exception as unreadable:  # noqa: BLE001 - a schema this reader cannot follow
        _log.warning(
            "Request %s: its response_schema could not be read (%s); the answer is taken as given.",
            interrupt_id,
            unreadable,
        )
        return answer
    try:
        checked = adapter.validate_python(answer)
    except ValidationError as invalid:
        problems = "; ".join(
            f"{'.'.join(map(str, error['loc'])) or 'the answer'}: {error['msg']}"
            for error in invalid.errors()[:5]
        )
        raise WorkflowDataError(
            f"Validation failed for interrupt {interrupt_id!r}: the answer {answer!r} does not "
            f"match the request's response_schema ({problems}). Answer the request again "
            "with a value of that shape; nothing after the request has run."
        ) from invalid
    return checked


def _as_dict(value: object) -> dict[str, Any] | None:
    return cast("dict[str, Any]", value) if isinstance(value, dict) else None


def _as_list(value: object) -> list[object] | None:
    return cast("list[object]", value) if isinstance(value, list) else None


@lru_cache(maxsize=64)
def _adapter(schema_json: str) -> TypeAdapter[Any]:
    """The adapter of a JSON Schema, cached by its JSON text (a request's schema is read
    back from the log each time its workflow continues)."""
    schema: dict[str, Any] = json.loads(schema_json)
    return TypeAdapter(_annotation(schema, schema.get("$defs") or {}, "Answer"))


def _annotation(schema: dict[str, Any], defs: dict[str, Any], name: str) -> Any:
    """The Python annotation that validates what ``schema`` describes."""
    ref = schema.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/$defs/"):
        target = ref.removeprefix("#/$defs/")
        found = _as_dict(defs.get(target))
        return _annotation(found, defs, target) if found is not None else Any
    if "enum" in schema or "const" in schema:
        values: list[Any] = schema["enum"] if "enum" in schema else [schema["const"]]
        return _literal(values)
    for key in ("anyOf", "oneOf"):
        options = _as_list(schema.get(key))
        if options:
            return _union([_annotation(o, defs, f"{name}{i}") for i, o in _dicts(options)])
    kind: object = schema.get("type")
    kinds = _as_list(kind)
    if kinds is not None:
        return _union([_annotation({**schema, "type": k}, defs, name) for k in kinds])
    if kind == "array":
        items = _as_dict(schema.get("items"))
        inner = _annotation(items, defs, f"{name}Item") if items is not None else Any
        return list[inner]  # type: ignore[valid-type]
    if kind == "object" or "properties" in schema:
        properties: Any = schema.get("properties")
        if not isinstance(properties, dict) or not properties:
            return dict[str, Any]
        required: set[str] = set(schema.get("required") or ())
        fields: dict[str, Any] = {}
        for key, value in _dicts(cast("dict[str, Any]", properties).items()):
            inner = _annotation(value, defs, f"{name}_{key}")
            fields[key] = Required[inner] if key in required else NotRequired[inner]
        shape: Any = TypedDict(name, fields)  # type: ignore[misc]
        setattr(shape, "__pydantic_config__", ConfigDict(extra="allow"))  # noqa: B010
        return shape
    return _SCALARS.get(kind, Any) if isinstance(kind, str) else Any


def _dicts(pairs: Any) -> list[tuple[Any, dict[str, Any]]]:
    """The (key, value) pairs whose value is a schema (a dict): of a dict's items, or of a
    list's positions."""
    found: list[tuple[Any, dict[str, Any]]] = []
    listed = _as_list(pairs)
    for key, value in enumerate(listed) if listed is not None else pairs:
        schema = _as_dict(value)
        if schema is not None:
            found.append((key, schema))
    return found


def _literal(values: list[Any]) -> Any:
    form: Any = Literal
    return form[tuple(values)]


def _union(members: list[Any]) -> Any:
    if not members:
        return Any
    form: Any = Union
    return form[tuple(members)]
