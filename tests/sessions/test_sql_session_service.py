"""SqlSessionService beyond the shared contract: the Runner end to end, restarts, migrations,
corrupt rows, a database that goes away, limits, compare-and-set, closing, event loops."""

from __future__ import annotations

import asyncio
import sqlite3
import uuid
from collections.abc import AsyncGenerator
from pathlib import Path
from typing import Any

import pytest

from eventide import types
from eventide.agents.base_agent import BaseAgent
from eventide.contexts import InvocationContext
from eventide.errors import (
    BackendError,
    ConfigurationError,
    CorruptRecordError,
    RecordTooLargeError,
    SchemaVersionError,
    StaleSessionError,
    UsageError,
)
from eventide.events import Event, EventActions
from eventide.runner import Runner
from eventide.sessions.session import GetSessionConfig
from eventide.sessions.sql_schema import SCHEMA_VERSION
from eventide.sessions.sql_session_service import SqlSessionService
from tests.sessions.conftest import pg_admin


class CountingAgent(BaseAgent):
    """Counts the user's turns in session state and answers with the count."""

    async def _run_async_impl(self, ctx: InvocationContext) -> AsyncGenerator[Event, None]:
        turns = int(ctx.session.state.get("turns", 0)) + 1
        yield Event(
            author=self.name,
            invocation_id=ctx.invocation_id,
            actions=EventActions(
                state_delta={"turns": turns, "user:seen": True, "temp:scratch": "x"}
            ),
        )
        yield Event(
            author=self.name,
            invocation_id=ctx.invocation_id,
            content=types.Content(role="model", parts=[types.Part(text=f"turn {turns}")]),
        )


def _texts(events: list[Event]) -> list[str | None]:
    return [e.text for e in events]


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def db_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'sessions.db'}"
    return str(request.getfixturevalue("postgres_sessions_url"))


async def test_runner_end_to_end_and_resume_after_restart(db_url: str) -> None:
    """Spec 004, the event loop and state commit: the Runner commits each event through the
    SQL service before the agent resumes; after re-creating the service (a restart), the
    conversation resumes from the stored log and state."""
    app = f"app_{uuid.uuid4().hex[:8]}"
    service = SqlSessionService(db_url)
    runner = Runner(app_name=app, agent=CountingAgent(name="counter"), session_service=service)
    await service.create_session(app_name=app, user_id="u", session_id="s")
    first = [e async for e in runner.run_async(user_id="u", session_id="s", new_message="hi")]
    assert _texts(first) == [None, "turn 1"]
    await service.close()

    restarted = SqlSessionService(db_url)
    runner = Runner(app_name=app, agent=CountingAgent(name="counter"), session_service=restarted)
    second = [e async for e in runner.run_async(user_id="u", session_id="s", new_message="again")]
    assert _texts(second) == [None, "turn 2"]
    stored = await restarted.get_session(app_name=app, user_id="u", session_id="s")
    assert stored is not None
    assert [(e.author, e.text) for e in stored.events] == [
        ("user", "hi"),
        ("counter", None),
        ("counter", "turn 1"),
        ("user", "again"),
        ("counter", None),
        ("counter", "turn 2"),
    ]
    assert stored.state == {"turns": 2, "user:seen": True}
    await restarted.close()


def test_sync_runner_and_several_event_loops(tmp_path: Path) -> None:
    """Contract (event loops): the service works from Runner.run's private loop and from
    separate asyncio.run calls one after another."""
    url = f"sqlite:///{tmp_path / 'loops.db'}"
    service = SqlSessionService(url)
    asyncio.run(service.create_session(app_name="a", user_id="u", session_id="s"))
    runner = Runner(app_name="a", agent=CountingAgent(name="counter"), session_service=service)
    assert _texts(list(runner.run(user_id="u", session_id="s", new_message="x"))) == [
        None,
        "turn 1",
    ]
    runner.close_sync()
    stored = asyncio.run(service.get_session(app_name="a", user_id="u", session_id="s"))
    assert stored is not None and stored.state == {"turns": 1, "user:seen": True}
    asyncio.run(service.close())


