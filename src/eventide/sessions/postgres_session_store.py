"""The PostgreSQL store: SQLAlchemy 2 async over asyncpg, one engine per event loop.

An append is ONE statement (data-modifying CTEs) run outside an explicit transaction, so it
costs one round trip and is atomic on its own: it locks the session row
(``SELECT ... FOR UPDATE``), inserts the event with the next sequence number (skipped when
the event id is already stored), moves the session's sequence, and merges the state deltas
in SQL (``jsonb || delta``) for the session, the user and the app. Concurrent writers to one
session queue on the row lock, so the order of the log is the commit order.

SQLAlchemy owns the engine, the pool, migrations and the rarer operations (create, list,
delete). The two hot paths, append and load, run their statements on an asyncpg driver
directly (asyncpg's prepared statements, without SQLAlchemy's per-execute work): on one of
the store's own connections, a few it keeps checked out of the pool, whenever one is idle,
else on a pooled one. Checking a connection out of the pool and back in (greenlet hops and a
reset-on-return) cost more client CPU than the append itself. A connection found dead is
invalidated and the operation, safe to repeat, runs once more on a fresh one.

asyncpg connections belong to the event loop that opened them. The store keeps one engine
for the running loop; when it is used from another loop (tests, ``Runner.run``'s private
loop) it opens a new engine there and terminates the old one's connections.
"""

from __future__ import annotations

import asyncio
import collections
import functools
import re
import weakref
from collections.abc import AsyncGenerator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any, TypeVar, cast

from eventide._sql_migrations import migrate_postgres
from eventide.errors import BackendError
from eventide.sessions.session_store import (
    AppendOutcome,
    AppendRequest,
    ListedSession,
    LoadedSession,
    StoredEvent,
    dumps_json,
    encode_json,
    initial_state,
    listed_session,
    loads_state,
    merged_state,
)
from eventide.sessions.sql_schema import COMPONENT, MIGRATIONS

if TYPE_CHECKING:
    from sqlalchemy import TextClause
    from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

__all__ = ["PostgresSessionStore"]

_T = TypeVar("_T")

# The append statement, in parts: the app and user merges are only sent when the event
# has such a delta (unused, the two still cost the server about a fifth of the statement's
# execution, WAL flush aside). Data-modifying CTEs always run to completion, referenced or
# not.
_APPEND_HEAD = """
WITH cur AS (
    SELECT pk, last_seq FROM sessions
    WHERE app_name = :app AND user_id = :user AND id = :sid
    FOR UPDATE
), ins AS (
    INSERT INTO events (session_pk, seq, app_name, user_id, session_id, id, invocation_id,
                        timestamp, event)
    SELECT pk, last_seq + 1, :app, :user, :sid, :eid, :inv, :ts, :event FROM cur
    WHERE NOT :cas OR last_seq = :expected
    ON CONFLICT (session_pk, id) DO NOTHING
    RETURNING session_pk, seq
), upd AS (
    UPDATE sessions SET last_seq = ins.seq, update_time = :ts,
        state = COALESCE(sessions.state || CAST(:sdelta AS jsonb), sessions.state)
    FROM ins WHERE sessions.pk = ins.session_pk
)"""
_APPEND_APP = """, app AS (
    INSERT INTO app_states (app_name, state, update_time)
    SELECT :app, CAST(:adelta AS jsonb), :ts FROM ins
    ON CONFLICT (app_name) DO UPDATE
        SET state = app_states.state || EXCLUDED.state, update_time = EXCLUDED.update_time
)"""
_APPEND_USER = """, usr AS (
    INSERT INTO user_states (app_name, user_id, state, update_time)
    SELECT :app, :user, CAST(:udelta AS jsonb), :ts FROM ins
    ON CONFLICT (app_name, user_id) DO UPDATE
        SET state = user_states.state || EXCLUDED.state, update_time = EXCLUDED.update_time
)"""
_APPEND_RESULT = """
SELECT (SELECT last_seq FROM cur), (SELECT seq FROM ins)
"""

