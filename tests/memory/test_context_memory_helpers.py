"""The memory helpers of google-adk's ``Context`` on Eventide's callback and tool contexts:
``add_events_to_memory``, ``add_memory``, ``delete_memory`` (spec: memory is reached through
the Runner's memory service; without one, a clear error naming what to pass)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import pytest

from eventide import (
    CallbackContext,
    Event,
    InMemoryMemoryService,
    InMemorySessionService,
    LlmAgent,
    ToolContext,
    types,
)
from eventide.contexts import InvocationContext
from eventide.errors import ConfigurationError
from eventide.memory.base_memory_service import (
    BaseMemoryService,
    MemoryEntry,
    SearchMemoryResponse,
)
from eventide.sessions.session import Session


class SearchOnlyMemory(BaseMemoryService):
    """A memory service that implements only the required methods."""

    async def add_session_to_memory(self, session: Session) -> None:
        return None

    async def search_memory(
        self, *, app_name: str, user_id: str, query: str
    ) -> SearchMemoryResponse:
        return SearchMemoryResponse()

    async def delete_memories(
        self, *, app_name: str, user_id: str, session_id: str | None = None
    ) -> None:
        return None


class RecordingMemory(SearchOnlyMemory):
    """Records the optional calls it receives."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, dict[str, object]]] = []

    async def add_memory(
        self,
        *,
        app_name: str,
        user_id: str,
        memories: Sequence[MemoryEntry],
        custom_metadata: Mapping[str, object] | None = None,
    ) -> None:
        self.calls.append(
            (
                "add_memory",
                {"app": app_name, "user": user_id, "n": len(memories), "meta": custom_metadata},
            )
        )

    async def delete_memory(
        self, *, app_name: str, user_id: str, memory_id: str | None = None
    ) -> None:
        self.calls.append(("delete_memory", {"app": app_name, "user": user_id, "id": memory_id}))


async def _context(memory: BaseMemoryService | None) -> ToolContext:
    sessions = InMemorySessionService()
    session = await sessions.create_session(app_name="app", user_id="u", session_id="s1")
    ictx = InvocationContext(
        invocation_id="inv",
        agent=LlmAgent(name="a"),
        session=session,
        session_service=sessions,
        memory_service=memory,
    )
    return ToolContext(ictx, function_call_id="call-1")


def _said(text: str, event_id: str) -> Event:
    return Event(
        id=event_id,
        author="user",
        content=types.Content(role="user", parts=[types.Part(text=text)]),
    )


async def test_add_events_to_memory_makes_them_searchable_in_the_session_scope() -> None:
    memory = InMemoryMemoryService()
    ctx = await _context(memory)
    turn = [_said("my parrot is called Kiwi", "e1")]
    await ctx.add_events_to_memory(events=turn, custom_metadata={"ttl": "60s"})
    await ctx.add_events_to_memory(events=turn)  # the same event again: not duplicated
    found = await ctx.search_memory("parrot")
    assert [(m.session_id, m.author) for m in found.memories] == [("s1", "user")]
    other_user = await memory.search_memory(app_name="app", user_id="v", query="parrot")
    assert other_user.memories == []


async def test_add_memory_and_delete_memory_reach_the_service_with_the_users_scope() -> None:
    memory = RecordingMemory()
    ctx = await _context(memory)
    entry = MemoryEntry(content=types.Content(parts=[types.Part(text="likes tea")]))
    await ctx.add_memory(memories=[entry], custom_metadata={"ttl": "60s"})
    await CallbackContext(ctx.invocation_context).delete_memory("m-7")
    assert memory.calls == [
        ("add_memory", {"app": "app", "user": "u", "n": 1, "meta": {"ttl": "60s"}}),
        ("delete_memory", {"app": "app", "user": "u", "id": "m-7"}),
    ]


async def test_a_service_without_the_optional_methods_says_what_it_can_do() -> None:
    ctx = await _context(SearchOnlyMemory())
    with pytest.raises(NotImplementedError, match="add_session_to_memory"):
        await ctx.add_events_to_memory(events=[_said("x", "e1")])
    with pytest.raises(NotImplementedError, match="no direct memory writes"):
        await ctx.add_memory(memories=[])
    with pytest.raises(NotImplementedError, match="delete_memories"):
        await ctx.delete_memory("m-1")


@pytest.mark.parametrize(
    ("call", "adk_text"),
    [
        ("add_events_to_memory", "Cannot add events to memory: memory service is not available."),
        ("add_memory", "Cannot add memory: memory service is not available."),
        ("delete_memory", "Cannot delete memory: memory service is not available."),
        ("search_memory", "Memory service is not available."),
        ("add_session_to_memory", "Cannot add session to memory: memory service is not available."),
    ],
)
async def test_without_a_memory_service_the_error_starts_with_google_adks_text(
    call: str, adk_text: str
) -> None:
    ctx = await _context(None)
    every: dict[str, dict[str, object]] = {
        "add_events_to_memory": {"events": []},
        "add_memory": {"memories": []},
        "delete_memory": {"memory_id": "m"},
        "search_memory": {"query": "q"},
        "add_session_to_memory": {},
    }
    arguments = every[call]
    with pytest.raises(ConfigurationError) as raised:
        await getattr(ctx, call)(**arguments)
    assert str(raised.value).startswith(adk_text)
    assert "memory_service=" in str(raised.value)
    assert isinstance(raised.value, ValueError)  # what google-adk raises
