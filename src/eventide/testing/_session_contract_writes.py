"""The session contract's tests, first part: sessions, state scopes and appends (see
:mod:`eventide.testing.session_contract`, which runs both parts)."""

from __future__ import annotations

import uuid
from typing import Any

import pytest

from eventide import types
from eventide.errors import AlreadyExistsError, SessionNotFoundError
from eventide.events import Event, EventActions
from eventide.sessions.base_session_service import BaseSessionService
from eventide.sessions.session import Session

__all__ = [
    "test_a_delta_changed_after_its_commit_changes_nothing_stored",
    "test_app_state_is_shared_by_the_apps_sessions_and_not_across_apps",
    "test_append_assigns_id_and_timestamp",
    "test_append_to_a_missing_session_raises",
    "test_create_and_get_round_trip",
    "test_create_rejects_a_taken_session_id",
    "test_delete_session_removes_it_and_its_events",
    "test_get_missing_session_returns_none",
    "test_initial_state_is_kept_as_given",
    "test_initial_state_with_scoped_keys",
    "test_list_sessions_filters_pages_and_omits_events",
    "test_one_delta_mixing_every_scope",
    "test_partial_events_are_never_stored",
    "test_state_is_the_fold_of_deltas",
    "test_temp_state_is_never_stored",
    "test_user_state_is_shared_by_a_users_sessions_and_not_across_users",
]


def _app() -> str:
    # Each test works in its own app, so backends shared between tests stay independent.
    return f"app_{uuid.uuid4().hex[:10]}"


def _event(author: str = "agent", /, **delta: Any) -> Event:
    return Event(
        author=author,
        invocation_id="inv-1",
        content=types.Content(role="model", parts=[types.Part(text=f"{author} says hi")]),
        actions=EventActions(state_delta=dict(delta)),
    )


async def _reload(service: BaseSessionService, session: Session) -> Session:
    fresh = await service.get_session(
        app_name=session.app_name, user_id=session.user_id, session_id=session.id
    )
    assert fresh is not None
    return fresh


def _dump(events: list[Event]) -> list[dict[str, Any]]:  # pyright: ignore[reportUnusedFunction]
    return [e.model_dump(mode="json") for e in events]


async def test_create_and_get_round_trip(session_service: BaseSessionService) -> None:
    """Contract: create_session stores a session with its initial state; get_session returns
    the same id, app, user and state, and no events yet."""
    app = _app()
    created = await session_service.create_session(
        app_name=app, user_id="u1", state={"topic": "billing", "n": 1}, session_id="s1"
    )
    assert (created.id, created.app_name, created.user_id) == ("s1", app, "u1")
    assert created.state == {"topic": "billing", "n": 1}
    assert created.events == []
    got = await session_service.get_session(app_name=app, user_id="u1", session_id="s1")
    assert got is not None
    assert (got.id, got.state, got.events) == ("s1", {"topic": "billing", "n": 1}, [])
    generated = await session_service.create_session(app_name=app, user_id="u1")
    assert generated.id and generated.id != "s1"


async def test_create_rejects_a_taken_session_id(session_service: BaseSessionService) -> None:
    """Contract: create_session with an existing session_id raises AlreadyExistsError (a
    UsageError) and leaves the stored session untouched."""
    app = _app()
    await session_service.create_session(app_name=app, user_id="u", state={"a": 1}, session_id="s")
    with pytest.raises(AlreadyExistsError, match="already exists"):
        await session_service.create_session(
            app_name=app, user_id="u", state={"a": 2}, session_id="s"
        )
    got = await session_service.get_session(app_name=app, user_id="u", session_id="s")
    assert got is not None and got.state == {"a": 1}


async def test_get_missing_session_returns_none(session_service: BaseSessionService) -> None:
    """Contract: get_session of an unknown session (or another user's) returns None."""
    app = _app()
    await session_service.create_session(app_name=app, user_id="u", session_id="s")
    assert await session_service.get_session(app_name=app, user_id="u", session_id="x") is None
    assert await session_service.get_session(app_name=app, user_id="v", session_id="s") is None


async def test_list_sessions_filters_pages_and_omits_events(
    session_service: BaseSessionService,
) -> None:
    """Contract: list_sessions returns the app's sessions (one user's when user_id is given),
    with their state and without events, in pages that together hold every session exactly once."""
    app = _app()
    for user, sid in [("u1", "a"), ("u1", "b"), ("u2", "c"), ("u1", "d"), ("u2", "e")]:
        session = await session_service.create_session(app_name=app, user_id=user, session_id=sid)
        await session_service.append_event(session, _event(x=sid))
    await session_service.create_session(app_name=_app(), user_id="u1", session_id="other-app")

    everything = await session_service.list_sessions(app_name=app)
    assert sorted((s.user_id, s.id) for s in everything.sessions) == [
        ("u1", "a"),
        ("u1", "b"),
        ("u1", "d"),
        ("u2", "c"),
        ("u2", "e"),
    ]
    assert all(s.events == [] and s.app_name == app for s in everything.sessions)
    mine = await session_service.list_sessions(app_name=app, user_id="u2")
    assert sorted(s.id for s in mine.sessions) == ["c", "e"]

    seen: list[str] = []
    token: str | None = None
    pages = 0
    while True:
        page = await session_service.list_sessions(app_name=app, page_size=2, page_token=token)
        assert len(page.sessions) <= 2
        seen += [s.id for s in page.sessions]
        pages += 1
        token = page.next_page_token
        if token is None:
            break
    assert sorted(seen) == ["a", "b", "c", "d", "e"]
    assert pages == 3