_SESSION_WITH_STATES = """
SELECT s.pk, s.state::text, s.last_seq, s.update_time, a.state::text, u.state::text
FROM sessions s
LEFT JOIN app_states a ON a.app_name = s.app_name
LEFT JOIN user_states u ON u.app_name = s.app_name AND u.user_id = s.user_id
WHERE s.app_name = :app AND s.user_id = :user AND s.id = :sid
"""

# A load is ONE statement (one round trip, one snapshot): the session row with its states
# (columns 0-5, as ``_SESSION_WITH_STATES``; the event columns NULL), then its events
# (columns 6-8; the session columns NULL), newest first through the primary key, so a LIMIT
# stops early. ``:upto`` NULL means up to the session's last_seq. No row: no such session.
# The events are a LATERAL subquery: inside it the session's pk is one known value, so the
# planner walks the primary key (session_pk, seq) backwards and stops at the LIMIT; as a
# plain join it read every event of the session and sorted them (``num_recent_events=20``
# on a 10,300-event session: 4.6 ms in the database, against 0.16 ms this way).
# The timestamp filter is a separate statement so the planner never trades that order away.
_LOAD = """
WITH s AS (
    SELECT s.pk, s.state::text AS state, s.last_seq, s.update_time, a.state::text AS app_state,
        u.state::text AS user_state
    FROM sessions s
    LEFT JOIN app_states a ON a.app_name = s.app_name
    LEFT JOIN user_states u ON u.app_name = s.app_name AND u.user_id = s.user_id
    WHERE s.app_name = :app AND s.user_id = :user AND s.id = :sid
)
SELECT pk, state, last_seq, update_time, app_state, user_state,
    CAST(NULL AS INTEGER), CAST(NULL AS TEXT), CAST(NULL AS TEXT)
FROM s
UNION ALL
SELECT NULL, NULL, NULL, NULL, NULL, NULL, e.seq, e.id, e.event
FROM s CROSS JOIN LATERAL (
    SELECT e.seq, e.id, e.event FROM events e
    WHERE e.session_pk = s.pk AND e.seq > :after
        AND e.seq <= COALESCE(CAST(:upto AS INTEGER), s.last_seq){time}
    ORDER BY e.seq DESC LIMIT :limit
) e
"""
_LOAD_ALL = _LOAD.format(time="")
_LOAD_AFTER_TIME = _LOAD.format(time=" AND e.timestamp >= :after_ts")

# The app's sessions with their merged state; filters and paging are appended.
_LIST_SESSIONS = """
SELECT s.user_id, s.id, s.update_time, s.state::text, a.state::text, u.state::text
FROM sessions s
LEFT JOIN app_states a ON a.app_name = s.app_name
LEFT JOIN user_states u ON u.app_name = s.app_name AND u.user_id = s.user_id
WHERE s.app_name = :app"""

# A session created without app: or user: keys (the usual case) is ONE statement: the
# insert and the app's and user's state to merge with it. (With such keys the merges must
# be visible to the read, which a data-modifying CTE's are not: separate statements then.)
_CREATE = """
WITH ins AS (
    INSERT INTO sessions (app_name, user_id, id, state, last_seq, create_time, update_time,
                          initial_state)
    VALUES (:app, :user, :sid, CAST(:state AS jsonb), 0, :now, :now, CAST(:initial AS jsonb))
    ON CONFLICT DO NOTHING
    RETURNING pk, state
)
SELECT ins.pk, ins.state::text, NULL, NULL, a.state::text, u.state::text
FROM ins
LEFT JOIN app_states a ON a.app_name = :app
LEFT JOIN user_states u ON u.app_name = :app AND u.user_id = :user
"""

_MERGE_APP = """
INSERT INTO app_states (app_name, state, update_time) VALUES (:app, CAST(:delta AS jsonb), :now)
ON CONFLICT (app_name) DO UPDATE
    SET state = app_states.state || EXCLUDED.state, update_time = EXCLUDED.update_time
"""

