"""Session services: where conversations and their state are stored."""

from eventide.sessions.base_session_service import BaseSessionService
from eventide.sessions.in_memory_session_service import InMemorySessionService
from eventide.sessions.session import GetSessionConfig, ListSessionsResponse, Session

__all__ = [
    "BaseSessionService",
    "GetSessionConfig",
    "InMemorySessionService",
    "ListSessionsResponse",
    "Session",
]
