"""Records (events, sessions) as camelCase JSON in one pass of pydantic-core's serializer.

The API sends events in ADK's spelling: field names in camelCase, keys inside data fields
(:data:`~eventide._model.DATA_FIELDS`: tool arguments, state deltas, ...) as stored. Dumping
an event to Python data, renaming its keys with :func:`~eventide.types.camel_case_keys` and
encoding that with :mod:`json` walked every event three times in Python, for each frame of
every turn. Here each record class's serializer schema is copied once with a camelCase
serialization alias on each field name (none below a data field), so pydantic-core writes the
camelCase JSON directly.

The output is :func:`camel_case_keys` of ``model_dump(mode="json", exclude_none=True)``,
compact, with one difference: keys of ``requested_tool_confirmations`` (function call ids)
are sent as they are, where the key renaming also changed ids holding an underscore.
"""

from __future__ import annotations

import copy
import json
import logging
from typing import Any, cast

from pydantic import BaseModel
from pydantic_core import SchemaSerializer

from eventide._model import DATA_FIELDS
from eventide.events import Event
from eventide.types import camel_case_keys

__all__ = [
    "camel_json",
    "camel_json_bytes",
    "event_json",
    "event_json_bytes",
    "written_by_pydantic_core",
]

logger = logging.getLogger("eventide.server")


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(word[:1].upper() + word[1:] for word in rest)


class _Unsupported(Exception):
    """The schema has a shape the aliasing below does not handle."""


def _alias(node: Any) -> None:
    """Add camelCase serialization aliases to every model field under ``node``, in place."""
    if isinstance(node, list):
        for item in cast("list[object]", node):
            _alias(item)
        return
    if not isinstance(node, dict):
        return
    schema = cast("dict[str, Any]", node)
    kind = schema.get("type")
    if kind in ("typed-dict", "dataclass-args", "model") and "serialization" in schema:
        raise _Unsupported(f"a {kind} schema with a custom serializer")
    if kind in ("typed-dict", "dataclass-args"):
        raise _Unsupported(f"a {kind} schema")
    if kind == "model":
        # pydantic-core serializes an instance of exactly ``cls`` with that class's own
        # serializer (which has no aliases); any model instance passes this check.
        schema["cls"] = BaseModel
    if kind == "model-fields":
        if schema.get("extra_behavior") == "allow":
            raise _Unsupported("a model that keeps extra fields")
        for name, field in cast("dict[str, dict[str, Any]]", schema["fields"]).items():
            field["serialization_alias"] = _camel(name)
            if name in DATA_FIELDS:
                _check_plain(field["schema"])
            else:
                _alias(field["schema"])
        return
    for key, value in schema.items():
        if key not in ("cls", "config", "metadata", "ref"):
            _alias(value)


def _check_plain(node: Any) -> None:
    """A data field's schema must not share definitions with the aliased ones (its keys,
    and its models' field names, stay as stored)."""
    if isinstance(node, list):
        for item in cast("list[object]", node):
            _check_plain(item)
    elif isinstance(node, dict):
        schema = cast("dict[str, Any]", node)
        if schema.get("type") == "definition-ref":
            raise _Unsupported("a data field refers to a shared definition")
        for key, value in schema.items():
            if key not in ("cls", "config", "metadata"):
                _check_plain(value)


def _build_serializer(cls: type[BaseModel]) -> SchemaSerializer | None:
    cls.model_rebuild()  # Eventide's schemas are built on first use
    schema = copy.deepcopy(cls.__pydantic_core_schema__)
    try:
        _alias(schema)
        return SchemaSerializer(cast("Any", schema))
    except (_Unsupported, TypeError, ValueError) as exc:
        logger.debug("%s is renamed to camelCase in Python: %s", cls.__name__, exc)
        return None


# Per record class: its aliased serializer, or None where it could not be built or did not
# give the same JSON as the renaming in Python on the first record it wrote.
_serializers: dict[type[BaseModel], SchemaSerializer | None] = {}


def _slow_json(record: BaseModel) -> str:
    data = camel_case_keys(record.model_dump(mode="json", exclude_none=True))
    return json.dumps(data, separators=(",", ":"), ensure_ascii=False)


def camel_json_bytes(record: BaseModel) -> bytes:
    """``record`` as compact camelCase JSON (unset fields left out), UTF-8 encoded."""
    cls = type(record)
    try:
        serializer = _serializers[cls]
    except KeyError:
        serializer = _build_serializer(cls)
        if serializer is not None:
            fast = serializer.to_json(record, exclude_none=True, by_alias=True)
            slow = _slow_json(record)
            # The aliasing relies on how pydantic-core treats a schema; checked once.
            if json.loads(fast) != json.loads(slow):
                logger.debug("%s is renamed to camelCase in Python", cls.__name__)
                serializer = None
        _serializers[cls] = serializer
    if serializer is None:
        return _slow_json(record).encode()
    return serializer.to_json(record, exclude_none=True, by_alias=True)


def camel_json(record: BaseModel) -> str:
    """``record`` as compact camelCase JSON (unset fields left out)."""
    return camel_json_bytes(record).decode()


def written_by_pydantic_core(cls: type[BaseModel]) -> bool:
    """Whether records of ``cls`` are written by the aliased serializer (else in Python)."""
    return _serializers.get(cls) is not None


def event_json(event: Event) -> str:
    """One event as compact camelCase JSON (unset fields left out)."""
    return camel_json_bytes(event).decode()


def event_json_bytes(event: Event) -> bytes:
    """:func:`event_json`, UTF-8 encoded."""
    return camel_json_bytes(event)