_MERGE_USER = """
INSERT INTO user_states (app_name, user_id, state, update_time)
VALUES (:app, :user, CAST(:delta AS jsonb), :now)
ON CONFLICT (app_name, user_id) DO UPDATE
    SET state = user_states.state || EXCLUDED.state, update_time = EXCLUDED.update_time
"""


class PostgresSessionStore:
    """Sessions in PostgreSQL.

    Args:
        url: a SQLAlchemy URL with the asyncpg driver (``postgresql+asyncpg://...``).
        engine_kwargs: extra arguments for ``create_async_engine``, over
            :attr:`DEFAULT_ENGINE_KWARGS` (a pool of 20 connections, 10 more under load).
    """

    dialect = "postgresql"

    # SQLAlchemy keeps 5 connections and opens up to 10 more under load, closing each extra
    # one as soon as it is returned. A server running many turns at once then opened and
    # closed PostgreSQL connections all the time (a backend process each): under 100
    # concurrent turns per process a quarter of the connections were new ones. Keeping 20
    # lets busy servers reuse them; connections are still only opened when needed.
    DEFAULT_ENGINE_KWARGS: dict[str, Any] = {"pool_size": 20, "max_overflow": 10}

    # How many pool connections the hot paths keep checked out for themselves (never more
    # than the pool's ``pool_size``, so the overflow still serves the other operations): a
    # checkout and check-in through the pool costs about 40 us of CPU and two greenlet
    # switches, a sizeable part of a turn's store work. When all of them are busy, an
    # append or load waits for the first to be free rather than going through the pool:
    # under a server's load most operations did, and the pool's extra connections added
    # PostgreSQL backends without adding throughput on a small machine.
    OWN_MAX = 16

    def __init__(self, url: str, *, engine_kwargs: dict[str, Any] | None = None) -> None:
        self._url = url
        self._engine_kwargs = {**self.DEFAULT_ENGINE_KWARGS, **(engine_kwargs or {})}
        self._engine: AsyncEngine | None = None
        self._engine_loop: asyncio.AbstractEventLoop | None = None
        self._drivers: weakref.WeakSet[Any] = weakref.WeakSet()
        # The store's own connections (pool connections kept checked out, up to OWN_MAX),
        # each as (pool connection, asyncpg driver), and those of them that are idle.
        self._owned: list[tuple[Any, Any]] = []
        self._idle: list[tuple[Any, Any]] = []
        # Operations waiting for an own connection, first come first served: each future
        # gets an idle connection, or None to try again (one was dropped, or the engine
        # changed).
        self._waiters: collections.deque[asyncio.Future[tuple[Any, Any] | None]] = (
            collections.deque()
        )
        self._own_limit = self.OWN_MAX

    def _current_engine(self) -> AsyncEngine:
        loop = asyncio.get_running_loop()
        engine = self._engine
        if engine is not None and self._engine_loop is loop:
            return engine
        if engine is not None:
            self._abandon(engine)
        from sqlalchemy import event
        from sqlalchemy.ext.asyncio import create_async_engine

        engine = create_async_engine(self._url, **self._engine_kwargs)
        drivers: weakref.WeakSet[Any] = weakref.WeakSet()
        self._drivers = drivers

        def remember(dbapi_connection: Any, _record: Any) -> None:
            drivers.add(dbapi_connection.driver_connection)

        event.listen(engine.sync_engine, "connect", remember)
        self._engine, self._engine_loop = engine, loop
        # A QueuePool's pool_size (other pools have no size: the class's limit then).
        size = getattr(engine.sync_engine.pool, "size", None)
        pool_size = int(cast("int", size())) if callable(size) else self.OWN_MAX
        self._own_limit = min(self.OWN_MAX, max(1, pool_size))
        return engine

    def _abandon(self, engine: AsyncEngine) -> None:
        """Drop an engine whose connections belong to another event loop.

        They cannot be closed politely from here (their loop is usually closed already), so
        each is terminated: the server sees a disconnect, nothing is left half-open.
        """
        for driver in list(self._drivers):
            try:
                driver.terminate()
            except RuntimeError:
                pass  # "Event loop is closed": terminate() has still marked it closed
            # With its loop gone, the transport never gets to close its socket; do it here
            # (asyncpg and asyncio keep it private), so no descriptor leaks.
            transport = getattr(driver, "_transport", None)
            sock = getattr(transport, "_sock", None)
            if sock is not None:
                sock.close()
                transport._sock = None  # type: ignore[union-attr]
        self._drivers = weakref.WeakSet()
        owned, self._owned, self._idle = self._owned, [], []
        self._wake_waiters()
        for own, _driver in owned:
            # Terminated above with the others; detached, so the pool forgets it without
            # a warning when it is garbage collected.
            own.detach()
        engine.sync_engine.dispose(close=False)

    @asynccontextmanager
    async def _connect(self, *, autocommit: bool = False) -> AsyncGenerator[AsyncConnection, None]:
        """A connection (in a transaction unless ``autocommit``); driver and network
        failures become ``BackendError``."""
        engine = self._current_engine()
        try:
            if autocommit:
                async with engine.connect() as conn:
                    yield await conn.execution_options(isolation_level="AUTOCOMMIT")
            else:
                async with engine.begin() as conn:
                    yield conn
        except _driver_errors() as exc:
            raise self._backend_error(exc) from exc

    def _backend_error(self, exc: BaseException) -> BackendError:
        return BackendError(
            f"PostgreSQL at {_redacted(self._url)} failed: {type(exc).__name__}: {exc}. "
            "Nothing of this operation was committed, or (for an append whose answer was "
            "lost) it was committed whole; appending the same event again is safe. The "
            "next operation reconnects once the database is reachable."
        )

    async def _run(
        self,
        work: Callable[[AsyncConnection], Awaitable[_T]],
        *,
        autocommit: bool = False,
        retry: bool = True,
    ) -> _T:
        """Run ``work`` on a pooled connection. When the connection turns out to be dead
        (server restart, terminated backend), SQLAlchemy invalidates the pool and, if the
        operation is safe to repeat, it runs once more on a fresh connection. This replaces
        a ping before every checkout, which costs asyncpg two round trips."""
        try:
            async with self._connect(autocommit=autocommit) as conn:
                return await work(conn)
        except BackendError as exc:
            if not retry or not _is_disconnect(exc.__cause__):
                raise
        async with self._connect(autocommit=autocommit) as conn:
            return await work(conn)

    async def migrate(self) -> int:
        async def work(driver: Any) -> int:
            async with driver.transaction():
                return await migrate_postgres(
                    driver, COMPONENT, MIGRATIONS, database=_redacted(self._url)
                )

        # A migration is one transaction: after a lost connection it is safe to run again.
        return await self._run_native(work)

    async def create(
        self,
        *,
        app_name: str,
        user_id: str,
        session_id: str,
        deltas: tuple[dict[str, Any], dict[str, Any], dict[str, Any]],
        now: float,
    ) -> dict[str, Any] | None:
        session_state, app_delta, user_delta = deltas
        if not app_delta and not user_delta:
            args = (
                app_name,
                user_id,
                session_id,
                dumps_json(session_state),
                now,
                dumps_json(initial_state(deltas)),
            )

            async def insert(driver: Any) -> Any:
                return await driver.fetchrow(_CREATE_NATIVE, *args)

            # Not repeated after a lost connection (see below).
            row = await self._run_native(insert, retry=False)
            return None if row is None else merged_state(row, app_name, user_id, session_id)

        async def work(conn: AsyncConnection) -> dict[str, Any] | None:
            pk = (
                await conn.execute(
                    _text(
                        "INSERT INTO sessions (app_name, user_id, id, state, last_seq, "
                        "create_time, update_time, initial_state) VALUES (:app, :user, :sid, "
                        "CAST(:state AS jsonb), 0, :now, :now, CAST(:initial AS jsonb)) "
                        "ON CONFLICT DO NOTHING RETURNING pk"
                    ),
                    {
                        "app": app_name,
                        "user": user_id,
                        "sid": session_id,
                        "state": dumps_json(session_state),
                        "now": now,
                        "initial": dumps_json(initial_state(deltas)),
                    },
                )
            ).scalar()
            if pk is None:
                return None
            if app_delta:
                await conn.execute(
                    _text(_MERGE_APP), {"app": app_name, "delta": dumps_json(app_delta), "now": now}
                )
            if user_delta:
                await conn.execute(
                    _text(_MERGE_USER),
                    {"app": app_name, "user": user_id, "delta": dumps_json(user_delta), "now": now},
                )
            row = (
                await conn.execute(
                    _text(_SESSION_WITH_STATES),
                    {"app": app_name, "user": user_id, "sid": session_id},
                )
            ).one()
            return merged_state(row, app_name, user_id, session_id)

        # Not repeated after a lost connection: if the first attempt committed, a second
        # would report the new session as already existing.
        return await self._run(work, retry=False)

    async def load(
        self,
        *,
        app_name: str,
        user_id: str,
        session_id: str,
        after_seq: int | None,
        upto_seq: int | None,
        num_recent: int | None,
        after_timestamp: float | None,
    ) -> LoadedSession | None:
        async def work(driver: Any) -> Any:
            if after_timestamp is None:
                return await driver.fetch(
                    _LOAD_NATIVE,
                    app_name,
                    user_id,
                    session_id,
                    after_seq or 0,
                    upto_seq,
                    num_recent,
                )
            return await driver.fetch(
                _LOAD_AFTER_TIME_NATIVE,
                app_name,
                user_id,
                session_id,
                after_seq or 0,
                upto_seq,
                after_timestamp,
                num_recent,
            )

        rows = await self._run_native(work)
        head: Any = None
        events: list[StoredEvent] = []
        for r in rows:
            if r[6] is None:
                head = r
            else:
                events.append(StoredEvent(r[6], r[7], r[8]))
        if head is None:
            return None
        # Newest first from the server (UNION ALL promises no order, so sort: linear on a
        # run that is already descending).
        events.sort(key=_seq_of)
        return LoadedSession(
            state=merged_state(head, app_name, user_id, session_id),
            last_seq=int(head[2]),
            update_time=float(head[3]),
            events=events,
        )

        return await self._run_native(work)

    async def load_initial_state(
        self, *, app_name: str, user_id: str, session_id: str
    ) -> dict[str, Any] | None:
        async def work(conn: AsyncConnection) -> dict[str, Any] | None:
            text = (
                await conn.execute(
                    _text(
                        "SELECT initial_state::text FROM sessions "
                        "WHERE app_name = :app AND user_id = :user AND id = :sid"
                    ),
                    {"app": app_name, "user": user_id, "sid": session_id},
                )
            ).scalar()
            if text is None:
                return None
            return loads_state(text, f"the initial state of session {session_id!r}")

        return await self._run(work, autocommit=True)

    async def list(
        self,
        *,
        app_name: str,
        user_id: str | None,
        limit: int | None,
        after: tuple[str, str] | None,
    ) -> list[ListedSession]:
        sql = _LIST_SESSIONS
        params: dict[str, Any] = {"app": app_name, "limit": limit}
        if user_id is not None:
            sql += " AND s.user_id = :user"
            params["user"] = user_id
        if after is not None:
            sql += " AND (s.user_id, s.id) > (:after_user, :after_id)"
            params["after_user"], params["after_id"] = after
        sql += " ORDER BY s.user_id, s.id LIMIT :limit"

        async def work(conn: AsyncConnection) -> list[ListedSession]:
            rows = (await conn.execute(_text(sql), params)).all()
            return [listed_session(row, app_name) for row in rows]

        return await self._run(work, autocommit=True)

    async def delete(self, *, app_name: str, user_id: str, session_id: str) -> None:
        async def work(conn: AsyncConnection) -> None:
            pk = (
                await conn.execute(
                    _text(
                        "SELECT pk FROM sessions WHERE app_name = :app AND user_id = :user "
                        "AND id = :sid FOR UPDATE"
                    ),
                    {"app": app_name, "user": user_id, "sid": session_id},
                )
            ).scalar()
            if pk is not None:
                await conn.execute(_text("DELETE FROM events WHERE session_pk = :pk"), {"pk": pk})
                await conn.execute(_text("DELETE FROM sessions WHERE pk = :pk"), {"pk": pk})

        await self._run(work)

    async def append(self, request: AppendRequest) -> AppendOutcome:
        r = request
        app_delta, user_delta = r.app_delta, r.user_delta
        # In the order of the statement's parameters (checked at import).
        args: tuple[Any, ...] = (
            r.app_name,
            r.user_id,
            r.session_id,
            r.event_id,
            r.invocation_id,
            r.timestamp,
            r.event_json,
            r.compare_and_set,
            r.expected_seq,
            encode_json(r.session_delta) if r.session_delta else None,
        )
        if app_delta:
            args += (encode_json(app_delta),)
        if user_delta:
            args += (encode_json(user_delta),)
        statement = _APPEND_NATIVE[bool(app_delta), bool(user_delta)]

        async def work(driver: Any) -> Any:
            return await driver.fetchrow(statement, *args)

        # Safe to repeat after a lost connection: if the first attempt committed, the event
        # id makes the second a no-op ("duplicate").
        row = await self._run_native(work)
        before, seq = row[0], row[1]
        if before is None:
            return AppendOutcome("missing", 0, 0)
        if seq is not None:
            return AppendOutcome("committed", int(seq), int(seq) - 1)
        if r.compare_and_set and before != r.expected_seq:
            return AppendOutcome("stale", int(before), int(before))
        return AppendOutcome("duplicate", int(before), int(before))

    async def _run_native(self, work: Callable[[Any], Awaitable[_T]], *, retry: bool = True) -> _T:
        """Run ``work(driver)`` on an asyncpg driver directly: an idle one of the store's
        own connections (one more is checked out while fewer than the limit, else the
        operation waits for one), or a pooled one when none can be had; retried once on a
        fresh connection when the one used turns out to be dead.

        The hot paths (append, load) skip SQLAlchemy's per-execute work, about a millisecond
        of CPU here, and use asyncpg's prepared statements. No SQLAlchemy transaction is
        open, so each statement commits on its own; ``work`` must be safe to repeat, or
        ``retry`` False (a dead connection then raises ``BackendError``).
        """
        from sqlalchemy.util import greenlet_spawn

        engine = self._current_engine()
        entry = self._idle.pop() if self._idle else None
        if entry is None:
            entry = await self._own_connection(engine)
        if entry is not None:
            own, own_driver = entry
            try:
                result = await work(own_driver)
            except _driver_errors() as exc:
                if not (own_driver.is_closed() or _is_disconnect(exc)):
                    self._idle_again(entry, engine)
                    raise self._backend_error(exc) from exc
                # Dead (server restart, terminated backend): drop it, and run the work once
                # more on the pool's side below.
                if entry in self._owned:
                    self._owned.remove(entry)
                await self._connections_lost(engine, own, exc)
                if not retry:
                    raise self._backend_error(exc) from exc
            except BaseException:
                self._idle_again(entry, engine)
                raise
            else:
                self._idle_again(entry, engine)
                return result

        for attempt in (1, 2):
            try:
                # The pooled connection itself, without an AsyncConnection around it: that
                # wrapper's checkout and release cost more CPU than the append's own work.
                pooled = await engine.raw_connection()
                try:
                    driver: Any = pooled.driver_connection
                    try:
                        return await work(driver)
                    except _driver_errors() as exc:
                        if driver.is_closed() or _is_disconnect(exc):
                            # never hand a dead connection out again
                            await self._connections_lost(engine, pooled, exc)
                        raise
                finally:
                    # Back to the pool (its reset-on-return may talk to the server: greenlet).
                    await greenlet_spawn(pooled.close)
            except _driver_errors() as exc:
                if attempt == 2 or not retry or not _is_disconnect(exc):
                    raise self._backend_error(exc) from exc
        raise AssertionError("unreachable")  # pragma: no cover - the loop returns or raises

    async def _own_connection(self, engine: AsyncEngine) -> tuple[Any, Any] | None:
        """An own connection for an operation when none was idle: a new one while fewer
        than the limit are open, else the first one another operation hands back. None
        when none can be had (the pool could not open one, the engine changed meanwhile):
        the operation then runs on a pooled connection."""
        while self._engine is engine:
            if len(self._owned) < self._own_limit:
                return await self._open_own(engine)
            waiter: asyncio.Future[tuple[Any, Any] | None] = (
                asyncio.get_running_loop().create_future()
            )
            self._waiters.append(waiter)
            try:
                entry = await waiter
            except BaseException:
                if waiter.done() and not waiter.cancelled():
                    handed = waiter.result()
                    if handed is not None:  # handed over just as this task was cancelled
                        self._idle_again(handed, engine)
                else:
                    try:
                        self._waiters.remove(waiter)
                    except ValueError:
                        pass
                raise
            if entry is not None:
                return entry
            if self._idle:  # woken to try again: one may be idle now
                return self._idle.pop()
        return None

    def _wake_waiters(self) -> None:
        """Tell every waiting operation to try again (connections were dropped, or the
        engine changed)."""
        waiters, self._waiters = self._waiters, collections.deque()
        for waiter in waiters:
            if not waiter.done():
                waiter.set_result(None)

    async def _open_own(self, engine: AsyncEngine) -> tuple[Any, Any] | None:
        """Check one more of the store's own connections out of the pool (kept until
        ``close``), returned busy; None when none can be had now (the pool's side then
        reports why)."""
        from sqlalchemy.util import greenlet_spawn

        try:
            own = await engine.raw_connection()
        except _driver_errors():
            return None
        if self._engine is not engine or len(self._owned) >= self._own_limit:
            # The store moved to another loop meanwhile, or others were opened meanwhile.
            await greenlet_spawn(own.invalidate if self._engine is not engine else own.close)
            return None
        entry = (own, own.driver_connection)
        self._owned.append(entry)
        return entry

    async def _connections_lost(self, engine: AsyncEngine, dead: Any, exc: BaseException) -> None:
        """A connection turned out dead: the server most likely dropped them all (restart,
        terminated backends). Invalidate it and mark every older pooled one stale (the
        pool reconnects those on checkout, as SQLAlchemy does on a disconnect), and drop
        the idle own ones, so the retry does not meet another dead connection."""
        from sqlalchemy.util import greenlet_spawn

        idle, self._idle = self._idle, []
        self._owned = [entry for entry in self._owned if entry not in idle]
        self._wake_waiters()  # fewer are open now: waiting operations may open new ones
        await greenlet_spawn(engine.sync_engine.pool._invalidate, dead, exc)  # pyright: ignore[reportPrivateUsage]
        for own, _driver in idle:
            await greenlet_spawn(own.invalidate)

    def _idle_again(self, entry: tuple[Any, Any], engine: AsyncEngine) -> None:
        """An own connection's operation is over: idle again, unless the store dropped it
        meanwhile (moved to another loop, closed)."""
        if self._engine is engine and entry in self._owned:
            waiters = self._waiters
            while waiters:
                waiter = waiters.popleft()
                if not waiter.done():
                    waiter.set_result(entry)
                    return
            self._idle.append(entry)

    async def close(self) -> None:
        engine, self._engine = self._engine, None
        if engine is None:
            return
        if self._engine_loop is asyncio.get_running_loop():
            owned, self._owned, self._idle = self._owned, [], []
            self._wake_waiters()
            if owned:
                from sqlalchemy.util import greenlet_spawn

                for own, _driver in owned:
                    await greenlet_spawn(own.close)  # back to the pool, which dispose closes
            await engine.dispose()
        else:
            self._abandon(engine)