async def test_delete_session_removes_it_and_its_events(
    session_service: BaseSessionService,
) -> None:
    """Contract: delete_session removes the session and its events; deleting a missing
    session is not an error; the same id can then be created afresh."""
    app = _app()
    session = await session_service.create_session(app_name=app, user_id="u", session_id="s")
    await session_service.append_event(session, _event(k=1))
    await session_service.delete_session(app_name=app, user_id="u", session_id="s")
    assert await session_service.get_session(app_name=app, user_id="u", session_id="s") is None
    await session_service.delete_session(app_name=app, user_id="u", session_id="s")
    again = await session_service.create_session(app_name=app, user_id="u", session_id="s")
    assert (await _reload(session_service, again)).events == []


async def test_initial_state_with_scoped_keys(session_service: BaseSessionService) -> None:
    """Spec 003, state prefixes: a session's initial state may hold app: and user: keys,
    which land in the app's and the user's shared state; temp: keys are dropped."""
    app = _app()
    first = await session_service.create_session(
        app_name=app,
        user_id="u",
        state={"app:plan": "pro", "user:lang": "fr", "temp:scratch": 1, "k": "v"},
    )
    assert first.state == {"app:plan": "pro", "user:lang": "fr", "k": "v"}
    second = await session_service.create_session(app_name=app, user_id="u")
    assert second.state == {"app:plan": "pro", "user:lang": "fr"}
    other_user = await session_service.create_session(app_name=app, user_id="w")
    assert other_user.state == {"app:plan": "pro"}


async def test_initial_state_is_kept_as_given(session_service: BaseSessionService) -> None:
    """Rule (rewind and fork start from it): ``get_initial_state`` returns the state given
    to ``create_session``, every scope, without ``temp:`` keys, unchanged by later events;
    None for a session that does not exist."""
    app = _app()
    session = await session_service.create_session(
        app_name=app,
        user_id="u",
        state={"app:plan": "pro", "user:lang": "fr", "temp:scratch": 1, "k": [1, {"a": None}]},
    )
    await session_service.append_event(session, _event(k="changed", extra=2))
    assert await session_service.get_initial_state(
        app_name=app, user_id="u", session_id=session.id
    ) == {"app:plan": "pro", "user:lang": "fr", "k": [1, {"a": None}]}
    bare = await session_service.create_session(app_name=app, user_id="u")
    assert (
        await session_service.get_initial_state(app_name=app, user_id="u", session_id=bare.id) == {}
    )
    assert (
        await session_service.get_initial_state(app_name=app, user_id="u", session_id="missing")
        is None
    )


async def test_app_state_is_shared_by_the_apps_sessions_and_not_across_apps(
    session_service: BaseSessionService,
) -> None:
    """Spec 003, state prefixes: app: keys are shared by every user and session of the app,
    and by no other app."""
    app, other_app = _app(), _app()
    writer = await session_service.create_session(app_name=app, user_id="u1")
    await session_service.append_event(writer, _event(**{"app:motd": "hello"}))
    for user in ("u1", "u2"):
        reader = await session_service.create_session(app_name=app, user_id=user)
        assert (await _reload(session_service, reader)).state == {"app:motd": "hello"}
    stranger = await session_service.create_session(app_name=other_app, user_id="u1")
    assert (await _reload(session_service, stranger)).state == {}


async def test_user_state_is_shared_by_a_users_sessions_and_not_across_users(
    session_service: BaseSessionService,
) -> None:
    """Spec 003, state prefixes: user: keys are shared by one user's sessions of the app, and
    not by other users (nor by the same user id in another app)."""
    app = _app()
    writer = await session_service.create_session(app_name=app, user_id="alice")
    await session_service.append_event(writer, _event(**{"user:name": "Alice"}))
    sibling = await session_service.create_session(app_name=app, user_id="alice")
    assert (await _reload(session_service, sibling)).state == {"user:name": "Alice"}
    assert (await _reload(session_service, writer)).state == {"user:name": "Alice"}
    bob = await session_service.create_session(app_name=app, user_id="bob")
    assert (await _reload(session_service, bob)).state == {}
    elsewhere = await session_service.create_session(app_name=_app(), user_id="alice")
    assert (await _reload(session_service, elsewhere)).state == {}


