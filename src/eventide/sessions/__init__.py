"""Session services: where conversations and their state are stored.

``SqlSessionService`` (SQLite, PostgreSQL) is imported on first access: it needs the
``sql`` extra.
"""

from typing import TYPE_CHECKING, Any

from eventide.sessions.base_session_service import BaseSessionService
from eventide.sessions.in_memory_session_service import InMemorySessionService
from eventide.sessions.session import GetSessionConfig, ListSessionsResponse, Session

if TYPE_CHECKING:  # imported on first access (needs the sql extra)
    from eventide.sessions.sql_session_service import SqlSessionService

__all__ = [
    "BaseSessionService",
    "GetSessionConfig",
    "InMemorySessionService",
    "ListSessionsResponse",
    "Session",
    "SqlSessionService",
]


def __getattr__(name: str) -> Any:
    if name == "SqlSessionService":
        from eventide.sessions.sql_session_service import SqlSessionService

        return SqlSessionService
    raise AttributeError(f"module 'eventide.sessions' has no attribute {name!r}")
