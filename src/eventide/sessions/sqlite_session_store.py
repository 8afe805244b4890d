"""The SQLite store: whole transactions in one step, inline when that is cheapest.

Each operation (an append with its state changes, a read, a create) is one Python function
running one SQLite transaction. Where it runs:

- **inline**, on the event loop's thread, when it cannot wait: a read (WAL readers never
  wait), or a write with ``synchronous=NORMAL`` (no fsync at commit) whose write lock is
  free right now (the inline connection's busy timeout is 0). Such a transaction costs tens
  of microseconds, less than handing it to a thread and back, which on a loaded machine
  costs hundreds;
- **on the store's own thread** otherwise: when another process holds the write lock (the
  thread waits up to ``busy_timeout``), with ``synchronous=FULL`` (an fsync per commit),
  and for WAL checkpoints (which fsync). So the event loop never waits on a lock or a disk
  flush.

WAL checkpoints (inline writes only; with ``synchronous=FULL`` the thread's connection keeps
SQLite's own): one is due every ``_CHECKPOINT_EVERY`` commits, and it waits for a pause in
the writes (``_CHECKPOINT_IDLE_S`` without a commit). A checkpoint in the middle of a burst
of writes costs the burst: its fsyncs stall the writes for milliseconds at a time (10 to 30
us per commit on average on the benchmark VM), and it cannot restart the WAL, which a
checkpoint can only do when no commit lands while it runs, so the WAL keeps growing, and a
write that extends the file costs more than one that reuses it. In a pause it costs the
writes nothing and the next write starts the WAL over. Writes that never pause still get a
checkpoint once the WAL file has grown by ``_CHECKPOINT_FORCED_BYTES`` since the last one.

Every transaction checks, just before it commits (and every read before it answers), that
the files its connection uses are still the files at the store's path: the database, its
``-wal`` and its ``-shm`` (see :mod:`eventide._sqlite_files`, which also keeps a connection
from sharing another one's deleted WAL index). When they are not, the operation fails with
``BackendError``, nothing is acknowledged, and the store closes both its connections, so the
next operation opens whatever database is at the path then. Whether that file needs its
tables is decided by the schema version stored in it, not by its inode number, which a new
file may reuse.

Neither place belongs to an event loop, so the store works from any loop, one after another.
Writers take SQLite's write lock up front (``BEGIN IMMEDIATE``), so several processes queue
on the lock instead of failing on a lock upgrade; every read-modify-write of state happens
under that lock.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import sqlite3
import threading
import time
import uuid
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar, cast

from eventide._database_urls import MEMORY_PATH
from eventide._sql_migrations import migrate_sqlite, sqlite_version
from eventide._sqlite_files import (
    REPLACED,
    TrackedConnection,
    check_files,
    files_at,
    is_busy,
    set_up,
)
from eventide.errors import BackendError, CorruptRecordError
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
from eventide.sessions.sql_schema import COMPONENT, MIGRATIONS, SCHEMA_VERSION

__all__ = ["SqliteSessionStore"]

_T = TypeVar("_T")
# What runs a statement: a connection, or one cursor reused for a transaction's statements.
_Executor = sqlite3.Connection | sqlite3.Cursor

_BUMP = (
    "UPDATE sessions SET last_seq = last_seq + 1, update_time = ? "
    "WHERE app_name = ? AND user_id = ? AND id = ? RETURNING pk, last_seq"
)
_BUMP_WITH_STATE = (
    "UPDATE sessions SET last_seq = last_seq + 1, update_time = ? "
    "WHERE app_name = ? AND user_id = ? AND id = ? RETURNING pk, last_seq, state"
)
_INSERT_EVENT = (
    "INSERT INTO events (session_pk, seq, app_name, user_id, session_id, id, invocation_id, "
    "timestamp, event) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (session_pk, id) DO NOTHING"
)
_BUMP_MERGING = (
    "UPDATE sessions SET last_seq = last_seq + 1, update_time = ?, state = {old} "
    "WHERE app_name = ? AND user_id = ? AND id = ? RETURNING pk, last_seq"
)
# The common append: the caller's copy is at the end of the log. The event goes in as
# number expected + 1 only if the log is that long (and its id is new); then the session
# moves to it. Plain statements, no RETURNING (whose rows cost more than the lookups
# they save): when the insert stores nothing (a stale copy, a duplicate, no such session)
# the general path (``_BUMP*``) sorts it out, in the same transaction.
# The event row's copies of the session's names come from the session row, not from
# parameters bound a second time (each bound string is a copy).
_INSERT_NEXT_EVENT = (
    "INSERT INTO events (session_pk, seq, app_name, user_id, session_id, id, invocation_id, "
    "timestamp, event) SELECT pk, ?, app_name, user_id, id, ?, ?, ?, ? FROM sessions "
    "WHERE app_name = ? AND user_id = ? AND id = ? AND last_seq = ? "
    "ON CONFLICT (session_pk, id) DO NOTHING"
)
_SET_SEQ = (
    "UPDATE sessions SET last_seq = ?, update_time = ? "
    "WHERE app_name = ? AND user_id = ? AND id = ?"
)
_SET_SEQ_MERGING = (
    "UPDATE sessions SET last_seq = ?, update_time = ?, state = {old} "
    "WHERE app_name = ? AND user_id = ? AND id = ?"
)
_MERGE_APP = (
    "INSERT INTO app_states (app_name, state, update_time) VALUES (?, {new}, ?) "
    "ON CONFLICT (app_name) DO UPDATE SET state = {old}, update_time = excluded.update_time"
)
_MERGE_USER = (
    "INSERT INTO user_states (app_name, user_id, state, update_time) VALUES (?, ?, {new}, ?) "
    "ON CONFLICT (app_name, user_id) DO UPDATE SET state = {old}, "
    "update_time = excluded.update_time"
)
_SET_SESSION_STATE = "UPDATE sessions SET state = ? WHERE pk = ?"
_APP_STATE = "SELECT state FROM app_states WHERE app_name = ?"
_PUT_APP_STATE = (
    "INSERT INTO app_states (app_name, state, update_time) VALUES (?, ?, ?) "
    "ON CONFLICT (app_name) DO UPDATE SET state = excluded.state, "
    "update_time = excluded.update_time"
)
_USER_STATE = "SELECT state FROM user_states WHERE app_name = ? AND user_id = ?"
_PUT_USER_STATE = (
    "INSERT INTO user_states (app_name, user_id, state, update_time) VALUES (?, ?, ?, ?) "
    "ON CONFLICT (app_name, user_id) DO UPDATE SET state = excluded.state, "
    "update_time = excluded.update_time"
)
_SESSION_WITH_STATES = (
    "SELECT s.pk, s.state, s.last_seq, s.update_time, a.state, u.state FROM sessions s "
    "LEFT JOIN app_states a ON a.app_name = s.app_name "
    "LEFT JOIN user_states u ON u.app_name = s.app_name AND u.user_id = s.user_id "
    "WHERE s.app_name = ? AND s.user_id = ? AND s.id = ?"
)
# Newest first through the primary key (session_pk, seq), so a LIMIT stops early; the
# timestamp filter is a separate statement so the planner never trades that order away.
_EVENTS = (
    "SELECT seq, id, event FROM events WHERE session_pk = ? AND seq > ? AND seq <= ? "
    "ORDER BY seq DESC LIMIT ?"
)
_EVENTS_AFTER_TIME = (
    "SELECT seq, id, event FROM events WHERE session_pk = ? AND seq > ? AND seq <= ? "
    "AND timestamp >= ? ORDER BY seq DESC LIMIT ?"
)
_INITIAL_STATE = "SELECT initial_state FROM sessions WHERE app_name = ? AND user_id = ? AND id = ?"

# The app's sessions with their merged state; filters and paging are appended.
_LIST_SESSIONS = (
    "SELECT s.user_id, s.id, s.update_time, s.state, a.state, u.state FROM sessions s "
    "LEFT JOIN app_states a ON a.app_name = s.app_name "
    "LEFT JOIN user_states u ON u.app_name = s.app_name AND u.user_id = s.user_id "
    "WHERE s.app_name = ?"
)
# See the module docstring (WAL checkpoints).
_CHECKPOINT_EVERY = 500
_CHECKPOINT_IDLE_S = 0.05
_CHECKPOINT_FORCED_BYTES = 64 * 1024 * 1024
# How many times an open starts again when a file at the path is replaced meanwhile.
_OPEN_TRIES = 3


class _FileGoneError(Exception):
    """The connection's files are no longer the files at the store's path (or, opening,
    another connection of the process to that database holds such files)."""


class _ReplacedWhileOpeningError(_FileGoneError):
    """A file at the path was deleted or replaced while a connection opened it."""


class SqliteSessionStore:
    """Sessions in a SQLite file (WAL journal).

    Args:
        path: the database file (created if missing).
        synchronous: ``NORMAL`` (a commit survives any process crash; an OS crash or power
            loss may drop the last commits) or ``FULL`` (fsync on every commit).
        busy_timeout: seconds to wait for another process's write lock.
    """

    dialect = "sqlite"

    def __init__(self, path: str, *, synchronous: str, busy_timeout: float) -> None:
        self._path = path
        # ":memory:": one shared-cache database for the store's connections, alive as long
        # as the store keeps its first connection open.
        self._memory = path == MEMORY_PATH
        self._target = f"file:eventide-{uuid.uuid4().hex}?mode=memory&cache=shared"
        self._keepalive: sqlite3.Connection | None = None
        self._synchronous = synchronous
        self._busy_timeout = busy_timeout
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="eventide-sqlite")
        self._thread_conn: sqlite3.Connection | None = None  # used only on the store's thread
        self._inline_conn: sqlite3.Connection | None = None  # used only under _inline_lock
        self._inline_lock = threading.Lock()
        self._inline_writes = synchronous == "NORMAL"
        self._commits_since_checkpoint = 0
        self._last_commit = 0.0  # time.monotonic() of the last inline commit
        self._wal_size = 0  # the WAL file's size at the last identity check
        self._wal_size_at_checkpoint = 0
        # The pending idle-checkpoint timer and the loop it runs on.
        self._checkpoint_timer: asyncio.TimerHandle | None = None
        self._checkpoint_loop: asyncio.AbstractEventLoop | None = None
        self._closed = False
        # Set by the first migration: from then on every new connection checks the schema
        # version of the file it opened (the file may be a new one).
        self._migrated = False

    # --- where an operation runs ---
    async def _run(self, fn: Callable[..., _T], *args: Any, write: bool = True) -> _T:
        """Run ``fn(conn, *args)`` inline when it cannot wait, else on the store's thread."""
        if (self._inline_writes or not write) and self._inline_lock.acquire(blocking=False):
            gone = False
            try:
                try:
                    conn = self._inline_conn or self._open_inline()
                    result = fn(conn, *args)
                except sqlite3.OperationalError as exc:
                    if not is_busy(exc):
                        self._drop_inline()
                        raise self._backend_error(exc) from exc
                    # Another process holds the write lock: wait for it on the thread.
                except sqlite3.Error as exc:
                    self._drop_inline()
                    raise self._backend_error(exc) from exc
                except _FileGoneError:
                    self._drop_inline()
                    gone = True
                else:
                    if write:
                        self._after_inline_commit()
                    return result
            finally:
                self._inline_lock.release()
            if gone:
                # The thread's connection holds the same lost files: close it too.
                await asyncio.get_running_loop().run_in_executor(self._executor, self._drop_thread)
                raise self._file_gone_error()
        loop = asyncio.get_running_loop()
        try:
            return await loop.run_in_executor(self._executor, self._on_thread, fn, args)
        except sqlite3.Error as exc:
            raise self._backend_error(exc) from exc
        except _FileGoneError as exc:
            raise self._file_gone_error() from exc

    def _on_thread(self, fn: Callable[..., _T], args: tuple[Any, ...]) -> _T:
        try:
            conn = self._thread_conn
            if conn is None:
                conn = self._thread_conn = self._open(
                    timeout=self._busy_timeout, on_stale=self._let_go_of_thread_soon
                )
            return fn(conn, *args)
        except _FileGoneError:
            self._drop_thread()
            # The inline connection holds the same lost files (its holders never wait on
            # this thread, so taking the lock cannot deadlock).
            with self._inline_lock:
                self._drop_inline()
            raise
        except sqlite3.Error:
            # Start the next operation on a fresh connection: after a failed commit (a full
            # disk, an I/O error) this one may be left inside a transaction.
            self._drop_thread()
            raise

    def _drop_thread(self) -> None:
        """Close the thread's connection (on the store's thread)."""
        conn, self._thread_conn = self._thread_conn, None
        if conn is not None:
            conn.close()

    # on_stale: another connection of the process was refused because this one holds files
    # no longer at the path (see eventide._sqlite_files); let go of it while it is not in use.
    def _let_go_of_thread_soon(self, conn: sqlite3.Connection) -> None:
        with contextlib.suppress(RuntimeError):  # the store is closed: nothing to do
            self._executor.submit(self._let_go_of_thread, conn)

    def _let_go_of_thread(self, conn: sqlite3.Connection) -> None:
        if self._thread_conn is conn:
            self._drop_thread()

    def _let_go_of_inline(self, conn: sqlite3.Connection) -> None:
        # Not waiting for an operation that uses it: that one notices the files itself.
        if self._inline_lock.acquire(blocking=False):
            try:
                if self._inline_conn is conn:
                    self._drop_inline()
            finally:
                self._inline_lock.release()

    def _drop_inline(self) -> None:
        """Close the inline connection (the next operation opens a fresh one): after a
        failed commit it may be left inside a transaction, holding the write lock."""
        conn, self._inline_conn = self._inline_conn, None
        if conn is not None:
            conn.close()

    def _check_file(self, conn: sqlite3.Connection) -> None:
        """Raise _FileGoneError unless ``conn``'s database, WAL and WAL index are still the
        files at the path (called inside write transactions, just before the commit, and
        before reads)."""
        if not self._memory:
            wal = check_files(cast(TrackedConnection, conn))
            if wal is None:
                raise _FileGoneError
            self._wal_size = wal.st_size

    def _file_gone_error(self) -> BackendError:
        return BackendError(
            f"The SQLite database file {self._path!r} is no longer the file this store "
            "opened: it (or its folder) was deleted, moved or replaced. Nothing of this "
            "operation was committed. Put the database back (or let the next operation "
            "start a new one at that path, once its folder exists)."
        )

    def _backend_error(self, exc: sqlite3.Error) -> BackendError:
        if _is_unwritable(exc):
            return BackendError(
                f"SQLite database {self._path!r} could not be written ({_described(exc)}): "
                "check that the file, its -wal and -shm files and their folder are writable "
                "(file modes, an immutable attribute, a read-only mount) and that the disk "
                "has room. Nothing of this operation was committed; the next operation "
                "tries again."
            )
        return BackendError(
            f"SQLite database {self._path!r} failed: {_described(exc)}. Nothing of this "
            "operation was committed. If the database is locked, another process held the "
            f"write lock longer than busy_timeout={self._busy_timeout}s."
        )

    def _open(
        self, *, timeout: float, on_stale: Callable[[sqlite3.Connection], None]
    ) -> sqlite3.Connection:
        """A new connection to the files at the path. A file replaced while it is being
        opened is no fault by itself (another process's last connection deletes the WAL and
        its index as it closes): the open starts again, a few times.

        ``on_stale(conn)`` is the connection's owner letting go of it (see
        :attr:`TrackedConnection.on_stale`): set before the connection is registered among
        the process's connections, so a peer that finds it stale from then on can tell it.
        """
        for _ in range(_OPEN_TRIES - 1):
            try:
                return self._open_once(timeout=timeout, on_stale=on_stale)
            except _ReplacedWhileOpeningError:
                continue
        return self._open_once(timeout=timeout, on_stale=on_stale)

    def _open_once(
        self, *, timeout: float, on_stale: Callable[[sqlite3.Connection], None]
    ) -> sqlite3.Connection:
        # The files at the path just before the connect: SQLite opens the database in
        # connect, and its WAL and index at the first read after the switch to WAL, which
        # may wait for seconds while the files at the path are replaced.
        before = None if self._memory else files_at(self._path)
        conn = sqlite3.connect(
            self._target if self._memory else self._path,
            uri=self._memory,
            timeout=timeout,
            isolation_level=None,  # explicit BEGIN IMMEDIATE / COMMIT
            check_same_thread=False,  # the inline connection follows the running loop
            cached_statements=256,
            factory=TrackedConnection,
        )
        try:
            problem = set_up(
                conn,
                self._path,
                before,
                timeout=timeout,
                synchronous=self._synchronous,
                on_stale=on_stale,
            )
            if problem is not None:
                raise _ReplacedWhileOpeningError if problem == REPLACED else _FileGoneError
            if before is None:
                if self._keepalive is None:
                    self._keepalive = sqlite3.connect(
                        self._target, uri=True, check_same_thread=False
                    )
                return conn
            if self._migrated and sqlite_version(conn, COMPONENT) != SCHEMA_VERSION:
                # A new file at the path (the old one went away), perhaps with the old
                # one's inode number: bring it up to date.
                self._migrate(conn)
        except BaseException:
            conn.close()
            raise
        return conn

    def _open_inline(self) -> sqlite3.Connection:
        conn = self._open(timeout=0, on_stale=self._let_go_of_inline)
        # Checkpoints fsync; they run on the store's thread (see _after_inline_commit).
        conn.execute("PRAGMA wal_autocheckpoint=0")
        self._inline_conn = conn
        return conn

    def _after_inline_commit(self) -> None:
        self._last_commit = time.monotonic()
        self._commits_since_checkpoint += 1
        if self._commits_since_checkpoint < _CHECKPOINT_EVERY:
            return
        if self._wal_size - self._wal_size_at_checkpoint >= _CHECKPOINT_FORCED_BYTES:
            self._start_checkpoint()  # writes that never pause: do not wait any longer
            return
        loop = asyncio.get_running_loop()
        if self._checkpoint_timer is None or self._checkpoint_loop is not loop:
            # None pending on this loop (one pending on a closed loop never runs).
            self._checkpoint_loop = loop
            self._checkpoint_timer = loop.call_later(_CHECKPOINT_IDLE_S, self._checkpoint_when_idle)

    def _checkpoint_when_idle(self) -> None:
        """On the loop: start the due checkpoint if no commit came for _CHECKPOINT_IDLE_S,
        else look again when that much time has passed since the last one."""
        self._checkpoint_timer = None
        if self._closed or self._commits_since_checkpoint < _CHECKPOINT_EVERY:
            return
        idle = time.monotonic() - self._last_commit
        if idle >= _CHECKPOINT_IDLE_S:
            self._start_checkpoint()
        elif self._checkpoint_loop is not None:
            self._checkpoint_timer = self._checkpoint_loop.call_later(
                _CHECKPOINT_IDLE_S - idle, self._checkpoint_when_idle
            )

    def _start_checkpoint(self) -> None:
        self._commits_since_checkpoint = 0
        self._wal_size_at_checkpoint = self._wal_size
        if self._checkpoint_timer is not None:
            self._checkpoint_timer.cancel()
            self._checkpoint_timer = None
        # Fire and forget on the store's thread: a failed passive checkpoint is harmless
        # (the WAL just grows until the next one), and nothing awaits it.
        self._executor.submit(self._on_thread, self._checkpoint, ())

    def _checkpoint(self, conn: sqlite3.Connection) -> None:
        # Never copy a WAL that is no longer the one at the path into the database file:
        # other processes may be using a new WAL over that database by now.
        self._check_file(conn)
        conn.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchall()

    def _transaction(self, conn: sqlite3.Connection, body: Callable[[], _T]) -> _T:
        conn.execute("BEGIN IMMEDIATE")
        try:
            result = body()
            if conn.in_transaction:
                self._check_file(conn)
        except BaseException:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise
        if conn.in_transaction:
            conn.execute("COMMIT")
        return result

    # --- schema ---
    async def migrate(self) -> int:
        # On the thread: it may wait for another process that is migrating right now.
        loop = asyncio.get_running_loop()
        try:
            return await loop.run_in_executor(self._executor, self._on_thread, self._migrate, ())
        except sqlite3.Error as exc:
            raise self._backend_error(exc) from exc
        except _FileGoneError as exc:
            raise self._file_gone_error() from exc

    def _migrate(self, conn: sqlite3.Connection) -> int:
        found = self._transaction(
            conn, lambda: migrate_sqlite(conn, COMPONENT, MIGRATIONS, database=self._path)
        )
        self._migrated = True
        return found

    # --- operations ---
    async def create(
        self,
        *,
        app_name: str,
        user_id: str,
        session_id: str,
        deltas: tuple[dict[str, Any], dict[str, Any], dict[str, Any]],
        now: float,
    ) -> dict[str, Any] | None:
        return await self._run(self._create, app_name, user_id, session_id, deltas, now)

    def _create(
        self,
        conn: sqlite3.Connection,
        app_name: str,
        user_id: str,
        session_id: str,
        deltas: tuple[dict[str, Any], dict[str, Any], dict[str, Any]],
        now: float,
    ) -> dict[str, Any] | None:
        session_state, app_delta, user_delta = deltas

        def body() -> dict[str, Any] | None:
            cur = conn.execute(
                "INSERT INTO sessions (app_name, user_id, id, state, last_seq, create_time, "
                "update_time, initial_state) VALUES (?, ?, ?, ?, 0, ?, ?, ?) "
                "ON CONFLICT DO NOTHING",
                (
                    app_name,
                    user_id,
                    session_id,
                    dumps_json(session_state),
                    now,
                    now,
                    dumps_json(initial_state(deltas)),
                ),
            )
            if cur.rowcount == 0:
                conn.execute("ROLLBACK")
                return None
            if app_delta:
                self._merge_app(conn, app_name, app_delta, now)
            if user_delta:
                self._merge_user(conn, app_name, user_id, user_delta, now)
            row = conn.execute(_SESSION_WITH_STATES, (app_name, user_id, session_id)).fetchone()
            return merged_state(row, app_name, user_id, session_id)

        return self._transaction(conn, body)

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
        return await self._run(
            self._load,
            app_name,
            user_id,
            session_id,
            after_seq,
            upto_seq,
            num_recent,
            after_timestamp,
            write=False,
        )

    def _load(
        self,
        conn: sqlite3.Connection,
        app_name: str,
        user_id: str,
        session_id: str,
        after_seq: int | None,
        upto_seq: int | None,
        num_recent: int | None,
        after_timestamp: float | None,
    ) -> LoadedSession | None:
        self._check_file(conn)
        row = conn.execute(_SESSION_WITH_STATES, (app_name, user_id, session_id)).fetchone()
        if row is None:
            return None
        last_seq = int(row[2])
        events = self._events(
            conn,
            row[0],
            after_seq or 0,
            last_seq if upto_seq is None else upto_seq,
            after_timestamp,
            num_recent,
        )
        return LoadedSession(
            state=merged_state(row, app_name, user_id, session_id),
            last_seq=last_seq,
            update_time=float(row[3]),
            events=events,
        )

    @staticmethod
    def _events(
        conn: _Executor,
        pk: int,
        after_seq: int,
        upto_seq: int,
        after_timestamp: float | None,
        limit: int | None,
    ) -> list[StoredEvent]:
        n = -1 if limit is None else limit
        if after_timestamp is None:
            rows = conn.execute(_EVENTS, (pk, after_seq, upto_seq, n)).fetchall()
        else:
            rows = conn.execute(
                _EVENTS_AFTER_TIME, (pk, after_seq, upto_seq, after_timestamp, n)
            ).fetchall()
        rows.reverse()
        return [StoredEvent(r[0], r[1], r[2]) for r in rows]

    async def load_initial_state(
        self, *, app_name: str, user_id: str, session_id: str
    ) -> dict[str, Any] | None:
        def query(conn: sqlite3.Connection) -> dict[str, Any] | None:
            self._check_file(conn)
            row = conn.execute(_INITIAL_STATE, (app_name, user_id, session_id)).fetchone()
            if row is None or row[0] is None:
                return None
            return loads_state(row[0], f"the initial state of session {session_id!r}")

        return await self._run(query, write=False)

    async def list(
        self,
        *,
        app_name: str,
        user_id: str | None,
        limit: int | None,
        after: tuple[str, str] | None,
    ) -> list[ListedSession]:
        sql = _LIST_SESSIONS
        params: list[Any] = [app_name]
        if user_id is not None:
            sql += " AND s.user_id = ?"
            params.append(user_id)
        if after is not None:
            sql += " AND (s.user_id, s.id) > (?, ?)"
            params.extend(after)
        sql += " ORDER BY s.user_id, s.id LIMIT ?"
        params.append(-1 if limit is None else limit)

        def query(conn: sqlite3.Connection) -> list[ListedSession]:
            self._check_file(conn)
            return [listed_session(row, app_name) for row in conn.execute(sql, params)]

        return await self._run(query, write=False)

    async def delete(self, *, app_name: str, user_id: str, session_id: str) -> None:
        def delete(conn: sqlite3.Connection) -> None:
            def body() -> None:
                row = conn.execute(
                    "SELECT pk FROM sessions WHERE app_name = ? AND user_id = ? AND id = ?",
                    (app_name, user_id, session_id),
                ).fetchone()
                if row is not None:
                    conn.execute("DELETE FROM events WHERE session_pk = ?", (row[0],))
                    conn.execute("DELETE FROM sessions WHERE pk = ?", (row[0],))

            self._transaction(conn, body)

        await self._run(delete)

    async def append(self, request: AppendRequest) -> AppendOutcome:
        return await self._run(self._append, request)

    def _append(self, conn: sqlite3.Connection, r: AppendRequest) -> AppendOutcome:
        # One cursor for the whole transaction (conn.execute makes a new one per statement),
        # kept on the connection for the next append.
        cur = getattr(conn, "append_cursor", None)
        if cur is None:
            cur = conn.cursor()
            if isinstance(conn, TrackedConnection):
                conn.append_cursor = cur
        cur.execute("BEGIN IMMEDIATE")
        try:
            outcome = self._append_locked(cur, r)
            if conn.in_transaction:
                self._check_file(conn)
        except BaseException:
            if conn.in_transaction:
                cur.execute("ROLLBACK")
            raise
        if conn.in_transaction:
            cur.execute("COMMIT")
        return outcome

    def _append_locked(self, conn: _Executor, r: AppendRequest) -> AppendOutcome:
        where = (r.app_name, r.user_id, r.session_id)
        session_set = _json_set_args(r.session_delta) if r.session_delta else None
        if session_set is not None or not r.session_delta:
            seq = r.expected_seq + 1
            inserted = conn.execute(
                _INSERT_NEXT_EVENT,
                (
                    seq,
                    r.event_id,
                    r.invocation_id,
                    r.timestamp,
                    r.event_json,
                    *where,
                    r.expected_seq,
                ),
            ).rowcount
            if inserted:
                if session_set is None:
                    conn.execute(_SET_SEQ, (seq, r.timestamp, *where))
                else:
                    shape, args = session_set
                    statement = _merging(_SET_SEQ_MERGING, "state", shape)
                    _guarded(conn, statement, (seq, r.timestamp, *args, *where), r.session_id)
                if r.app_delta or r.user_delta:
                    self._merge_scopes(conn, r)
                return AppendOutcome("committed", seq, r.expected_seq)
        if not r.session_delta:
            rows = conn.execute(_BUMP, (r.timestamp, *where)).fetchall()
        elif session_set is not None:
            # Merge in SQL (json_set, in C): no read, parse and rewrite of the state in Python.
            shape, args = session_set
            statement = _merging(_BUMP_MERGING, "state", shape)
            rows = _guarded(conn, statement, (r.timestamp, *args, *where), r.session_id).fetchall()
        else:
            rows = conn.execute(_BUMP_WITH_STATE, (r.timestamp, *where)).fetchall()
        if not rows:
            conn.execute("ROLLBACK")
            return AppendOutcome("missing", 0, 0)
        row = rows[0]
        pk, seq = row[0], row[1]
        before = seq - 1
        if r.compare_and_set and before != r.expected_seq:
            conn.execute("ROLLBACK")
            return AppendOutcome("stale", before, before)
        cur = conn.execute(
            _INSERT_EVENT,
            (
                pk,
                seq,
                r.app_name,
                r.user_id,
                r.session_id,
                r.event_id,
                r.invocation_id,
                r.timestamp,
                r.event_json,
            ),
        )
        if cur.rowcount == 0:
            # Already stored (a retry, or another writer with the same event): undo the
            # sequence bump and report what the caller's copy is missing.
            conn.execute("ROLLBACK")
            outcome = AppendOutcome("duplicate", before, before)
            if before != r.expected_seq:
                self._fill_missed(conn, r, pk, before, outcome)
            return outcome
        if r.session_delta and session_set is None:
            state = loads_state(row[2], f"session {r.session_id!r}")
            state.update(r.session_delta)
            conn.execute(_SET_SESSION_STATE, (dumps_json(state), pk))
        self._merge_scopes(conn, r)
        outcome = AppendOutcome("committed", seq, before)
        if before != r.expected_seq:
            self._fill_missed(conn, r, pk, before, outcome)
        return outcome

    def _fill_missed(
        self,
        conn: _Executor,
        r: AppendRequest,
        pk: int,
        upto: int,
        outcome: AppendOutcome,
    ) -> None:
        """Read, in the append's snapshot, what the caller's copy lacks."""
        outcome.missed = self._events(conn, pk, r.expected_seq, upto, None, None)
        row = conn.execute(_SESSION_WITH_STATES, (r.app_name, r.user_id, r.session_id)).fetchone()
        outcome.state = merged_state(row, r.app_name, r.user_id, r.session_id)

    def _merge_scopes(self, conn: _Executor, r: AppendRequest) -> None:
        """Merge an append's app and user deltas into their shared states."""
        if r.app_delta:
            self._merge_app(conn, r.app_name, r.app_delta, r.timestamp)
        if r.user_delta:
            self._merge_user(conn, r.app_name, r.user_id, r.user_delta, r.timestamp)

    @staticmethod
    def _merge_app(conn: _Executor, app_name: str, delta: dict[str, Any], now: float) -> None:
        merge = _json_set_args(delta)
        if merge is not None:
            shape, args = merge
            statement = _merging(_MERGE_APP, "app_states.state", shape)
            _guarded(conn, statement, (app_name, *args, now, *args), app_name, what="app")
            return
        row = conn.execute(_APP_STATE, (app_name,)).fetchone()
        state = loads_state(row[0], f"app {app_name!r}") if row else {}
        state.update(delta)
        conn.execute(_PUT_APP_STATE, (app_name, dumps_json(state), now))

    @staticmethod
    def _merge_user(
        conn: _Executor, app_name: str, user_id: str, delta: dict[str, Any], now: float
    ) -> None:
        merge = _json_set_args(delta)
        if merge is not None:
            shape, args = merge
            statement = _merging(_MERGE_USER, "user_states.state", shape)
            values = (app_name, user_id, *args, now, *args)
            _guarded(conn, statement, values, user_id, what="user", app_name=app_name)
            return
        row = conn.execute(_USER_STATE, (app_name, user_id)).fetchone()
        state = loads_state(row[0], f"user {user_id!r} of app {app_name!r}") if row else {}
        state.update(delta)
        conn.execute(_PUT_USER_STATE, (app_name, user_id, dumps_json(state), now))

    async def close(self) -> None:
        self._closed = True
        if self._checkpoint_timer is not None:
            self._checkpoint_timer.cancel()
            self._checkpoint_timer = None

        def close_thread_connection() -> None:
            if self._thread_conn is not None:
                self._thread_conn.close()
                self._thread_conn = None

        try:
            await asyncio.get_running_loop().run_in_executor(
                self._executor, close_thread_connection
            )
        finally:
            self._executor.shutdown(wait=False)
            with self._inline_lock:
                if self._inline_conn is not None:
                    self._inline_conn.close()
                    self._inline_conn = None
            if self._keepalive is not None:
                self._keepalive.close()
                self._keepalive = None


