"""The BaseSessionService contract, as reusable tests.

A test module runs the whole contract against a backend by importing these tests and
providing a ``session_service`` fixture (a fresh, open service; the module closes it)::

    from tests.conformance.session_service_contract import *  # noqa: F403

Every test names the rule it checks: a rule of the spec (``spec/003`` "Events", ``spec/004``
"Runtime") or of the service contract in ``eventide.sessions.sql_session_service``.
"""

from __future__ import annotations

import uuid
from typing import Any

import pytest

from eventide import types
from eventide.errors import (
    AlreadyExistsError,
    InvalidStateValueError,
    SessionNotFoundError,
    UsageError,
)
from eventide.events import Event, EventActions, ToolConfirmation
from eventide.sessions.base_session_service import BaseSessionService
from eventide.sessions.session import GetSessionConfig, Session

__all__ = [
    "test_app_state_is_shared_by_the_apps_sessions_and_not_across_apps",
    "test_blank_session_id_gets_a_fresh_id",
    "test_negative_num_recent_events_is_refused",
    "test_stale_copy_appending_a_stored_event_then_a_new_one",
    "test_append_assigns_id_and_timestamp",
    "test_append_to_a_missing_session_raises",
    "test_create_and_get_round_trip",
    "test_create_rejects_a_taken_session_id",
    "test_delete_session_removes_it_and_its_events",
    "test_events_round_trip_exactly",
    "test_get_after_timestamp",
    "test_get_missing_session_returns_none",
    "test_get_num_recent_events",
    "test_idempotent_event_ids",
    "test_initial_state_is_kept_as_given",
    "test_initial_state_with_scoped_keys",
    "test_list_sessions_filters_pages_and_omits_events",
    "test_list_sessions_returns_each_sessions_state",
    "test_non_json_state_value_is_rejected_and_nothing_is_stored",
    "test_one_delta_mixing_every_scope",
    "test_a_delta_changed_after_its_commit_changes_nothing_stored",
    "test_nul_character_in_state_is_refused_everywhere",
    "test_partial_events_are_never_stored",
    "test_stale_copy_gets_newer_events_folded_in",
    "test_sync_methods_work_from_plain_code",
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


def _dump(events: list[Event]) -> list[dict[str, Any]]:
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
    """Contract: create_session with an existing session_id raises AlreadyExistsError (a UsageError) and leaves the
    stored session untouched."""
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


async def test_get_num_recent_events(session_service: BaseSessionService) -> None:
    """Contract: get_session(config=GetSessionConfig(num_recent_events=N)) returns the last N
    events in order (0: none), with the full state."""
    session = await session_service.create_session(app_name=_app(), user_id="u")
    ids = []
    for i in range(6):
        event = await session_service.append_event(session, _event(i=i))
        ids.append(event.id)
    key = {"app_name": session.app_name, "user_id": "u", "session_id": session.id}
    last3 = await session_service.get_session(**key, config=GetSessionConfig(num_recent_events=3))
    assert last3 is not None
    assert [e.id for e in last3.events] == ids[-3:]
    assert last3.state == {"i": 5}
    none = await session_service.get_session(**key, config=GetSessionConfig(num_recent_events=0))
    assert none is not None and none.events == []
    many = await session_service.get_session(**key, config=GetSessionConfig(num_recent_events=99))
    assert many is not None and [e.id for e in many.events] == ids


async def test_get_after_timestamp(session_service: BaseSessionService) -> None:
    """Contract: get_session(config=GetSessionConfig(after_timestamp=t)) returns only the
    events committed at or after t, in order; combined with num_recent_events, the last N."""
    session = await session_service.create_session(app_name=_app(), user_id="u")
    ids = []
    for i in range(5):
        event = _event(i=i)
        event.timestamp = 1_000.0 + i
        await session_service.append_event(session, event)
        ids.append(event.id)
    key = {"app_name": session.app_name, "user_id": "u", "session_id": session.id}
    later = await session_service.get_session(
        **key, config=GetSessionConfig(after_timestamp=1_002.0)
    )
    assert later is not None and [e.id for e in later.events] == ids[2:]
    both = await session_service.get_session(
        **key, config=GetSessionConfig(after_timestamp=1_001.0, num_recent_events=2)
    )
    assert both is not None and [e.id for e in both.events] == ids[3:]


async def test_idempotent_event_ids(session_service: BaseSessionService) -> None:
    """Contract (many writers): appending an event whose id is already stored for the
    session is a no-op: no second copy in the log, no second application of its state."""
    session = await session_service.create_session(app_name=_app(), user_id="u")
    event = _event(count=1)
    await session_service.append_event(session, event)
    retry = Event.model_validate(event.model_dump())
    retry.actions.state_delta = {"count": 1}
    await session_service.append_event(session, retry)
    other_copy = await _reload(session_service, session)
    await session_service.append_event(other_copy, Event.model_validate(event.model_dump()))
    fresh = await _reload(session_service, session)
    assert [e.id for e in fresh.events] == [event.id]
    assert [e.id for e in session.events] == [event.id]
    assert [e.id for e in other_copy.events] == [event.id]
    assert fresh.state == {"count": 1}


async def test_stale_copy_gets_newer_events_folded_in(
    session_service: BaseSessionService,
) -> None:
    """Contract (many writers): a writer holding an older copy of the session still commits;
    its copy gets the other writers' events and state folded in, in log order, before its
    own event; the stored log is in commit order."""
    session = await session_service.create_session(app_name=_app(), user_id="u")
    copy_a = await _reload(session_service, session)
    copy_b = await _reload(session_service, session)
    first = await session_service.append_event(copy_a, _event("a", a=1, shared="a"))
    second = await session_service.append_event(copy_a, _event("a", a=2))
    third = await session_service.append_event(copy_b, _event("b", b=1, shared="b"))
    assert [e.id for e in copy_b.events] == [first.id, second.id, third.id]
    assert copy_b.state == {"a": 2, "b": 1, "shared": "b"}
    fresh = await _reload(session_service, session)
    assert [e.id for e in fresh.events] == [first.id, second.id, third.id]
    assert fresh.state == copy_b.state
    # The folded copy keeps working without another fold.
    fourth = await session_service.append_event(copy_b, _event("b", b=2))
    assert [e.id for e in copy_b.events][-1] == fourth.id
    assert len(copy_b.events) == 4


async def test_non_json_state_value_is_rejected_and_nothing_is_stored(
    session_service: BaseSessionService,
) -> None:
    """Spec 003, state_delta holds serializable values / contract: a state value that is not
    JSON data raises InvalidStateValueError naming the key; nothing of the event is stored."""
    app = _app()
    with pytest.raises(InvalidStateValueError, match="'bad'"):
        await session_service.create_session(app_name=app, user_id="u", state={"bad": {1, 2}})
    session = await session_service.create_session(app_name=app, user_id="u")
    await session_service.append_event(session, _event(ok=1))
    with pytest.raises(InvalidStateValueError, match="'user:when'"):
        await session_service.append_event(session, _event(**{"x": 1, "user:when": object()}))
    fresh = await _reload(session_service, session)
    assert fresh.state == {"ok": 1}
    assert len(fresh.events) == 1
    assert session.state == {"ok": 1} and len(session.events) == 1


async def test_events_round_trip_exactly(session_service: BaseSessionService) -> None:
    """Spec 003, Event structure (content parts, function calls and responses, inline data,
    actions, long_running_tool_ids, branch): a stored event reads back equal to the event
    that was appended."""
    session = await session_service.create_session(app_name=_app(), user_id="u")
    call = Event(
        author="planner",
        invocation_id="e-123",
        branch="root.planner",
        content=types.Content(
            role="model",
            parts=[
                types.Part(text="Let me look.", thought=True, thought_signature=b"\x00sig\xff"),
                types.Part(
                    function_call=types.FunctionCall(
                        id="call-1", name="lookup", args={"q": "ünïcode", "n": [1, 2.5, None]}
                    )
                ),
            ],
        ),
        long_running_tool_ids={"call-1"},
        usage_metadata=types.UsageMetadata(prompt_token_count=10, total_token_count=12),
        custom_metadata={"trace": {"span": "abc"}},
    )
    response = Event(
        author="planner",
        invocation_id="e-123",
        content=types.Content(
            role="user",
            parts=[
                types.Part(
                    function_response=types.FunctionResponse(
                        id="call-1", name="lookup", response={"result": {"rows": [1, 2]}}
                    )
                ),
                types.Part(inline_data=types.Blob(mime_type="image/png", data=bytes(range(256)))),
            ],
        ),
        actions=EventActions(
            state_delta={"last": "lookup", "user:seen": True},
            artifact_delta={"report.pdf": 2},
            transfer_to_agent="writer",
            escalate=True,
            skip_summarization=True,
            requested_tool_confirmations={"call-1": ToolConfirmation(hint="ok?", payload=[1])},
            end_of_agent=True,
            agent_state={"step": 3},
        ),
    )
    error = Event(author="planner", error_code="RATE_LIMIT", error_message="slow down")
    for event in (call, response, error):
        await session_service.append_event(session, event)
    fresh = await _reload(session_service, session)
    assert _dump(fresh.events) == _dump([call, response, error])
    assert fresh.events[1].content is not None
    assert fresh.events[1].content.parts is not None
    assert fresh.events[1].content.parts[1].inline_data is not None
    assert fresh.events[1].content.parts[1].inline_data.data == bytes(range(256))
    assert fresh.events[0].long_running_tool_ids == {"call-1"}


async def test_stale_copy_appending_a_stored_event_then_a_new_one(
    session_service: BaseSessionService,
) -> None:
    """Contract (idempotent by event id; stale copies are brought up to date): a stale copy
    that appends an event another copy already stored, then a new event, holds each event
    once, in log order, like the stored log (regression: in memory the first event was
    held twice)."""
    session = await session_service.create_session(app_name=_app(), user_id="u")
    stale = await _reload(session_service, session)
    first = await session_service.append_event(session, _event("a", n=1))
    await session_service.append_event(stale, Event.model_validate(first.model_dump()))
    assert [e.id for e in stale.events] == [first.id]
    second = await session_service.append_event(stale, _event("b", n=2))
    assert [e.id for e in stale.events] == [first.id, second.id]
    fresh = await _reload(session_service, session)
    assert [e.id for e in fresh.events] == [first.id, second.id]
    assert stale.state == fresh.state == {"n": 2}


async def test_blank_session_id_gets_a_fresh_id(session_service: BaseSessionService) -> None:
    """Contract (ids): a session_id that is empty or only whitespace means "no id given":
    the session gets a fresh id, as with None (google-adk does the same); surrounding
    whitespace of a real id is removed (regression: in memory "   " made a session with an
    empty id)."""
    app = _app()
    blank = await session_service.create_session(app_name=app, user_id="u", session_id="   ")
    empty = await session_service.create_session(app_name=app, user_id="u", session_id="")
    assert blank.id.strip() and empty.id.strip() and blank.id != empty.id
    padded = await session_service.create_session(app_name=app, user_id="u", session_id=" s1 ")
    assert padded.id == "s1"
    assert await session_service.get_session(app_name=app, user_id="u", session_id=blank.id)
    listed = await session_service.list_sessions(app_name=app, user_id="u")
    assert sorted(s.id for s in listed.sessions) == sorted([blank.id, empty.id, "s1"])


async def test_negative_num_recent_events_is_refused(
    session_service: BaseSessionService,
) -> None:
    """Contract (reads): num_recent_events must be >= 0 (0 returns no events, None all);
    a negative value is refused with a clear error, on every backend (regression: memory
    returned nothing, SQLite raised)."""
    session = await session_service.create_session(app_name=_app(), user_id="u")
    await session_service.append_event(session, _event(n=1))
    with pytest.raises(ValueError, match="num_recent_events"):
        GetSessionConfig(num_recent_events=-1)
    bypassed = GetSessionConfig.model_construct(num_recent_events=-1)
    with pytest.raises(UsageError, match="num_recent_events"):
        await session_service.get_session(
            app_name=session.app_name, user_id="u", session_id=session.id, config=bypassed
        )


async def test_list_sessions_returns_each_sessions_state(
    session_service: BaseSessionService,
) -> None:
    """Contract (google-adk 2.13 behaviour): each session list_sessions returns carries its
    merged state (its own keys, the user's user: keys, the app's app: keys; never temp:),
    without events."""
    app = _app()
    one = await session_service.create_session(
        app_name=app, user_id="u", session_id="one", state={"k": 1, "temp:t": 0}
    )
    await session_service.append_event(one, _event(**{"user:lang": "fr", "app:motd": "hi"}))
    await session_service.create_session(app_name=app, user_id="u", session_id="two")
    await session_service.create_session(app_name=app, user_id="v", session_id="three")
    listed = await session_service.list_sessions(app_name=app)
    states = {s.id: s.state for s in listed.sessions}
    assert states == {
        "one": {"k": 1, "user:lang": "fr", "app:motd": "hi"},
        "two": {"user:lang": "fr", "app:motd": "hi"},
        "three": {"app:motd": "hi"},
    }
    assert all(s.events == [] for s in listed.sessions)


async def test_sync_methods_work_from_plain_code(session_service: BaseSessionService) -> None:
    """Contract (google-adk names): create_session_sync, get_session_sync,
    list_sessions_sync and delete_session_sync do what their async twins do; called where
    an event loop is running (here, a test; in practice a notebook cell), they still work."""
    app = _app()
    created = session_service.create_session_sync(
        app_name=app, user_id="u", session_id="s", state={"k": 1}
    )
    assert created.id == "s" and created.state == {"k": 1}
    got = session_service.get_session_sync(app_name=app, user_id="u", session_id="s")
    assert got is not None and got.state == {"k": 1}
    listed = session_service.list_sessions_sync(app_name=app, user_id="u")
    assert [s.id for s in listed.sessions] == ["s"]
    session_service.delete_session_sync(app_name=app, user_id="u", session_id="s")
    assert session_service.get_session_sync(app_name=app, user_id="u", session_id="s") is None
    # The async methods keep working on the test's own loop afterwards.
    assert await session_service.get_session(app_name=app, user_id="u", session_id="s") is None


async def test_nul_character_in_state_is_refused_everywhere(
    session_service: BaseSessionService,
) -> None:
    """Contract (JSON validation, the same on every store): a state key or string value
    holding U+0000 is refused with InvalidStateValueError and nothing is stored, because
    PostgreSQL cannot store it (found by the differential test: PostgreSQL failed with a
    BackendError while memory and SQLite accepted it)."""
    session = await session_service.create_session(app_name=_app(), user_id="u")
    for delta in ({"k": "a\x00b"}, {"k\x00": 1}, {"k": {"nested": ["\x00"]}}):
        with pytest.raises(InvalidStateValueError, match="NUL"):
            await session_service.append_event(session, _event(**delta))
    with pytest.raises(InvalidStateValueError, match="NUL"):
        await session_service.create_session(app_name=_app(), user_id="u", state={"k": "\x00"})
    fresh = await _reload(session_service, session)
    assert fresh.events == [] and fresh.state == {}