async def test_temp_state_is_never_stored(session_service: BaseSessionService) -> None:
    """Spec 003, state prefixes: temp: keys live for the invocation only and are never
    stored, neither in the state nor in the stored event's state_delta."""
    session = await session_service.create_session(app_name=_app(), user_id="u")
    await session_service.append_event(session, _event(**{"temp:draft": "x", "kept": 1}))
    fresh = await _reload(session_service, session)
    assert fresh.state == {"kept": 1}
    assert fresh.events[0].actions.state_delta == {"kept": 1}


async def test_one_delta_mixing_every_scope(session_service: BaseSessionService) -> None:
    """Spec 003, state prefixes: one event's delta with app:, user:, temp: and session keys
    sends each key to its scope and drops the temp: ones (the event's delta included)."""
    app = _app()
    session = await session_service.create_session(app_name=app, user_id="alice")
    delta = {"app:motd": "hi", "user:name": "Alice", "temp:scratch": [1], "step": 2}
    event = await session_service.append_event(session, _event(**delta))
    kept = {"app:motd": "hi", "user:name": "Alice", "step": 2}
    assert event.actions.state_delta == kept
    assert session.state == kept
    fresh = await _reload(session_service, session)
    assert fresh.state == kept
    assert fresh.events[0].actions.state_delta == kept
    sibling = await session_service.create_session(app_name=app, user_id="alice")
    assert (await _reload(session_service, sibling)).state == {
        "app:motd": "hi",
        "user:name": "Alice",
    }
    bob = await session_service.create_session(app_name=app, user_id="bob")
    assert (await _reload(session_service, bob)).state == {"app:motd": "hi"}
    await session_service.append_event(session, _event(**{"temp:only": 1}))
    assert (await _reload(session_service, session)).state == kept


async def test_a_delta_changed_after_its_commit_changes_nothing_stored(
    session_service: BaseSessionService,
) -> None:
    """Contract, stored events are immutable: changing a committed event's state_delta (its
    keys or a value's contents) afterwards changes neither the stored state nor the stored
    event."""
    session = await session_service.create_session(app_name=_app(), user_id="u")
    event = await session_service.append_event(session, _event(n=1, items=[1]))
    event.actions.state_delta["n"] = 2
    event.actions.state_delta["late"] = True
    event.actions.state_delta["items"].append(2)
    fresh = await _reload(session_service, session)
    assert fresh.state == {"n": 1, "items": [1]}
    assert fresh.events[0].actions.state_delta == {"n": 1, "items": [1]}


async def test_partial_events_are_never_stored(session_service: BaseSessionService) -> None:
    """Spec 004 (streaming with partial) / DESIGN rule: partial events are forwarded, never
    committed, and their actions never take effect."""
    session = await session_service.create_session(app_name=_app(), user_id="u")
    chunk = _event(ignored=True)
    chunk.partial = True
    returned = await session_service.append_event(session, chunk)
    assert returned is chunk
    fresh = await _reload(session_service, session)
    assert (fresh.events, fresh.state) == ([], {})
    assert session.events == [] and session.state == {}


async def test_append_assigns_id_and_timestamp(session_service: BaseSessionService) -> None:
    """Spec 003, Event structure: a committed event has an id and a timestamp; append_event
    fills them in and returns the event; the caller's session gets the event, the state and
    last_update_time."""
    session = await session_service.create_session(app_name=_app(), user_id="u")
    event = _event(k=1)
    event.id = ""
    event.timestamp = 0.0
    returned = await session_service.append_event(session, event)
    assert returned is event
    assert event.id and event.timestamp > 0
    assert session.events == [event]
    assert session.state == {"k": 1}
    assert session.last_update_time == event.timestamp
    stored = await _reload(session_service, session)
    assert [e.id for e in stored.events] == [event.id]
    assert stored.last_update_time == pytest.approx(event.timestamp)


async def test_append_to_a_missing_session_raises(session_service: BaseSessionService) -> None:
    """Contract: appending to a session that does not exist (or was deleted) raises
    SessionNotFoundError."""
    app = _app()
    session = await session_service.create_session(app_name=app, user_id="u", session_id="s")
    await session_service.delete_session(app_name=app, user_id="u", session_id="s")
    with pytest.raises(SessionNotFoundError):
        await session_service.append_event(session, _event(k=1))


async def test_state_is_the_fold_of_deltas(session_service: BaseSessionService) -> None:
    """DESIGN, the log is the truth / spec 004 state commit: the stored state equals the
    fold of the committed state_deltas in log order (later writes win; None is a value)."""
    session = await session_service.create_session(
        app_name=_app(), user_id="u", state={"a": 0, "keep": "x"}
    )
    deltas: list[dict[str, Any]] = [
        {"a": 1, "b": [1, 2]},
        {"a": 2, "c": {"nested": True}},
        {"b": None, "user:u": 1.5},
        {"app:z": "zz", "a": 3},
    ]
    expected: dict[str, Any] = {"a": 0, "keep": "x"}
    for delta in deltas:
        await session_service.append_event(session, _event(**delta))
        expected.update(delta)
    assert session.state == expected
    fresh = await _reload(session_service, session)
    assert fresh.state == expected
    assert [e.actions.state_delta for e in fresh.events] == deltas
