"""AG-UI events written as server-sent-event frames from their wire fields.

The official ``EventEncoder`` writes ``data: <event.model_dump_json(by_alias=True)>``: the
event model validates its fields, then serializes through the package's Python-level wrap
serializer (which drops the optional fields without a value), about 16 us an event. A turn
sends seven or more such events besides its text deltas, which made them a fifth of an
AG-UI turn's cost. :func:`frame` writes the same bytes from the camelCase fields with
``pydantic_core.to_json`` (the serializer the models end in) in about 0.6 us: byte for
byte the package's encoding, which the tests hold every frame of their streams to.

The caller gives only the fields with a value, in the model's field order (``type`` first),
and values of the types the model's fields take; an event built from the package's models
(an interrupt's outcome, a messages snapshot) goes through :func:`encoded` instead.
"""

from __future__ import annotations

from typing import Any

from ag_ui.core import BaseEvent
from ag_ui.encoder import EventEncoder
from pydantic_core import to_json

__all__ = ["content_frame", "encoded", "frame", "run_error_frame"]

_ENCODER = EventEncoder()


def frame(fields: dict[str, Any]) -> bytes:
    """The frame of the event whose wire fields are ``fields`` (``{"type": ..., ...}``)."""
    return b"data: " + to_json(fields) + b"\n\n"


def content_frame(message_id: str, delta: str) -> bytes:
    """The ``TEXT_MESSAGE_CONTENT`` frame: most of a streamed turn's frames."""
    return frame({"type": "TEXT_MESSAGE_CONTENT", "messageId": message_id, "delta": delta})


def run_error_frame(message: str, code: str) -> bytes:
    """The ``RUN_ERROR`` frame."""
    return frame({"type": "RUN_ERROR", "message": message, "code": code})


def encoded(event: BaseEvent) -> bytes:
    """The frame of an event built from the package's models, by the package's encoder."""
    return _ENCODER.encode(event).encode()
