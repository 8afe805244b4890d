"""Typed reading of provider JSON: every accessor returns a precise type or a default.

Provider responses arrive as JSON data (``json.loads`` or an SDK's ``model_dump``), whose
static type is ``object``. These accessors narrow it once, so the wire-format modules read
fields without casts or unknown types.
"""

from __future__ import annotations

from typing import cast

__all__ = ["JsonObject", "integer", "obj", "objects", "string", "strings"]

JsonObject = dict[str, object]
"""A JSON object (keys are always strings in JSON)."""


def obj(value: object) -> JsonObject:
    """``value`` if it is a JSON object, else ``{}``."""
    if isinstance(value, dict):
        return cast(JsonObject, value)
    return {}


def objects(value: object) -> list[JsonObject]:
    """The JSON objects in ``value`` if it is a list (other items skipped), else ``[]``."""
    if not isinstance(value, list):
        return []
    return [cast(JsonObject, item) for item in cast(list[object], value) if isinstance(item, dict)]


def string(value: object) -> str | None:
    """``value`` if it is a string, else None."""
    return value if isinstance(value, str) else None


def strings(value: object) -> list[str]:
    """The strings in ``value`` if it is a list, else ``[]``."""
    if not isinstance(value, list):
        return []
    return [item for item in cast(list[object], value) if isinstance(item, str)]


def integer(value: object) -> int | None:
    """``value`` if it is a whole number (not a bool), else None."""
    if type(value) is int:
        return value
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return int(value)
