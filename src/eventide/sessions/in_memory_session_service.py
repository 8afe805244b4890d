"""``InMemorySessionService``: sessions in process memory; for tests, demos and one process."""

from __future__ import annotations

from eventide.sessions.in_memory_session_store import InMemorySessionStore
from eventide.sessions.session_service import DEFAULT_MAX_EVENT_BYTES, SessionService

__all__ = ["InMemorySessionService"]


class InMemorySessionService(SessionService):
    """Keeps sessions in process memory. Everything is lost when the process exits.

    The same contract as every session service (see
    :mod:`eventide.sessions.session_service`): it is :class:`SessionService` over the
    in-memory store, which keeps the rows a SQL database would. Returned sessions are
    copies: changing one never changes what is stored.

    Args:
        compare_and_set: refuse (``StaleSessionError``) an append whose session copy is
            behind the stored log, instead of folding the newer events in.
        max_event_bytes: the largest event (as JSON) the service accepts.
    """

    def __init__(
        self, *, compare_and_set: bool = False, max_event_bytes: int = DEFAULT_MAX_EVENT_BYTES
    ) -> None:
        super().__init__(
            InMemorySessionStore(),
            compare_and_set=compare_and_set,
            max_event_bytes=max_event_bytes,
        )