@pytest.mark.postgres
def test_postgres_service_across_event_loops(postgres_sessions_url: str) -> None:
    """Contract (event loops): on PostgreSQL the service opens an engine for each loop that
    uses it, one after another."""
    service = SqlSessionService(postgres_sessions_url)
    app = f"app_{uuid.uuid4().hex[:8]}"

    async def step(n: int) -> int:
        session = await service.get_session(app_name=app, user_id="u", session_id="s")
        if session is None:
            session = await service.create_session(app_name=app, user_id="u", session_id="s")
        await service.append_event(
            session, Event(author="a", actions=EventActions(state_delta={"n": n}))
        )
        return len(session.events)

    assert [asyncio.run(step(n)) for n in range(3)] == [1, 2, 3]

    async def close() -> None:
        await service.close()

    asyncio.run(close())


async def test_compare_and_set_refuses_a_stale_copy(db_url: str) -> None:
    """Contract (many writers): with compare-and-set, an append from a copy that is behind
    the stored log raises StaleSessionError and stores nothing."""
    service = SqlSessionService(db_url, compare_and_set=True)
    app = f"app_{uuid.uuid4().hex[:8]}"
    session = await service.create_session(app_name=app, user_id="u")
    stale = await service.get_session(app_name=app, user_id="u", session_id=session.id)
    assert stale is not None
    await service.append_event(
        session, Event(author="a", actions=EventActions(state_delta={"k": 1}))
    )
    with pytest.raises(StaleSessionError) as caught:
        await service.append_event(
            stale, Event(author="b", actions=EventActions(state_delta={"k": 2}))
        )
    assert (caught.value.expected, caught.value.actual) == (0, 1)
    # Per call, the default can be switched off: the stale copy is then folded forward.
    await service.append_event(
        stale, Event(author="b", actions=EventActions(state_delta={"k": 2})), compare_and_set=False
    )
    stored = await service.get_session(app_name=app, user_id="u", session_id=session.id)
    assert stored is not None
    assert [e.author for e in stored.events] == ["a", "b"] and stored.state == {"k": 2}
    assert [e.author for e in stale.events] == ["a", "b"]
    await service.close()


async def test_too_large_event_is_refused_and_nothing_is_stored(db_url: str) -> None:
    """Contract (failures): an event over max_event_bytes raises RecordTooLargeError naming
    the session and sizes; nothing is stored and the session stays usable."""
    service = SqlSessionService(db_url, max_event_bytes=10_000)
    app = f"app_{uuid.uuid4().hex[:8]}"
    session = await service.create_session(app_name=app, user_id="u")
    with pytest.raises(RecordTooLargeError, match=session.id) as caught:
        await service.append_event(
            session, Event(author="a", actions=EventActions(state_delta={"blob": "x" * 20_000}))
        )
    assert caught.value.limit == 10_000 and caught.value.size > 20_000
    with pytest.raises(RecordTooLargeError):
        await service.create_session(app_name=app, user_id="u", state={"blob": "é" * 6_000})
    await service.append_event(
        session, Event(author="a", actions=EventActions(state_delta={"ok": 1}))
    )
    stored = await service.get_session(app_name=app, user_id="u", session_id=session.id)
    assert stored is not None and stored.state == {"ok": 1} and len(stored.events) == 1
    await service.close()


async def test_closed_service_raises_a_clear_error(db_url: str) -> None:
    """Contract: a closed service refuses every operation with a UsageError saying so."""
    service = SqlSessionService(db_url)
    session = await service.create_session(app_name="a", user_id="u")
    await service.close()
    await service.close()  # closing twice is harmless
    with pytest.raises(UsageError, match="closed"):
        await service.get_session(app_name="a", user_id="u", session_id=session.id)
    with pytest.raises(UsageError, match="closed"):
        await service.append_event(session, Event(author="a"))


