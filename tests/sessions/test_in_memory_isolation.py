"""The in-memory service hands out copies: what a caller does to its objects after an append
or a read never changes what is stored, and the cached parsed log (which makes a whole-session
read cost only its new events) is never a list a caller holds."""

from __future__ import annotations

from eventide import Event, EventActions, types
from eventide.sessions.in_memory_session_service import InMemorySessionService
from eventide.sessions.session import Session


def _event(text: str, **delta: object) -> Event:
    return Event(
        author="agent",
        invocation_id="inv",
        content=types.Content(role="model", parts=[types.Part(text=text)]),
        actions=EventActions(state_delta=dict(delta)),
    )


async def _read(service: InMemorySessionService, session_id: str) -> Session:
    session = await service.get_session(app_name="app", user_id="u", session_id=session_id)
    assert session is not None
    return session


async def test_mutating_an_appended_event_does_not_change_the_stored_one() -> None:
    service = InMemorySessionService()
    session = await service.create_session(app_name="app", user_id="u", session_id="s")
    event = _event("hello", items=[1, 2], nested={"a": [1]})
    await service.append_event(session, event)
    assert event.content is not None and event.content.parts is not None
    event.content.parts[0].text = "changed"
    event.actions.state_delta["items"].append(3)
    event.actions.state_delta["nested"]["a"].append(2)
    session.state["items"].append(4)
    stored = await _read(service, "s")
    assert stored.events[0].content is not None and stored.events[0].content.parts is not None
    assert stored.events[0].content.parts[0].text == "hello"
    assert stored.events[0].actions.state_delta == {"items": [1, 2], "nested": {"a": [1]}}
    assert stored.state == {"items": [1, 2], "nested": {"a": [1]}}
    assert stored.events[0] is not event


async def test_a_read_sessions_state_and_event_list_are_its_own() -> None:
    service = InMemorySessionService()
    session = await service.create_session(
        app_name="app", user_id="u", session_id="s", state={"app:tags": ["a"], "k": {"x": 1}}
    )
    for i in range(3):
        await service.append_event(session, _event(f"e{i}"))
    first = await _read(service, "s")
    first.state["app:tags"].append("b")
    first.state["k"]["x"] = 2
    first.events.append(_event("not committed"))
    del first.events[0]
    second = await _read(service, "s")
    assert second.state == {"app:tags": ["a"], "k": {"x": 1}}
    assert [e.content.parts[0].text for e in second.events if e.content and e.content.parts] == [
        "e0",
        "e1",
        "e2",
    ]
    assert second.events is not first.events


async def test_cached_log_picks_up_every_writers_events_in_order() -> None:
    """The parsed log kept between reads is extended in place with what other copies
    committed; earlier readers' lists do not grow with it."""
    service = InMemorySessionService()
    session = await service.create_session(app_name="app", user_id="u", session_id="s")
    await service.append_event(session, _event("a"))
    early = await _read(service, "s")
    other = await _read(service, "s")
    await service.append_event(other, _event("b"))
    await service.append_event(other, _event("c"))
    late = await _read(service, "s")
    assert [e.id for e in late.events] == [e.id for e in other.events]
    assert len(late.events) == 3 and late.log_position == 3
    assert len(early.events) == 1
    # A stale copy still folds the others' events in before its own.
    await service.append_event(early, _event("d"))
    assert [e.content.parts[0].text for e in early.events if e.content and e.content.parts] == [
        "a",
        "b",
        "c",
        "d",
    ]
    final = await _read(service, "s")
    assert [e.id for e in final.events] == [e.id for e in early.events]


async def test_recreated_session_is_not_served_from_the_old_cached_log() -> None:
    service = InMemorySessionService()
    session = await service.create_session(app_name="app", user_id="u", session_id="s")
    await service.append_event(session, _event("old"))
    assert len((await _read(service, "s")).events) == 1
    await service.delete_session(app_name="app", user_id="u", session_id="s")
    again = await service.create_session(app_name="app", user_id="u", session_id="s")
    assert (await _read(service, "s")).events == []
    await service.append_event(again, _event("new"))
    events = (await _read(service, "s")).events
    assert [e.content.parts[0].text for e in events if e.content and e.content.parts] == ["new"]
