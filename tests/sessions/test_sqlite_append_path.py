"""The SQLite store's append statements: what they store, and the errors they raise."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from eventide.errors import CorruptRecordError
from eventide.events import Event, EventActions
from eventide.sessions.sql_session_service import SqlSessionService


def _event(delta: dict[str, object]) -> Event:
    return Event(author="agent", invocation_id="inv", actions=EventActions(state_delta=delta))


async def test_an_appended_event_row_carries_its_session_names(tmp_path: Path) -> None:
    """The event row's app, user and session names (copied from the session row by the
    common append's INSERT ... SELECT) are the session's, for every append."""
    path = tmp_path / "sessions.db"
    service = SqlSessionService(f"sqlite:///{path}")
    try:
        session = await service.create_session(app_name="app é", user_id="u-1", session_id="s")
        for n in range(3):
            await service.append_event(session, _event({"n": n}))
    finally:
        await service.close()
    with sqlite3.connect(path) as conn:
        rows = conn.execute(
            "SELECT seq, app_name, user_id, session_id, invocation_id FROM events ORDER BY seq"
        ).fetchall()
    assert rows == [(n, "app é", "u-1", "s", "inv") for n in (1, 2, 3)]


@pytest.mark.parametrize(
    ("table", "delta", "named"),
    [
        ("sessions", {"k": 1}, "session 'broken'"),
        ("app_states", {"app:k": 1}, "app 'a'"),
        ("user_states", {"user:k": 1}, "user 'u' of app 'a'"),
    ],
)
async def test_an_append_onto_corrupt_stored_state_names_that_state(
    tmp_path: Path, table: str, delta: dict[str, object], named: str
) -> None:
    """Contract (failures): an append whose state delta merges into a hand-edited,
    unparsable state column raises CorruptRecordError naming that state, and stores
    nothing."""
    path = tmp_path / "sessions.db"
    service = SqlSessionService(f"sqlite:///{path}")
    try:
        session = await service.create_session(
            app_name="a", user_id="u", session_id="broken", state={"app:k": 0, "user:k": 0}
        )
        with sqlite3.connect(path) as conn:
            conn.execute(f"UPDATE {table} SET state = 'not json'")  # noqa: S608
        with pytest.raises(CorruptRecordError, match=f"stored state of {named} "):
            await service.append_event(session, _event(delta))
        with sqlite3.connect(path) as conn:
            assert conn.execute("SELECT count(*) FROM events").fetchone() == (0,)
    finally:
        await service.close()