async def test_corrupt_event_row_names_the_event_and_the_rest_stays_usable(
    tmp_path: Path,
) -> None:
    """Contract (failures): a hand-edited event row raises CorruptRecordError naming the
    session and event id; other sessions, and appends to this one, keep working."""
    path = tmp_path / "corrupt.db"
    service = SqlSessionService(f"sqlite:///{path}")
    broken = await service.create_session(app_name="a", user_id="u", session_id="broken")
    healthy = await service.create_session(app_name="a", user_id="u", session_id="healthy")
    bad = await service.append_event(
        broken, Event(author="a", actions=EventActions(state_delta={"k": 1}))
    )
    await service.append_event(healthy, Event(author="a"))
    with sqlite3.connect(path) as conn:
        conn.execute("UPDATE events SET event = '{\"author\": tru' WHERE id = ?", (bad.id,))
    with pytest.raises(CorruptRecordError, match=bad.id) as caught:
        await service.get_session(app_name="a", user_id="u", session_id="broken")
    assert "'broken'" in str(caught.value)
    other = await service.get_session(app_name="a", user_id="u", session_id="healthy")
    assert other is not None and len(other.events) == 1
    await service.append_event(
        broken, Event(author="a", actions=EventActions(state_delta={"k": 2}))
    )
    recent = await service.get_session(
        app_name="a", user_id="u", session_id="broken", config=GetSessionConfig(num_recent_events=1)
    )
    assert recent is not None and recent.state == {"k": 2} and len(recent.events) == 1
    await service.close()


async def test_corrupt_state_row_is_reported(tmp_path: Path) -> None:
    """Contract (failures): a hand-edited state column raises CorruptRecordError naming the
    session; other sessions stay readable."""
    path = tmp_path / "corrupt_state.db"
    service = SqlSessionService(f"sqlite:///{path}")
    await service.create_session(app_name="a", user_id="u", session_id="broken", state={"k": 1})
    await service.create_session(app_name="a", user_id="v", session_id="fine", state={"k": 1})
    with sqlite3.connect(path) as conn:
        conn.execute("UPDATE sessions SET state = 'not json' WHERE id = 'broken'")
    with pytest.raises(CorruptRecordError, match="'broken'"):
        await service.get_session(app_name="a", user_id="u", session_id="broken")
    fine = await service.get_session(app_name="a", user_id="v", session_id="fine")
    assert fine is not None and fine.state == {"k": 1}
    await service.close()


def test_unsupported_urls_are_refused() -> None:
    """Contract: a URL the service cannot use is refused at construction with a clear error."""
    with pytest.raises(ConfigurationError, match="unsupported scheme 'mysql'"):
        SqlSessionService("mysql://root@localhost/db")
    with pytest.raises(UsageError, match="synchronous"):
        SqlSessionService("sqlite:///x.db", synchronous="OFF")


async def test_full_synchronous_mode_works(tmp_path: Path) -> None:
    """Contract (durability): synchronous='FULL' is accepted and applied to the database."""
    service = SqlSessionService(f"sqlite:///{tmp_path / 'full.db'}", synchronous="full")
    session = await service.create_session(app_name="a", user_id="u")
    await service.append_event(session, Event(author="a"))
    store: Any = service._store

    def pragmas(cur: sqlite3.Cursor) -> tuple[int, str]:
        return (
            cur.execute("PRAGMA synchronous").fetchone()[0],
            cur.execute("PRAGMA journal_mode").fetchone()[0],
        )

    # A write runs on the connection that commits with FULL (the layer's thread).
    assert await store._db.run(pragmas) == (2, "wal")  # 2 is FULL
    await service.close()