def _described(exc: sqlite3.Error) -> str:
    """SQLite's message with its extended result code (``disk I/O error`` alone does not
    say whether a read, a write, a lock or the shared-memory file failed)."""
    name = getattr(exc, "sqlite_errorname", None)
    return f"{exc}, {name}" if name else str(exc)


def _is_unwritable(exc: sqlite3.Error) -> bool:
    """An I/O error, a read-only file or a full disk: the store cannot write its files."""
    code = getattr(exc, "sqlite_errorcode", None)
    unwritable = (sqlite3.SQLITE_IOERR, sqlite3.SQLITE_READONLY, sqlite3.SQLITE_FULL)
    return code is not None and code & 0xFF in unwritable


def _json_set_args(delta: dict[str, Any]) -> tuple[tuple[bool, ...], list[Any]] | None:
    """The arguments of ``json_set(target, path, value, ...)`` for a delta, and its shape:
    for each key, whether its value goes in as JSON text through ``json(?)``. None when a
    key cannot be written as a JSON path label (it contains a double quote).

    Strings, None and 64-bit integers are bound as they are (``json_set`` stores them as a
    JSON string, null, integer) with no encoding in Python; anything else is JSON text,
    floats included (SQLite would print a bound REAL with 15 digits, losing precision).
    """
    args: list[Any] = []
    shape: list[bool] = []
    for key, value in delta.items():
        if '"' in key:
            return None
        args.append(f'$."{key}"')
        if (
            value is None
            or value.__class__ is str
            or (value.__class__ is int and _INT64_MIN <= value <= _INT64_MAX)
        ):
            args.append(value)
            shape.append(False)
        else:
            args.append(encode_json(value))
            shape.append(True)
    return tuple(shape), args


