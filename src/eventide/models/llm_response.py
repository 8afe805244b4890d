"""``LlmResponse``: one response (or streamed chunk) from a model."""

from __future__ import annotations

from typing import Any

from eventide import types
from eventide._model import EventideModel

__all__ = ["LlmResponse"]


class LlmResponse(EventideModel):
    """What a model connector yields.

    When streaming, connectors yield ``partial=True`` chunks and then one complete response
    (``partial`` unset) aggregating them. A provider failure is reported through
    ``error_code`` and ``error_message`` rather than an exception, so it becomes an event.
    """

    content: types.Content | None = None
    partial: bool | None = None
    turn_complete: bool | None = None
    finish_reason: str | None = None
    error_code: str | None = None
    error_message: str | None = None
    interrupted: bool | None = None
    usage_metadata: types.UsageMetadata | None = None
    grounding_metadata: types.GroundingMetadata | None = None
    model_version: str | None = None
    custom_metadata: dict[str, Any] | None = None