@functools.lru_cache(maxsize=64)
def _text(sql: str) -> TextClause:
    """A parsed SQL statement, built once per text (parsing binds costs ~1 ms per call)."""
    from sqlalchemy import text

    return text(sql)


def _driver_errors() -> tuple[type[BaseException], ...]:
    import asyncpg
    from sqlalchemy.dialects.postgresql.asyncpg import AsyncAdapt_asyncpg_dbapi
    from sqlalchemy.exc import SQLAlchemyError

    return (
        SQLAlchemyError,
        # What a pool checkout raises, unwrapped, when no connection can be opened.
        AsyncAdapt_asyncpg_dbapi.Error,
        OSError,
        asyncpg.PostgresError,
        asyncpg.InterfaceError,
        asyncpg.exceptions.InternalClientError,
    )


def _is_disconnect(exc: BaseException | None) -> bool:
    import asyncpg
    from sqlalchemy.exc import DBAPIError

    if isinstance(exc, DBAPIError):
        return bool(exc.connection_invalidated)
    if isinstance(exc, asyncpg.InterfaceError):
        return "connection is closed" in str(exc)
    if isinstance(exc, asyncpg.exceptions.InternalClientError):
        # The server ended the session (e.g. pg_terminate_backend) while the connection sat
        # idle in the pool; asyncpg notices only when the next statement is sent.
        return True
    return isinstance(
        exc,
        ConnectionError
        | asyncpg.PostgresConnectionError
        | asyncpg.exceptions.OperatorInterventionError,
    )