@pytest.mark.postgres
async def test_postgres_going_away_raises_backend_error_and_recovers(
    postgres_sessions_url: str,
) -> None:
    """Contract (failures): when PostgreSQL drops the service's connections and refuses new
    ones, operations raise BackendError with a clear message; nothing committed is lost; the
    service works again once the database is back."""
    from sqlalchemy.engine import make_url

    database = make_url(postgres_sessions_url).database
    service = SqlSessionService(postgres_sessions_url)
    app = f"app_{uuid.uuid4().hex[:8]}"
    session = await service.create_session(app_name=app, user_id="u", session_id="s")
    await service.append_event(
        session, Event(author="a", actions=EventActions(state_delta={"n": 1}))
    )

    terminate = (
        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
        f"WHERE datname = '{database}' AND pid <> pg_backend_pid()"
    )
    # A dropped connection alone is healed: safe operations retry once on a new connection.
    await pg_admin(terminate)
    assert await service.get_session(app_name=app, user_id="u", session_id="s") is not None
    await pg_admin(terminate)
    assert len((await service.list_sessions(app_name=app)).sessions) == 1
    await pg_admin(terminate)
    await service.append_event(
        session, Event(author="a", actions=EventActions(state_delta={"n": 2}))
    )

    await pg_admin(f'ALTER DATABASE "{database}" ALLOW_CONNECTIONS false')
    try:
        await pg_admin(terminate)
        with pytest.raises(BackendError, match="PostgreSQL at .* failed") as caught:
            await service.append_event(
                session, Event(author="a", actions=EventActions(state_delta={"n": 3}))
            )
        assert "password" not in str(caught.value)
        with pytest.raises(BackendError):
            await service.get_session(app_name=app, user_id="u", session_id="s")
    finally:
        await pg_admin(f'ALTER DATABASE "{database}" ALLOW_CONNECTIONS true')

    await service.append_event(
        session, Event(author="a", actions=EventActions(state_delta={"n": 4}))
    )
    stored = await service.get_session(app_name=app, user_id="u", session_id="s")
    assert stored is not None
    assert [e.actions.state_delta["n"] for e in stored.events] == [1, 2, 4]
    assert stored.state == {"n": 4}
    await service.close()


@pytest.mark.postgres
async def test_postgres_concurrent_operations_share_the_stores_connections(
    postgres_sessions_url: str,
) -> None:
    """Concurrent appends and reads share at most max_connections connections; when
    PostgreSQL drops them all (a restart), each operation still succeeds on a fresh
    connection: the first dead one found marks all the older ones stale, so the retry does
    not meet another dead one; close closes every connection."""
    from sqlalchemy.engine import make_url

    database = make_url(postgres_sessions_url).database
    service = SqlSessionService(postgres_sessions_url, max_connections=4)
    db: Any = service._store._db  # type: ignore[attr-defined]
    app = f"app_{uuid.uuid4().hex[:8]}"
    sessions = [
        await service.create_session(app_name=app, user_id="u", session_id=f"s{i}")
        for i in range(12)
    ]

    async def turn(session: Any, n: int) -> None:
        await service.append_event(
            session, Event(author="a", actions=EventActions(state_delta={"n": n}))
        )
        assert await service.get_session(app_name=app, user_id="u", session_id=session.id)

    await asyncio.gather(*(turn(s, 1) for s in sessions))
    assert 1 <= len(db._open) <= 4
    assert len(db._idle) == len(db._open)

    await pg_admin(
        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
        f"WHERE datname = '{database}' AND pid <> pg_backend_pid()"
    )
    for s in sessions:  # one at a time: the first finds a dead connection
        await turn(s, 2)
    await asyncio.gather(*(turn(s, 3) for s in sessions))
    for s in sessions:
        stored = await service.get_session(app_name=app, user_id="u", session_id=s.id)
        assert stored is not None
        assert [e.actions.state_delta["n"] for e in stored.events] == [1, 2, 3]

    connections = list(db._open)
    await service.close()
    assert db._open == {} and db._idle == []
    assert connections and all(c.is_closed() for c in connections)


