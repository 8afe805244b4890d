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
from eventide.memory.direct_entries import DIRECT_SESSION, entry_event
from eventide.sessions.session import Session

__all__ = ["InMemoryMemoryService"]

_WORD = re.compile(r"\w+", re.UNICODE)


_Indexed = tuple[Event, types.Content, set[str], dict[str, object]]
"""A remembered event, its content, its words and the metadata it was added with."""


def _words(text: str) -> set[str]:
    return {w.lower() for w in _WORD.findall(text)}


class InMemoryMemoryService(BaseMemoryService):
    """Matches a query's words against remembered events; ranks by words matched.

    Meant for tests and prototypes: it keeps everything in memory and knows no stemming.
    """

    def __init__(self) -> None:
        # (app, user) -> session id -> [(event, its content, its words, custom metadata)]
        self._store: dict[tuple[str, str], dict[str, list[_Indexed]]] = {}
        # (app, user) -> ids of memories deleted one by one: a session added again does not
        # bring them back (as in google-adk).
        self._deleted: dict[tuple[str, str], set[str]] = {}

    async def add_session_to_memory(self, session: Session) -> None:
        key = (session.app_name, session.user_id)
        deleted = self._deleted.get(key, ())
        indexed: list[_Indexed] = [
            (event, event.content, _words(event.text), {})
            for event in session.events
            if event.text
            and event.content is not None
            and not event.partial
            and event.id not in deleted
        ]
        self._store.setdefault(key, {})[session.id] = indexed

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
        known = {entry[0].id for entry in entries}
        metadata = dict(custom_metadata or {})
        for event in events:
            if event.text and event.content is not None and not event.partial:
                if event.id not in known:
                    entries.append((event, event.content, _words(event.text), metadata))
                    known.add(event.id)

    async def add_memory(
        self,
        *,
        app_name: str,
        user_id: str,
        memories: Sequence[MemoryEntry],
        custom_metadata: Mapping[str, object] | None = None,
    ) -> None:
        """Remember these entries as they are (see :mod:`eventide.memory.direct_entries`);
        an entry with the id of one remembered before replaces it."""
        events = [entry_event(entry, custom_metadata) for entry in memories]
        entries = self._store.setdefault((app_name, user_id), {}).setdefault(DIRECT_SESSION, [])
        replaced = {event.id for event in events}
        entries[:] = [entry for entry in entries if entry[0].id not in replaced]
        for event in events:
            assert event.content is not None and event.text is not None
            metadata = dict(event.custom_metadata or {})
            entries.append((event, event.content, _words(event.text), metadata))

    async def delete_memory(
        self, *, app_name: str, user_id: str, memory_id: str | None = None
    ) -> None:
        """Forget the memory ``memory_id`` (a search result's ``id``); no id, no change."""
        if not memory_id:
            return
        key = (app_name, user_id)
        for session_id, entries in self._store.get(key, {}).items():
            self._store[key][session_id] = [e for e in entries if e[0].id != memory_id]
        self._deleted.setdefault(key, set()).add(memory_id)

    async def search_memory(
        self, *, app_name: str, user_id: str, query: str
    ) -> SearchMemoryResponse:
        wanted = _words(query)
        if not wanted:
            return SearchMemoryResponse()
        scored: list[tuple[int, float, str, _Indexed]] = []
        for session_id, entries in self._store.get((app_name, user_id), {}).items():
            for entry in entries:
                hits = len(wanted & entry[2])
                if hits:
                    scored.append((hits, entry[0].timestamp, session_id, entry))
        scored.sort(key=lambda item: (-item[0], -item[1]))
        return SearchMemoryResponse(
            memories=[
                MemoryEntry(
                    content=content,
                    author=event.author,
                    timestamp=datetime.fromtimestamp(event.timestamp, UTC).isoformat(),
                    session_id=session_id,
                    id=event.id,
                    custom_metadata=dict(metadata),
                )
                for _, _, session_id, (event, content, _, metadata) in scored
            ]
        )

    async def delete_memories(
        self, *, app_name: str, user_id: str, session_id: str | None = None
    ) -> None:
        if session_id is None:
            self._store.pop((app_name, user_id), None)
        else:
            self._store.get((app_name, user_id), {}).pop(session_id, None)
