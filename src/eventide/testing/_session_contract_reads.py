"""The session contract's tests, second part: reads, idempotency, stale copies, round
trips and validation (see :mod:`eventide.testing.session_contract`, which runs both parts)."""

# The helpers are the first part's, shared by the suite's two halves.
# pyright: reportPrivateUsage=false

from __future__ import annotations

import pytest

from eventide import types
from eventide.errors import InvalidStateValueError, UsageError
from eventide.events import Event, EventActions, ToolConfirmation
from eventide.sessions.base_session_service import BaseSessionService
from eventide.sessions.session import GetSessionConfig
from eventide.testing._session_contract_writes import _app, _dump, _event, _reload

__all__ = [
    "test_blank_session_id_gets_a_fresh_id",
    "test_events_round_trip_exactly",
    "test_get_after_timestamp",
    "test_get_num_recent_events",
    "test_idempotent_event_ids",
    "test_list_sessions_returns_each_sessions_state",
    "test_negative_num_recent_events_is_refused",
    "test_non_json_state_value_is_rejected_and_nothing_is_stored",
    "test_nul_character_in_state_is_refused_everywhere",
    "test_stale_copy_appending_a_stored_event_then_a_new_one",
    "test_stale_copy_gets_newer_events_folded_in",
    "test_sync_methods_work_from_plain_code",
]


async def test_get_num_recent_events(session_service: BaseSessionService) -> None:
    """Contract: get_session(config=GetSessionConfig(num_recent_events=N)) returns the last N
    events in order (0: none), with the full state."""
    session = await session_service.create_session(app_name=_app(), user_id="u")
    ids: list[str] = []
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
    ids: list[str] = []
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
