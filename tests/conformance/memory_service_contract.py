"""The memory service contract, run against every backend.

A test module subclasses :class:`MemoryServiceContract` and provides a ``memory_service``
fixture (parametrized over the backends). Each test starts from an empty store. Words used
here are plain dictionary words, so stemming backends and exact-word backends agree.
"""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from eventide import types
from eventide.events import Event, EventActions
from eventide.memory.base_memory_service import BaseMemoryService, MemoryEntry
from eventide.sessions.session import Session

APP = "travel"
USER = "alice"


def event(text: str, *, author: str = "user", timestamp: float = 1_700_000_000.0) -> Event:
    role = "user" if author == "user" else "model"
    return Event(
        author=author,
        timestamp=timestamp,
        content=types.Content(role=role, parts=[types.Part(text=text)]),
    )


def session(
    session_id: str, *texts: str, app_name: str = APP, user_id: str = USER, start: float = 0.0
) -> Session:
    return Session(
        id=session_id,
        app_name=app_name,
        user_id=user_id,
        events=[
            event(
                t, author="user" if i % 2 == 0 else "planner", timestamp=1_700_000_000.0 + start + i
            )
            for i, t in enumerate(texts)
        ],
    )


async def texts_for(
    service: BaseMemoryService, query: str, *, app_name: str = APP, user_id: str = USER
) -> list[str]:
    """The text of each memory found (every remembered event has text)."""
    response = await service.search_memory(app_name=app_name, user_id=user_id, query=query)
    texts = [m.content.text for m in response.memories]
    assert all(text is not None for text in texts)
    return [text for text in texts if text is not None]


FILLER = ("the weather was mild", "breakfast is served at seven", "we talked about music")


