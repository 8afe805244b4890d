"""The memory service contract: long-term recall across a user's sessions."""

from __future__ import annotations

from abc import ABC, abstractmethod

from pydantic import Field

from eventide import types
from eventide._model import EventideModel
from eventide.sessions.session import Session

__all__ = ["BaseMemoryService", "MemoryEntry", "SearchMemoryResponse"]


class MemoryEntry(EventideModel):
    """One remembered piece of a past conversation."""

    content: types.Content
    author: str | None = None
    timestamp: str | None = None
    session_id: str | None = None


class SearchMemoryResponse(EventideModel):
    """The memories matching a query, best first."""

    memories: list[MemoryEntry] = Field(default_factory=list)


class BaseMemoryService(ABC):
    """Indexes finished sessions and searches them for a user."""

    @abstractmethod
    async def add_session_to_memory(self, session: Session) -> None:
        """Index the session's events with text. Adding the same session again re-indexes it
        (no duplicates)."""

    @abstractmethod
    async def search_memory(
        self, *, app_name: str, user_id: str, query: str
    ) -> SearchMemoryResponse:
        """The user's memories in the app that match ``query``, best first."""

    @abstractmethod
    async def delete_memories(
        self, *, app_name: str, user_id: str, session_id: str | None = None
    ) -> None:
        """Forget the user's memories (of one session, when ``session_id`` is given)."""

    async def close(self) -> None:  # noqa: B027 - optional hook
        """Release resources."""