@pytest.mark.postgres
async def test_postgres_operations_wait_for_a_connection_beyond_the_limit(
    postgres_sessions_url: str,
) -> None:
    """Once max_connections are open, more concurrent appends and reads wait for one of
    them (first come, first served) instead of opening more; a waiting operation that is
    cancelled leaves nothing behind (no waiter, no connection lost)."""
    service = SqlSessionService(postgres_sessions_url, max_connections=2)
    db: Any = service._store._db  # type: ignore[attr-defined]
    app = f"app_{uuid.uuid4().hex[:8]}"
    sessions = [
        await service.create_session(app_name=app, user_id="u", session_id=f"s{i}")
        for i in range(12)
    ]

    async def turn(session: Any, n: int) -> None:
        await service.append_event(
            session, Event(author="a", actions=EventActions(state_delta={"n": n}))
        )
        assert await service.get_session(app_name=app, user_id="u", session_id=session.id)

    await asyncio.gather(*(turn(s, 1) for s in sessions))
    assert len(db._open) == 2
    opened = set(db._open)
    await asyncio.gather(*(turn(s, 2) for s in sessions))
    assert set(db._open) == opened
    assert len(db._idle) == 2 and not db._waiters

    reads = [
        asyncio.ensure_future(service.get_session(app_name=app, user_id="u", session_id=s.id))
        for s in sessions
    ]
    await asyncio.sleep(0)  # two run, the others wait
    for task in reads[1::2]:
        task.cancel()
    done = await asyncio.gather(*reads, return_exceptions=True)
    assert all(isinstance(r, asyncio.CancelledError) for r in done[1::2])
    assert all(r is not None and not isinstance(r, BaseException) for r in done[::2])
    assert len(db._idle) == 2 and not db._waiters
    await asyncio.gather(*(turn(s, 3) for s in sessions))
    for s in sessions:
        stored = await service.get_session(app_name=app, user_id="u", session_id=s.id)
        assert stored is not None
        assert [e.actions.state_delta["n"] for e in stored.events] == [1, 2, 3]
    assert set(db._open) == opened
    await service.close()


def test_engine_kwargs_set_the_connection_limit_and_unknown_ones_are_refused() -> None:
    """engine_kwargs written for SQLAlchemy's engine keep their meaning where they have one
    (pool_size + max_overflow connections, connect_args for the driver); any other key is a
    ConfigurationError naming it."""
    url = "postgresql://postgres@127.0.0.1:5432/test"
    service = SqlSessionService(
        url, engine_kwargs={"pool_size": 2, "max_overflow": 3, "connect_args": {"timeout": 7}}
    )
    db: Any = service._store._db  # type: ignore[attr-defined]
    assert db.max_connections == 5
    assert db._connect_kwargs == {"timeout": 7}
    assert SqlSessionService(url)._store._db.max_connections == 20  # type: ignore[attr-defined]
    with pytest.raises(ConfigurationError, match="pool_pre_ping"):
        SqlSessionService(url, engine_kwargs={"pool_pre_ping": True})


@pytest.mark.postgres
async def test_postgres_recent_events_read_stops_at_the_limit(postgres_sessions_url: str) -> None:
    """``num_recent_events`` on PostgreSQL walks the primary key backwards and stops at the
    limit instead of reading the whole log and sorting it (it did: the events were a plain
    join on the session row, whose pk the planner did not treat as one value)."""
    import json

    import asyncpg

    from eventide.sessions import postgres_session_store as pg

    service = SqlSessionService(postgres_sessions_url)
    app = f"app_{uuid.uuid4().hex[:8]}"
    session = await service.create_session(app_name=app, user_id="u")
    for n in range(200):
        await service.append_event(
            session, Event(author="a", actions=EventActions(state_delta={"n": n}))
        )
    recent = await service.get_session(
        app_name=app,
        user_id="u",
        session_id=session.id,
        config=GetSessionConfig(num_recent_events=20),
    )
    assert recent is not None
    assert [e.actions.state_delta["n"] for e in recent.events] == list(range(180, 200))
    await service.close()

    conn = await asyncpg.connect(postgres_sessions_url.replace("+asyncpg", ""))
    try:
        await conn.execute("ANALYZE events")
        plan = json.loads(
            await conn.fetchval(
                "EXPLAIN (ANALYZE, FORMAT JSON) " + pg._LOAD_NATIVE,
                app,
                "u",
                session.id,
                0,
                None,
                20,
            )
        )[0]["Plan"]
    finally:
        await conn.close()

    def nodes(node: dict[str, Any]) -> list[dict[str, Any]]:
        return [node, *(n for child in node.get("Plans", []) for n in nodes(child))]

    events_scans = [n for n in nodes(plan) if n.get("Relation Name") == "events"]
    assert [n["Node Type"] for n in events_scans] == ["Index Scan"]
    assert events_scans[0]["Scan Direction"] == "Backward"
    assert events_scans[0]["Actual Rows"] == 20
    assert not [n for n in nodes(plan) if n["Node Type"] == "Sort"]


