"""Validating and coercing the data that flows between workflow nodes.

A node's input and output are plain values (JSON data, pydantic models dumped to dicts).
The workflow's first input is the user's message (``Content``); a parameter annotated
``str`` gets its text, one annotated with structured data gets its text parsed as JSON.
"""

from __future__ import annotations

import json
import types as pytypes
from typing import Annotated, Any, Union, get_args, get_origin

from pydantic import BaseModel, TypeAdapter

from eventide import types

__all__ = ["coerce", "content_text", "to_plain", "validate_node_data"]


def to_plain(value: Any) -> Any:
    """``value`` with pydantic models dumped to dicts (``None`` fields left out), at any
    depth in lists and dicts."""
    if isinstance(value, BaseModel) and not isinstance(value, types.Content):
        return value.model_dump(exclude_none=True)
    if isinstance(value, list):
        items: list[Any] = value  # pyright: ignore[reportUnknownVariableType]
        return [to_plain(item) for item in items]
    if isinstance(value, dict):
        mapping: dict[Any, Any] = value  # pyright: ignore[reportUnknownVariableType]
        return {key: to_plain(item) for key, item in mapping.items()}
    return value


def content_text(content: types.Content) -> str:
    """The content's text parts (thoughts left out), joined."""
    return "".join(p.text for p in content.parts or () if p.text is not None and not p.thought)


def _strip(annotation: Any) -> Any:
    while get_origin(annotation) is Annotated:
        annotation = get_args(annotation)[0]
    return annotation


def _is_union(annotation: Any) -> bool:
    return get_origin(annotation) in (Union, pytypes.UnionType)


def expects_str(annotation: Any) -> bool:
    """Whether the annotation wants text (``str``, ``str | None``) rather than data."""
    annotation = _strip(annotation)
    if annotation is str:
        return True
    if _is_union(annotation):
        args = [_strip(a) for a in get_args(annotation)]
        return any(expects_str(a) for a in args) and all(
            expects_str(a) or a is type(None) or a is types.Content for a in args
        )
    return False


def _accepts_content(annotation: Any) -> bool:
    annotation = _strip(annotation)
    if annotation in (Any, object, types.Content):
        return True
    if _is_union(annotation):
        return any(_accepts_content(a) for a in get_args(annotation))
    return False


def _unwrap_content(content: types.Content, annotation: Any) -> Any:
    if expects_str(annotation):
        return content_text(content)
    if _accepts_content(annotation):
        return content
    text = content_text(content)
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return text


_adapters: dict[Any, TypeAdapter[Any]] = {}


def coerce(annotation: Any, value: Any) -> Any:
    """``value`` validated against (and converted to) ``annotation``; a ``Content`` gives
    its text or parsed JSON first."""
    if isinstance(value, types.Content):
        value = _unwrap_content(value, annotation)
    try:
        adapter = _adapters[annotation]
    except (KeyError, TypeError):
        adapter = TypeAdapter(annotation)
        try:
            _adapters[annotation] = adapter
        except TypeError:  # an unhashable annotation: not cached
            pass
    return adapter.validate_python(value)


def validate_node_data(schema: Any, data: Any) -> Any:
    """``data`` checked against a node's ``input_schema``/``output_schema`` and made plain
    (models dumped); unchanged when either is None or the schema is a raw JSON schema."""
    if data is None or schema is None or isinstance(schema, dict):
        return data
    return to_plain(coerce(schema, data))
