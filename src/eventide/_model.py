"""The pydantic base every wire-crossing Eventide record derives from.

Field names are snake_case (the spec's JSON); camelCase aliases are accepted on input so
JSON written by other runtimes' front ends parses too. Bytes travel as base64, as the Gemini
API does.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict
from pydantic.alias_generators import to_camel

__all__ = ["EventideModel", "foreign_to_dict"]


class EventideModel(BaseModel):
    """Base of Eventide's data records: snake_case JSON, camelCase accepted, bytes as base64."""

    model_config = ConfigDict(
        alias_generator=to_camel,
        populate_by_name=True,
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