async def test_sqlite_new_database_switches_to_wal_while_another_connection_writes(
    tmp_path: Path,
) -> None:
    """A new database is in rollback-journal mode until a connection switches it to WAL,
    which takes the file's exclusive lock; SQLite reports a clash with another connection's
    write lock at once, without waiting. The store waits for it, up to busy_timeout
    (regression: processes opening one new database together failed with "database is
    locked", seen in the fault test that deletes the database's folder)."""
    import threading

    path = tmp_path / "new.db"
    other = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    other.execute("CREATE TABLE unrelated (x)")
    other.execute("BEGIN IMMEDIATE")
    other.execute("INSERT INTO unrelated VALUES (1)")
    commit = threading.Timer(0.3, lambda: other.execute("COMMIT"))
    commit.start()
    service = SqlSessionService(f"sqlite:///{path}")
    try:
        session = await service.create_session(app_name="a", user_id="u")
        stored = await service.get_session(app_name="a", user_id="u", session_id=session.id)
        assert stored is not None and stored.id == session.id
    finally:
        commit.join()
        other.close()
        await service.close()
    with sqlite3.connect(path) as check:
        assert check.execute("PRAGMA journal_mode").fetchone() == ("wal",)


async def test_sqlite_locked_too_long_raises_backend_error(tmp_path: Path) -> None:
    """Contract (failures): when another process holds SQLite's write lock past
    busy_timeout, the append raises BackendError and stores nothing; it works afterwards."""
    path = tmp_path / "locked.db"
    service = SqlSessionService(f"sqlite:///{path}", busy_timeout=0.05)
    session = await service.create_session(app_name="a", user_id="u")
    other = sqlite3.connect(path, isolation_level=None)
    other.execute("BEGIN IMMEDIATE")
    try:
        with pytest.raises(BackendError, match="locked"):
            await service.append_event(session, Event(author="a"))
    finally:
        other.execute("ROLLBACK")
        other.close()
    await service.append_event(session, Event(author="a"))
    stored = await service.get_session(app_name="a", user_id="u", session_id=session.id)
    assert stored is not None and len(stored.events) == 1 and len(session.events) == 1
    await service.close()


async def test_concurrent_tasks_in_one_process(db_url: str) -> None:
    """Contract (many writers): concurrent tasks appending through one service to one
    session copy each commit once, in some order, and the state is the fold."""
    service = SqlSessionService(db_url)
    app = f"app_{uuid.uuid4().hex[:8]}"
    session = await service.create_session(app_name=app, user_id="u")
    copies = [
        await service.get_session(app_name=app, user_id="u", session_id=session.id)
        for _ in range(5)
    ]

    async def writer(k: int) -> None:
        copy = copies[k]
        assert copy is not None
        for i in range(10):
            await service.append_event(
                copy, Event(author=f"w{k}", actions=EventActions(state_delta={f"w{k}": i}))
            )

    await asyncio.gather(*(writer(k) for k in range(5)))
    stored = await service.get_session(app_name=app, user_id="u", session_id=session.id)
    assert stored is not None and len(stored.events) == 50
    assert stored.state == {f"w{k}": 9 for k in range(5)}
    await service.close()


async def test_newer_schema_is_refused(db_url: str) -> None:
    """Migrations: a database whose schema version is newer than this code is refused with
    SchemaVersionError, never silently used or downgraded."""
    service = SqlSessionService(db_url)
    await service.list_sessions(app_name="a")  # creates the schema
    await service.close()
    bump = f"UPDATE eventide_schema_versions SET version = {SCHEMA_VERSION + 1} WHERE component = 'sessions'"
    await _execute(db_url, bump)
    try:
        newer = SqlSessionService(db_url)
        with pytest.raises(SchemaVersionError, match="newer Eventide") as caught:
            await newer.list_sessions(app_name="a")
        assert (caught.value.found, caught.value.supported) == (SCHEMA_VERSION + 1, SCHEMA_VERSION)
        await newer.close()
    finally:
        await _execute(
            db_url,
            f"UPDATE eventide_schema_versions SET version = {SCHEMA_VERSION} WHERE component = 'sessions'",
        )