def _native(sql: str) -> tuple[str, list[str]]:
    """Turn ``:name`` binds into asyncpg's ``$n``, and list the names in ``$n`` order."""
    names: list[str] = []

    def number(match: re.Match[str]) -> str:
        name = match.group(1)
        if name not in names:
            names.append(name)
        return f"${names.index(name) + 1}"

    return re.sub(r"(?<![:\w]):([a-z_]+)", number, sql), names


def _append_statements() -> dict[tuple[bool, bool], str]:
    """The append statement for each (has app delta, has user delta), in asyncpg's form;
    its parameters must be in the order ``append`` passes them."""
    statements: dict[tuple[bool, bool], str] = {}
    base = ["app", "user", "sid", "eid", "inv", "ts", "event", "cas", "expected", "sdelta"]
    for app in (False, True):
        for user in (False, True):
            sql = _APPEND_HEAD
            sql += _APPEND_APP if app else ""
            sql += _APPEND_USER if user else ""
            native, names = _native(sql + _APPEND_RESULT)
            expected = base + ["adelta"] * app + ["udelta"] * user
            if names != expected:
                raise AssertionError(f"append() passes its arguments out of order: {names}")
            statements[app, user] = native
    return statements


_APPEND_NATIVE = _append_statements()


def _load_statement(sql: str, expected: list[str]) -> str:
    native, names = _native(sql)
    if names != expected:
        raise AssertionError(f"arguments passed out of order: {names}")
    return native


_CREATE_NATIVE = _load_statement(_CREATE, ["app", "user", "sid", "state", "now", "initial"])
_LOAD_NATIVE = _load_statement(_LOAD_ALL, ["app", "user", "sid", "after", "upto", "limit"])
_LOAD_AFTER_TIME_NATIVE = _load_statement(
    _LOAD_AFTER_TIME, ["app", "user", "sid", "after", "upto", "after_ts", "limit"]
)


def _seq_of(event: StoredEvent) -> int:
    return event.seq


def _redacted(url: str) -> str:
    from sqlalchemy.engine import make_url

    return str(make_url(url).render_as_string(hide_password=True))
