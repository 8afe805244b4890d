"""Memories written directly (``add_memory``) rather than taken from a session's events.

Both memory services keep such an entry as they keep a remembered event, under the empty
session id: its ``id`` (a new one when the entry has none) is the event id that
``delete_memory`` takes, its ``timestamp`` (ISO 8601) the event's time.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from datetime import datetime

from eventide._ids import new_id
from eventide.errors import UsageError
from eventide.events import Event
from eventide.memory.base_memory_service import MemoryEntry

__all__ = ["DIRECT_SESSION", "entry_event"]

DIRECT_SESSION = ""
"""The session id direct memories are kept under."""


def entry_event(entry: MemoryEntry, custom_metadata: Mapping[str, object] | None) -> Event:
    """``entry`` as the event a memory service indexes.

    Raises:
        UsageError: the entry has no text (it could never be found) or its timestamp is
            not ISO 8601.
    """
    if not entry.content.text:
        raise UsageError(
            "A memory entry needs text in its content: memories are found by their words. "
            "Give MemoryEntry(content=types.Content(parts=[types.Part(text=...)]))."
        )
    when = time.time()
    if entry.timestamp:
        try:
            when = datetime.fromisoformat(entry.timestamp).timestamp()
        except ValueError as exc:
            raise UsageError(
                f"MemoryEntry.timestamp {entry.timestamp!r} is not ISO 8601 (e.g. "
                "'2026-01-31T12:00:00+00:00')."
            ) from exc
    metadata = {**(custom_metadata or {}), **entry.custom_metadata}
    return Event(
        id=entry.id or new_id(),
        author=entry.author or "memory",
        content=entry.content,
        timestamp=when,
        custom_metadata=metadata or None,
    )
