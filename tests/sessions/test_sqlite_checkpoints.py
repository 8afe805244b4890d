"""When the SQLite store checkpoints its WAL: in a pause in the writes, not in a burst."""

from __future__ import annotations

import asyncio
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from eventide import _sqlite_database
from eventide._sqlite_database import SqliteDatabase
from eventide.events import Event, EventActions
from eventide.sessions.session import Session
from eventide.sessions.sql_session_service import SqlSessionService
from eventide.sessions.sqlite_session_store import SqliteSessionStore


def _event(n: int) -> Event:
    return Event(author="agent", invocation_id="i", actions=EventActions(state_delta={"n": n}))


def _store(service: SqlSessionService) -> SqliteDatabase:
    """The connection layer under the service's SQLite store."""
    store = service._store  # pyright: ignore[reportPrivateUsage]
    assert isinstance(store, SqliteSessionStore)
    return store._db  # pyright: ignore[reportPrivateUsage]


def _count_checkpoints(store: SqliteDatabase, monkeypatch: pytest.MonkeyPatch) -> list[int]:
    calls: list[int] = []
    original = store._checkpoint  # pyright: ignore[reportPrivateUsage]

    def counted(cur: sqlite3.Cursor) -> None:
        calls.append(1)
        original(cur)

    monkeypatch.setattr(store, "_checkpoint", counted)
    return calls


async def _burst(service: SqlSessionService, session: Session, start: int, n: int) -> None:
    # Inline appends never suspend: no timer of the loop runs in between.
    for i in range(start, start + n):
        await service.append_event(session, _event(i))


async def _drain(store: SqliteDatabase) -> None:
    """Wait for what was submitted to the store's (single) thread so far."""
    executor = store._executor  # pyright: ignore[reportPrivateUsage]
    await asyncio.get_running_loop().run_in_executor(executor, lambda: None)


async def _pause_until_checkpointed(store: SqliteDatabase, calls: list[int]) -> None:
    """Pause the writes (longer than _CHECKPOINT_IDLE_S) until a checkpoint has run, for at
    most a few seconds: a loaded machine may run the loop's timer late."""
    for _ in range(100):
        await asyncio.sleep(0.05)
        await _drain(store)
        if calls:
            return


def _wal_frames(path: Path) -> int:
    """The number of frames in the WAL (a passive checkpoint reports it)."""
    conn = sqlite3.connect(path)
    try:
        row: Any = conn.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()
        return int(row[1])
    finally:
        conn.close()


async def test_a_due_checkpoint_waits_for_a_pause_and_the_wal_then_starts_over(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 13: no WAL checkpoint runs in the middle of a burst of appends (its fsyncs
    stall them, and it cannot restart the WAL while commits land); the one that is due runs
    once the writes pause, and the next append then starts the WAL over instead of growing
    it (regression: under back-to-back appends the passive checkpoints never completed and
    the WAL grew by ~18 MB per 1,000 small events)."""
    monkeypatch.setattr(_sqlite_database, "_CHECKPOINT_EVERY", 20)
    monkeypatch.setattr(_sqlite_database, "_CHECKPOINT_IDLE_S", 0.05)
    path = tmp_path / "sessions.db"
    service = SqlSessionService(f"sqlite:///{path}")
    try:
        session = await service.create_session(app_name="app", user_id="u", session_id="s")
        store = _store(service)
        calls = _count_checkpoints(store, monkeypatch)
        await _burst(service, session, 0, 110)
        # Checked before the loop runs anything else: a pause would start the checkpoint.
        assert calls == []
        assert _wal_frames(path) > 110

        await _pause_until_checkpointed(store, calls)
        assert calls == [1]
        await service.append_event(session, _event(110))
        assert _wal_frames(path) < 20  # one append's pages, from the WAL's start
        stored = await service.get_session(app_name="app", user_id="u", session_id="s")
        assert stored is not None and len(stored.events) == 111
        assert stored.state == {"n": 110}
    finally:
        await service.close()


async def test_writes_that_never_pause_still_get_a_checkpoint_once_the_wal_is_big(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 13: the wait for a pause is bounded by the WAL's growth: once the file has
    grown by _CHECKPOINT_FORCED_BYTES since the last checkpoint, the due one starts at once."""
    monkeypatch.setattr(_sqlite_database, "_CHECKPOINT_EVERY", 20)
    monkeypatch.setattr(_sqlite_database, "_CHECKPOINT_IDLE_S", 3600.0)
    monkeypatch.setattr(_sqlite_database, "_CHECKPOINT_FORCED_BYTES", 1)
    service = SqlSessionService(f"sqlite:///{tmp_path / 'sessions.db'}")
    try:
        session = await service.create_session(app_name="app", user_id="u", session_id="s")
        store = _store(service)
        calls = _count_checkpoints(store, monkeypatch)
        await _burst(service, session, 0, 50)
        await _drain(store)
        assert calls == [1, 1]
    finally:
        await service.close()


def test_a_checkpoint_left_pending_on_a_closed_loop_is_taken_up_by_the_next_loop(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The store works from one event loop after another (``Runner.run`` makes its own): a
    due checkpoint whose timer was on a loop that has closed is scheduled again on the loop
    of the next append, instead of never running."""
    monkeypatch.setattr(_sqlite_database, "_CHECKPOINT_EVERY", 20)
    monkeypatch.setattr(_sqlite_database, "_CHECKPOINT_IDLE_S", 0.05)
    service = SqlSessionService(f"sqlite:///{tmp_path / 'sessions.db'}")
    session = asyncio.run(service.create_session(app_name="app", user_id="u", session_id="s"))
    store = _store(service)
    calls = _count_checkpoints(store, monkeypatch)
    asyncio.run(_burst(service, session, 0, 25))  # due; its loop closes before the timer

    async def second_loop() -> None:
        await _burst(service, session, 25, 1)
        await _pause_until_checkpointed(store, calls)
        await service.close()

    asyncio.run(second_loop())
    assert calls == [1]