class MemoryServiceContract:
    """What every ``BaseMemoryService`` must do."""

    async def test_search_finds_remembered_events(self, memory_service: BaseMemoryService) -> None:
        """An indexed event comes back whole: content, author, session, time, and its id
        (google-adk 2.x's MemoryEntry.id, what delete_memory takes)."""
        remembered = session(
            "s1", "I booked a flight to Lisbon", "Your hotel in Porto is confirmed"
        )
        await memory_service.add_session_to_memory(remembered)
        response = await memory_service.search_memory(app_name=APP, user_id=USER, query="Lisbon")
        assert response.memories == [
            MemoryEntry(
                content=types.Content(
                    role="user", parts=[types.Part(text="I booked a flight to Lisbon")]
                ),
                author="user",
                session_id="s1",
                timestamp=datetime.fromtimestamp(1_700_000_000.0, UTC).isoformat(),
                id=remembered.events[0].id,
            )
        ]
        assert await texts_for(memory_service, "hotel") == ["Your hotel in Porto is confirmed"]
        assert await texts_for(memory_service, "submarine") == []

    async def test_search_is_case_insensitive_and_unicode_aware(
        self, memory_service: BaseMemoryService
    ) -> None:
        await memory_service.add_session_to_memory(
            session("s1", "Dinner at the café in München", *FILLER)
        )
        assert await texts_for(memory_service, "MÜNCHEN") == ["Dinner at the café in München"]
        assert await texts_for(memory_service, "dinner") == ["Dinner at the café in München"]

    async def test_search_is_scoped_to_the_app_and_user(
        self, memory_service: BaseMemoryService
    ) -> None:
        await memory_service.add_session_to_memory(session("s1", "alice likes Lisbon"))
        await memory_service.add_session_to_memory(session("s1", "bob likes Lisbon", user_id="bob"))
        await memory_service.add_session_to_memory(
            session("s1", "other app Lisbon", app_name="other")
        )
        assert await texts_for(memory_service, "lisbon") == ["alice likes Lisbon"]
        assert await texts_for(memory_service, "lisbon", user_id="bob") == ["bob likes Lisbon"]
        assert await texts_for(memory_service, "lisbon", app_name="other") == ["other app Lisbon"]
        assert await texts_for(memory_service, "lisbon", user_id="carol") == []

    async def test_search_spans_the_users_sessions(self, memory_service: BaseMemoryService) -> None:
        await memory_service.add_session_to_memory(session("s1", "trip to Lisbon in May"))
        await memory_service.add_session_to_memory(session("s2", "Lisbon again in June", start=10))
        response = await memory_service.search_memory(app_name=APP, user_id=USER, query="lisbon")
        assert sorted((m.session_id, m.content.text) for m in response.memories) == [
            ("s1", "trip to Lisbon in May"),
            ("s2", "Lisbon again in June"),
        ]

    async def test_adding_a_session_again_reindexes_it_without_duplicates(
        self, memory_service: BaseMemoryService
    ) -> None:
        first = session("s1", "flight to Lisbon", "hotel in Porto")
        await memory_service.add_session_to_memory(first)
        await memory_service.add_session_to_memory(first)
        assert await texts_for(memory_service, "lisbon") == ["flight to Lisbon"]
        grown = first.model_copy(
            update={
                "events": [*first.events, event("Lisbon tram tickets", timestamp=1_700_000_009.0)]
            }
        )
        await memory_service.add_session_to_memory(grown)
        assert sorted(await texts_for(memory_service, "lisbon")) == [
            "Lisbon tram tickets",
            "flight to Lisbon",
        ]
        # What the session no longer holds is no longer remembered.
        shrunk = first.model_copy(update={"events": first.events[1:]})
        await memory_service.add_session_to_memory(shrunk)
        assert await texts_for(memory_service, "lisbon") == []
        assert await texts_for(memory_service, "porto") == ["hotel in Porto"]

    async def test_delete_memories_of_one_session(self, memory_service: BaseMemoryService) -> None:
        await memory_service.add_session_to_memory(session("s1", "Lisbon one"))
        await memory_service.add_session_to_memory(session("s2", "Lisbon two"))
        await memory_service.delete_memories(app_name=APP, user_id=USER, session_id="s1")
        assert await texts_for(memory_service, "lisbon") == ["Lisbon two"]

    async def test_delete_memories_of_a_user(self, memory_service: BaseMemoryService) -> None:
        await memory_service.add_session_to_memory(session("s1", "Lisbon one"))
        await memory_service.add_session_to_memory(session("s2", "Lisbon two"))
        await memory_service.add_session_to_memory(session("s1", "Lisbon bob", user_id="bob"))
        await memory_service.add_session_to_memory(session("s1", "Lisbon app", app_name="other"))
        await memory_service.delete_memories(app_name=APP, user_id=USER)
        assert await texts_for(memory_service, "lisbon") == []
        assert await texts_for(memory_service, "lisbon", user_id="bob") == ["Lisbon bob"]
        assert await texts_for(memory_service, "lisbon", app_name="other") == ["Lisbon app"]
        await memory_service.delete_memories(app_name=APP, user_id="nobody")  # not an error
        # Forgotten sessions can be remembered again.
        await memory_service.add_session_to_memory(session("s1", "Lisbon one"))
        assert await texts_for(memory_service, "lisbon") == ["Lisbon one"]

    async def test_a_memory_matching_more_query_words_ranks_first(
        self, memory_service: BaseMemoryService
    ) -> None:
        await memory_service.add_session_to_memory(
            session(
                "s1",
                "the flight was delayed",
                "hotel breakfast and a Lisbon flight",
                "booked the Lisbon flight",
                *FILLER,
            )
        )
        assert await texts_for(memory_service, "lisbon flight hotel") == [
            "hotel breakfast and a Lisbon flight",
            "booked the Lisbon flight",
            "the flight was delayed",
        ]

    async def test_events_without_text_and_partial_events_are_not_remembered(
        self, memory_service: BaseMemoryService
    ) -> None:
        s = session("s1", "plain Lisbon text")
        s.events += [
            Event(
                author="planner",
                content=types.Content(
                    role="model",
                    parts=[types.Part.from_function_call(name="lisbon", args={"city": "Lisbon"})],
                ),
            ),
            Event(
                author="planner",
                partial=True,
                content=types.Content(role="model", parts=[types.Part(text="Lisbon partial")]),
            ),
            Event(author="planner", actions=EventActions(state_delta={"city": "Lisbon"})),
        ]
        await memory_service.add_session_to_memory(s)
        assert await texts_for(memory_service, "lisbon") == ["plain Lisbon text"]

    async def test_an_empty_session_remembers_nothing(
        self, memory_service: BaseMemoryService
    ) -> None:
        await memory_service.add_session_to_memory(session("s1"))
        assert await texts_for(memory_service, "anything") == []

    @pytest.mark.parametrize("query", ["", "   ", "!!!", "*", '"', "-", "()", "&|!", ":*"])
    async def test_a_query_without_words_finds_nothing(
        self, memory_service: BaseMemoryService, query: str
    ) -> None:
        await memory_service.add_session_to_memory(session("s1", "Lisbon", *FILLER))
        assert await texts_for(memory_service, query) == []

    @pytest.mark.parametrize(
        "query",
        [
            '"lisbon',
            'lisbon"',
            "lisbon AND",
            "AND lisbon OR",
            "NOT lisbon",
            "lisbon*",
            "-lisbon",
            "lisbon -tram",
            "NEAR(lisbon",
            "text:lisbon",
            "(lisbon",
            "^lisbon",
            "'lisbon'",
            "lisbon\\",
            "lisbon <-> tram",
            "lisbon & !porto",
            "lisbon:*",
            "lisbon; DROP TABLE eventide_memory; --",
            "100% lisbon!",
        ],
    )
    async def test_search_syntax_in_a_query_is_plain_text(
        self, memory_service: BaseMemoryService, query: str
    ) -> None:
        """Quotes, operators (AND, OR, NOT, NEAR), prefixes (*), exclusions (-), column
        filters and SQL never raise: the query's words are matched, nothing else."""
        await memory_service.add_session_to_memory(session("s1", "Lisbon itinerary", *FILLER))
        assert await texts_for(memory_service, query) == ["Lisbon itinerary"]

    # --- google-adk 2.x's direct memory writes (issue 34) ---
    async def test_add_memory_then_delete_memory_by_its_id(
        self, memory_service: BaseMemoryService
    ) -> None:
        """add_memory stores entries as given (found by their words, with their id, author
        and time); delete_memory forgets one by id and leaves the others."""
        kept = MemoryEntry(
            id="m-kept",
            author="notes",
            timestamp="2026-01-31T12:00:00+00:00",
            content=types.Content(parts=[types.Part(text="prefers the window seat")]),
        )
        dropped = MemoryEntry(content=types.Content(parts=[types.Part(text="window cleaning")]))
        await memory_service.add_memory(app_name=APP, user_id=USER, memories=[kept, dropped])
        found = (
            await memory_service.search_memory(app_name=APP, user_id=USER, query="window")
        ).memories
        assert sorted(m.content.text or "" for m in found) == [
            "prefers the window seat",
            "window cleaning",
        ]
        first = next(m for m in found if m.id == "m-kept")
        assert (first.author, first.timestamp) == ("notes", "2026-01-31T12:00:00+00:00")
        other = next(m for m in found if m.id != "m-kept")
        assert other.id  # a new id was given
        await memory_service.delete_memory(app_name=APP, user_id=USER, memory_id=other.id)
        assert await texts_for(memory_service, "window") == ["prefers the window seat"]
        await memory_service.delete_memory(app_name="other", user_id=USER, memory_id="m-kept")
        assert await texts_for(memory_service, "window") == ["prefers the window seat"]

    async def test_custom_metadata_is_kept_with_each_memory(
        self, memory_service: BaseMemoryService
    ) -> None:
        """google-adk's ``custom_metadata``: a direct entry keeps the call's merged with its
        own (its own wins); events added with ``add_events_to_memory`` keep the call's; a
        session's events have none."""
        entry = MemoryEntry(
            id="m1",
            content=types.Content(parts=[types.Part(text="likes green tea")]),
            custom_metadata={"source": "entry", "rank": 1},
        )
        await memory_service.add_memory(
            app_name=APP,
            user_id=USER,
            memories=[entry],
            custom_metadata={"source": "call", "batch": "b1"},
        )
        await memory_service.add_events_to_memory(
            app_name=APP,
            user_id=USER,
            events=[event("green tea in the morning")],
            session_id="s9",
            custom_metadata={"batch": "b2"},
        )
        await memory_service.add_session_to_memory(session("s1", "green tea again"))
        found = (
            await memory_service.search_memory(app_name=APP, user_id=USER, query="green")
        ).memories
        by_text = {m.content.text: m.custom_metadata for m in found}
        assert by_text == {
            "likes green tea": {"source": "entry", "rank": 1, "batch": "b1"},
            "green tea in the morning": {"batch": "b2"},
            "green tea again": {},
        }

    async def test_a_memory_deleted_by_id_stays_deleted_when_its_session_is_added_again(
        self, memory_service: BaseMemoryService
    ) -> None:
        remembered = session("s1", "sailing on Sunday", "sailing lessons")
        await memory_service.add_session_to_memory(remembered)
        found = (
            await memory_service.search_memory(app_name=APP, user_id=USER, query="sailing")
        ).memories
        dropped = next(m for m in found if m.content.text == "sailing lessons")
        await memory_service.delete_memory(app_name=APP, user_id=USER, memory_id=dropped.id)
        await memory_service.add_session_to_memory(remembered)
        assert await texts_for(memory_service, "sailing") == ["sailing on Sunday"]

    async def test_add_events_to_memory_adds_to_a_session_without_duplicates(
        self, memory_service: BaseMemoryService
    ) -> None:
        first = event("kayak rental", timestamp=1_700_000_001.0)
        await memory_service.add_events_to_memory(
            app_name=APP, user_id=USER, events=[first], session_id="s1"
        )
        second = event("kayak trip", timestamp=1_700_000_002.0)
        await memory_service.add_events_to_memory(
            app_name=APP, user_id=USER, events=[first, second], session_id="s1"
        )
        assert sorted(await texts_for(memory_service, "kayak")) == ["kayak rental", "kayak trip"]

    async def test_add_memory_refuses_an_entry_without_text(
        self, memory_service: BaseMemoryService
    ) -> None:
        from eventide.errors import UsageError

        empty = MemoryEntry(content=types.Content(parts=[]))
        with pytest.raises(UsageError, match="needs text"):
            await memory_service.add_memory(app_name=APP, user_id=USER, memories=[empty])
