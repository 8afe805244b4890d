"""``InMemoryMemoryService``'s google-adk 2.x memory entries (issue 34): custom metadata is
kept with what it was added with, and a memory deleted by id stays deleted when its session
is added again (as google-adk's in-memory service does)."""

from __future__ import annotations

from eventide import types
from eventide.events import Event
from eventide.memory import InMemoryMemoryService
from eventide.memory.base_memory_service import MemoryEntry
from eventide.sessions.session import Session


def _said(text: str) -> Event:
    return Event(author="user", content=types.Content(role="user", parts=[types.Part(text=text)]))


async def test_custom_metadata_comes_back_with_the_memory() -> None:
    memory = InMemoryMemoryService()
    entry = MemoryEntry(
        content=types.Content(parts=[types.Part(text="allergic to peanuts")]),
        custom_metadata={"source": "intake form"},
    )
    await memory.add_memory(app_name="a", user_id="u", memories=[entry], custom_metadata={"ttl": 1})
    await memory.add_events_to_memory(
        app_name="a", user_id="u", events=[_said("peanuts again")], custom_metadata={"ttl": 2}
    )
    found = await memory.search_memory(app_name="a", user_id="u", query="peanuts")
    assert sorted((m.content.text, m.custom_metadata) for m in found.memories) == [
        ("allergic to peanuts", {"ttl": 1, "source": "intake form"}),
        ("peanuts again", {"ttl": 2}),
    ]


async def test_a_deleted_memory_stays_deleted_when_its_session_is_added_again() -> None:
    memory = InMemoryMemoryService()
    session = Session(id="s", app_name="a", user_id="u", events=[_said("the red door")])
    await memory.add_session_to_memory(session)
    [found] = (await memory.search_memory(app_name="a", user_id="u", query="door")).memories
    assert found.id is not None
    await memory.delete_memory(app_name="a", user_id="u", memory_id=found.id)
    await memory.add_session_to_memory(session)
    assert (await memory.search_memory(app_name="a", user_id="u", query="door")).memories == []