async def _execute(db_url: str, statement: str) -> None:
    from sqlalchemy.engine import make_url

    url = make_url(db_url)
    if url.get_backend_name() == "sqlite":
        with sqlite3.connect(str(url.database)) as conn:
            conn.execute(statement)
    else:
        await pg_admin(statement, database=url.database)


async def test_state_keys_with_json_path_characters(db_url: str) -> None:
    """DESIGN, the log is the truth: state keys are opaque strings. Keys that look like JSON
    paths (dots, brackets, quotes, backslashes, '$', empty) merge and read back exactly, in
    every scope, whichever way the store merges them."""
    service = SqlSessionService(db_url)
    app = f"app_{uuid.uuid4().hex[:8]}"
    session = await service.create_session(app_name=app, user_id="u")
    keys = ["a.b", "x[0]", "$", "", 'say "hi"', "back\\slash", "ünï", "it's"]
    expected: dict[str, Any] = {}
    for n, key in enumerate(keys):
        delta = {key: n, f"app:{key}": [n], f"user:{key}": {"n": n}}
        await service.append_event(
            session, Event(author="a", actions=EventActions(state_delta=delta))
        )
        expected.update(delta)
    # A second write to the same keys replaces (never deep-merges) the values.
    await service.append_event(
        session,
        Event(
            author="a", actions=EventActions(state_delta={'say "hi"': {"new": True}, "a.b": None})
        ),
    )
    expected.update({'say "hi"': {"new": True}, "a.b": None})
    stored = await service.get_session(app_name=app, user_id="u", session_id=session.id)
    assert stored is not None and stored.state == expected == session.state
    await service.close()


async def test_state_values_come_back_exactly_in_every_scope(db_url: str) -> None:
    """Contract (values): whatever way a store writes a value (SQLite binds strings, None
    and 64-bit integers to json_set as they are and JSON-encodes the rest), a fresh service
    reads back exactly the value appended, with its JSON type, in every scope and on both
    append paths (a current copy, and a stale one that goes through the general path)."""
    values: dict[str, Any] = {
        "s": 'quote " backslash \\ é \u2028',
        "none": None,
        "true": True,
        "false": False,
        "int": -(2**63),
        "int_max": 2**63 - 1,
        "big": 2**70,
        "float": 0.1 + 0.2,
        "whole_float": 2.0,
        "list": [1, "two", [3.5, None]],
        "dict": {"a": {"b": [True]}},
    }
    delta = {
        **values,
        **{f"app:{k}": v for k, v in values.items()},
        **{f"user:{k}": v for k, v in values.items()},
    }
    app = f"app_{uuid.uuid4().hex[:8]}"
    service = SqlSessionService(db_url)
    current = await service.create_session(app_name=app, user_id="u", state={"k": 0})
    stale = await service.get_session(app_name=app, user_id="u", session_id=current.id)
    assert stale is not None
    await service.append_event(
        current, Event(author="a", actions=EventActions(state_delta=dict(delta)))
    )
    renamed = {f"{k}2": v for k, v in delta.items()}
    await service.append_event(
        stale, Event(author="a", actions=EventActions(state_delta=dict(renamed)))
    )
    await service.close()

    reader = SqlSessionService(db_url)
    stored = await reader.get_session(app_name=app, user_id="u", session_id=current.id)
    await reader.close()
    assert stored is not None
    expected = {"k": 0, **delta, **renamed}
    assert stored.state == expected
    for key, value in expected.items():
        assert type(stored.state[key]) is type(value), key  # True stays True, 2.0 a float
    assert stale.state == expected  # the stale copy got the other event folded in
