"""The type of JSON data, for code that walks parsed JSON (dicts from the wire, state).

Read-only containers (``Mapping``, ``Sequence``) make the alias covariant, so a
``list[dict[str, Any]]`` is JSON data too; ``isinstance(value, dict)`` narrows a value to
``dict[str, JsonValue]``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TypeAlias

__all__ = ["JsonObject", "JsonValue"]

JsonValue: TypeAlias = (
    "Mapping[str, JsonValue] | Sequence[JsonValue] | str | int | float | bool | None"
)
JsonObject: TypeAlias = "Mapping[str, JsonValue]"
