"""A whole-session read lends the service's kept list of parsed events instead of copying it,
and the next read takes it back only when nobody holds it and it was only appended to: a long
session's turn must not cost a copy of its history (issue 18), and a caller's changes to a
list it was given must never reach what later reads return."""

from __future__ import annotations

import copy
import pickle
import weakref
from collections.abc import AsyncIterator, Callable
from pathlib import Path

import pytest

from eventide import Event, EventActions, LlmAgent, Runner, types
from eventide.contexts import CallbackContext
from eventide.models.llm_request import LlmRequest
from eventide.sessions.in_memory_session_service import InMemorySessionService
from eventide.sessions.session import Session
from eventide.sessions.session_service import SessionService
from eventide.sessions.sql_session_service import SqlSessionService
from eventide.testing import FunctionModel


@pytest.fixture(params=["memory", "sqlite"])
async def service(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[SessionService]:
    if request.param == "memory":
        yield InMemorySessionService()
        return
    sql = SqlSessionService(f"sqlite:///{tmp_path / 'sessions.db'}")
    yield sql
    await sql.close()


def _event(text: str) -> Event:
    return Event(
        author="agent",
        invocation_id="inv",
        content=types.Content(role="model", parts=[types.Part(text=text)]),
        actions=EventActions(state_delta={"last": text}),
    )


def _texts(session: Session) -> list[str]:
    return [(e.content.parts or [types.Part()])[0].text or "" for e in session.events if e.content]


async def _read(service: SessionService) -> Session:
    session = await service.get_session(app_name="app", user_id="u", session_id="s")
    assert session is not None
    return session


async def _session_with(service: SessionService, *texts: str) -> None:
    session = await service.create_session(app_name="app", user_id="u", session_id="s")
    for text in texts:
        await service.append_event(session, _event(text))


async def test_a_dropped_sessions_list_is_taken_back_by_the_next_read(
    service: SessionService,
) -> None:
    """No copy of the history per read: the list lent to a session nobody holds any more is
    the next read's, with what the holder committed since (parsed from the log) and without
    what it appended but never committed."""
    await _session_with(service, "a", "b")
    first = await _read(service)
    lent = weakref.ref(first.events)
    await service.append_event(first, _event("c"))
    first.events.append(_event("never committed"))
    del first
    second = await _read(service)
    assert second.events is lent()
    assert _texts(second) == ["a", "b", "c"]
    assert second.log_position == 3


async def test_a_list_still_held_is_left_to_its_holder(service: SessionService) -> None:
    await _session_with(service, "a", "b")
    first = await _read(service)
    second = await _read(service)
    assert second.events is not first.events
    first.events.append(_event("first's own"))
    await service.append_event(second, _event("c"))
    assert _texts(first) == ["a", "b", "first's own"]
    assert _texts(second) == ["a", "b", "c"]
    del first.events[0]
    first.events[0] = _event("changed")
    held = first.events
    del first, second
    third = await _read(service)
    assert third.events is not held
    assert _texts(third) == ["a", "b", "c"]


def _pop_then_append(events: list[Event]) -> None:
    events.pop()
    events.append(_event("x"))


_CHANGES: dict[str, Callable[[list[Event]], object]] = {
    "set item": lambda events: events.__setitem__(0, _event("x")),
    "set slice": lambda events: events.__setitem__(slice(0, 1), [_event("x")]),
    "del item": lambda events: events.__delitem__(0),
    "insert": lambda events: events.insert(0, _event("x")),
    "pop": lambda events: events.pop(),
    "pop then append": _pop_then_append,
    "remove": lambda events: events.remove(events[0]),
    "clear": lambda events: events.clear(),
    "reverse": lambda events: events.reverse(),
    "sort": lambda events: events.sort(key=lambda e: e.id),
    "multiply by 0": lambda events: events.__imul__(0),
}


@pytest.mark.parametrize("change", sorted(_CHANGES))
async def test_a_list_changed_otherwise_than_by_appending_is_not_taken_back(
    service: SessionService, change: str
) -> None:
    """Whatever a caller does to its list, the next read returns the log."""
    await _session_with(service, "a", "b", "c")
    first = await _read(service)
    _CHANGES[change](first.events)
    changed = first.events
    del first
    second = await _read(service)
    assert second.events is not changed
    assert _texts(second) == ["a", "b", "c"]
    assert [e.actions.state_delta for e in second.events] == [
        {"last": "a"},
        {"last": "b"},
        {"last": "c"},
    ]


async def test_a_lent_list_copies_pickles_and_serializes_as_a_list(
    service: SessionService,
) -> None:
    await _session_with(service, "a", "b")
    session = await _read(service)
    plain = Session.model_validate(session.model_dump())
    assert type(plain.events) is list
    assert plain.model_dump_json() == session.model_dump_json()
    assert copy.deepcopy(session).model_dump() == session.model_dump()
    assert pickle.loads(pickle.dumps(session)).model_dump() == session.model_dump()
    assert session.events == plain.events


async def test_runner_turns_reuse_one_list_for_a_long_session(service: SessionService) -> None:
    """Each turn of the Runner reads the whole session; the list the previous turn used is
    released when the turn ends (nothing keeps the invocation alive), so the next turn's read
    takes it back instead of copying the history. The model sees every turn all the same."""
    lists: list[weakref.ref[list[Event]]] = []

    def note_list(callback_context: CallbackContext, llm_request: LlmRequest) -> None:
        lists.append(weakref.ref(callback_context.session.events))

    model = FunctionModel(function=lambda request: f"seen {len(request.contents)}")
    agent = LlmAgent(name="agent", model=model, before_model_callback=note_list)
    runner = Runner(app_name="app", agent=agent, session_service=service)
    await service.create_session(app_name="app", user_id="u", session_id="s")
    for i in range(5):
        async for _ in runner.run_async(user_id="u", session_id="s", new_message=f"m{i}"):
            pass
    await runner.close()
    assert len(lists) == 5
    kept = lists[1]()
    assert kept is not None
    assert all(ref() is kept for ref in lists[1:])
    assert [len(r.contents) for r in model.requests] == [1, 3, 5, 7, 9]
    session = await _read(service)
    assert len(session.events) == 10
