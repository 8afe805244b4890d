"""``InMemoryMemoryService``: keyword search over remembered events, in process memory."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime

from eventide import types
from eventide.events import Event
from eventide.memory.base_memory_service import (
    BaseMemoryService,
    MemoryEntry,
    SearchMemoryResponse,
)
from eventide.sessions.session import Session

__all__ = ["InMemoryMemoryService"]

_WORD = re.compile(r"\w+", re.UNICODE)


def _words(text: str) -> set[str]:
    return {w.lower() for w in _WORD.findall(text)}


class InMemoryMemoryService(BaseMemoryService):
    """Matches a query's words against remembered events; ranks by words matched.

    Meant for tests and prototypes: it keeps everything in memory and knows no stemming.
    """

    def __init__(self) -> None:
        # (app, user) -> session id -> [(event, its content, its words)]
        self._store: dict[
            tuple[str, str], dict[str, list[tuple[Event, types.Content, set[str]]]]
        ] = {}

    async def add_session_to_memory(self, session: Session) -> None:
        indexed = [
            (event, event.content, _words(event.text))
            for event in session.events
            if event.text and event.content is not None and not event.partial
        ]
        self._store.setdefault((session.app_name, session.user_id), {})[session.id] = indexed

    async def add_events_to_memory(
        self,
        *,
        app_name: str,
        user_id: str,
        events: Sequence[Event],
        session_id: str | None = None,
        custom_metadata: Mapping[str, object] | None = None,
    ) -> None:
        """Index these events after what is remembered of ``session_id`` (events already
        remembered, by id, are skipped); without a session id they are kept under ``""``."""
        entries = self._store.setdefault((app_name, user_id), {}).setdefault(session_id or "", [])
        known = {event.id for event, _, _ in entries}
        for event in events:
            if event.text and event.content is not None and not event.partial:
                if event.id not in known:
                    entries.append((event, event.content, _words(event.text)))
                    known.add(event.id)

    async def search_memory(
        self, *, app_name: str, user_id: str, query: str
    ) -> SearchMemoryResponse:
        wanted = _words(query)
        if not wanted:
            return SearchMemoryResponse()
        scored: list[tuple[int, float, str, Event, types.Content]] = []
        for session_id, entries in self._store.get((app_name, user_id), {}).items():
            for event, content, words in entries:
                hits = len(wanted & words)
                if hits:
                    scored.append((hits, event.timestamp, session_id, event, content))
        scored.sort(key=lambda item: (-item[0], -item[1]))
        return SearchMemoryResponse(
            memories=[
                MemoryEntry(
                    content=content,
                    author=event.author,
                    timestamp=datetime.fromtimestamp(event.timestamp, UTC).isoformat(),
                    session_id=session_id,
                )
                for _, _, session_id, event, content in scored
            ]
        )

    async def delete_memories(
        self, *, app_name: str, user_id: str, session_id: str | None = None
    ) -> None:
        if session_id is None:
            self._store.pop((app_name, user_id), None)
        else:
            self._store.get((app_name, user_id), {}).pop(session_id, None)