_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1


@functools.lru_cache(maxsize=256)
def _merging(template: str, column: str, shape: tuple[bool, ...]) -> str:
    """A merging statement's text for a delta shape, built once (not on every append):
    ``{old}`` becomes ``json_set(column, ...)``, ``{new}`` the same over ``'{}'``."""
    values = "".join(", ?, json(?)" if as_json else ", ?, ?" for as_json in shape)
    return template.format(new=f"json_set('{{}}'{values})", old=f"json_set({column}{values})")


def _guarded(
    conn: _Executor,
    sql: str,
    args: tuple[Any, ...],
    name: str,
    *,
    what: str = "session",
    app_name: str | None = None,
) -> sqlite3.Cursor:
    """Run a statement that merges into stored JSON; unparsable stored JSON is corrupt.
    ``what``, ``name`` and ``app_name`` name the state for the error (built only then)."""
    try:
        return conn.execute(sql, args)
    except sqlite3.OperationalError as exc:
        if "malformed JSON" not in str(exc):
            raise
        where = f"{what} {name!r}" + (f" of app {app_name!r}" if app_name is not None else "")
        raise CorruptRecordError(
            f"The stored state of {where} is not valid JSON ({exc}). Repair or delete the "
            "row; the rest of the database is unaffected."
        ) from exc
