"""``SessionService.append_event`` commits in one pass over the delta, with a shortcut for a
delta of session keys only; the other paths must give the same results."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from eventide.events import Event, EventActions
from eventide.sessions.base_session_service import BaseSessionService
from eventide.sessions.in_memory_session_service import InMemorySessionService
from eventide.sessions.session_service import SessionService
from eventide.sessions.sql_session_service import SqlSessionService


@pytest.fixture(params=["memory", "sqlite"])
async def service(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[SessionService]:
    if request.param == "memory":
        yield InMemorySessionService()
        return
    sql = SqlSessionService(f"sqlite:///{tmp_path / 'sessions.db'}")
    yield sql
    await sql.close()


def _event(**delta: object) -> Event:
    return Event(author="agent", invocation_id="inv", actions=EventActions(state_delta=delta))


async def test_the_base_class_path_commits_the_same(service: SessionService) -> None:
    """BaseSessionService.append_event (prepare, then _append_event) reaches the same commit
    as the service's own one-pass append_event, for plain and scoped deltas."""
    deltas: list[dict[str, object]] = [
        {"n": 1},
        {"app:a": 1, "user:u": [1], "temp:t": 1, "s": {"k": 1}},
        {"temp:only": 1},
        {},
    ]
    direct = await service.create_session(app_name="app", user_id="u", session_id="direct")
    based = await service.create_session(app_name="app", user_id="u", session_id="based")
    for delta in deltas:
        await service.append_event(direct, _event(**delta))
        await BaseSessionService.append_event(service, based, _event(**delta))
    assert direct.state == based.state == {"n": 1, "app:a": 1, "user:u": [1], "s": {"k": 1}}
    read_direct = await service.get_session(app_name="app", user_id="u", session_id="direct")
    read_based = await service.get_session(app_name="app", user_id="u", session_id="based")
    assert read_direct is not None and read_based is not None
    assert read_direct.state == read_based.state == direct.state
    assert [e.actions.state_delta for e in read_direct.events] == [
        e.actions.state_delta for e in read_based.events
    ]


async def test_a_scoped_key_after_plain_ones_takes_the_scoped_path(
    service: SessionService,
) -> None:
    """The shortcut is taken only when no key has a prefix: a prefixed key anywhere in the
    delta (not just first) sends every key to its scope and drops temp: keys."""
    session = await service.create_session(app_name="app", user_id="u")
    await service.append_event(session, _event(a=1, b=2, **{"temp:t": 1, "user:u": 3}))
    other = await service.create_session(app_name="app", user_id="u")
    read = await service.get_session(app_name="app", user_id="u", session_id=other.id)
    assert read is not None and read.state == {"user:u": 3}
    assert session.state == {"a": 1, "b": 2, "user:u": 3}
