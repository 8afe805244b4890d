"""Session services: where conversations and their state are stored.

``SessionService(store)`` is the session contract over any ``SessionStore`` (see
:mod:`eventide.sessions.session_store` to write one).

``SqlSessionService`` (SQLite, PostgreSQL) and its google-adk names
``DatabaseSessionService`` and ``SqliteSessionService`` are imported on first access: they
need the ``sql`` extra.
"""

from typing import TYPE_CHECKING, Any

from eventide.sessions.base_session_service import BaseSessionService
from eventide.sessions.in_memory_session_service import InMemorySessionService
from eventide.sessions.session import GetSessionConfig, ListSessionsResponse, Session
from eventide.sessions.session_service import SessionService
from eventide.sessions.session_store import (
    AppendOutcome,
    AppendRequest,
    ListedSession,
    LoadedSession,
    SessionStore,
    StoredEvent,
)

if TYPE_CHECKING:  # imported on first access (needs the sql extra)
    from eventide.sessions.sql_session_service import (
        DatabaseSessionService,
        SqliteSessionService,
        SqlSessionService,
    )

__all__ = [
    "AppendOutcome",
    "AppendRequest",
    "BaseSessionService",
    "DatabaseSessionService",
    "GetSessionConfig",
    "InMemorySessionService",
    "ListSessionsResponse",
    "ListedSession",
    "LoadedSession",
    "Session",
    "SessionService",
    "SessionStore",
    "SqlSessionService",
    "SqliteSessionService",
    "StoredEvent",
]


def __getattr__(name: str) -> Any:
    if name in ("DatabaseSessionService", "SqlSessionService", "SqliteSessionService"):
        from eventide.sessions import sql_session_service

        return getattr(sql_session_service, name)
    raise AttributeError(f"module 'eventide.sessions' has no attribute {name!r}")
