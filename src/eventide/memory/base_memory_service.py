"""The memory service contract: long-term recall across a user's sessions."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from pydantic import Field

from eventide import types
from eventide._model import EventideModel
from eventide.sessions.session import Session

if TYPE_CHECKING:
    from eventide.events import Event

__all__ = ["BaseMemoryService", "MemoryEntry", "SearchMemoryResponse"]


class MemoryEntry(EventideModel):
    """One remembered piece of a past conversation.

    ``id`` names it for :meth:`BaseMemoryService.delete_memory` (a remembered event's id);
    ``custom_metadata`` is what was given when it was added (google-adk's fields).
    """

    content: types.Content
    custom_metadata: dict[str, Any] = Field(default_factory=dict)
    id: str | None = None
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

    async def add_events_to_memory(
        self,
        *,
        app_name: str,
        user_id: str,
        events: Sequence[Event],
        session_id: str | None = None,
        custom_metadata: Mapping[str, object] | None = None,
    ) -> None:
        """Index these events as an addition to what is remembered of the session (not the
        whole session). Optional: the default says this service cannot."""
        raise NotImplementedError(
            f"{type(self).__name__} cannot add events to memory one batch at a time; call "
            "add_session_to_memory(session) to add the whole session."
        )

    async def add_memory(
        self,
        *,
        app_name: str,
        user_id: str,
        memories: Sequence[MemoryEntry],
        custom_metadata: Mapping[str, object] | None = None,
    ) -> None:
        """Store these memory entries directly. Optional: the default says this service
        cannot."""
        raise NotImplementedError(
            f"{type(self).__name__} takes no direct memory writes; add events with "
            "add_events_to_memory(...) or add_session_to_memory(session) instead."
        )

    async def delete_memory(
        self, *, app_name: str, user_id: str, memory_id: str | None = None
    ) -> None:
        """Forget one memory by its id. Optional: the default says this service cannot."""
        raise NotImplementedError(
            f"{type(self).__name__} cannot delete single memories; delete_memories(...) "
            "forgets a user's (or one session's) memories."
        )

    async def close(self) -> None:  # noqa: B027 - optional hook
        """Release resources."""
