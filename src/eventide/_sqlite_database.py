"""The SQLite connection layer: one per database file, shared by the session store and the
memory service (they only write queries on top of it).

Each operation (an append with its state changes, a read, a search) is one Python function
running one SQLite transaction on a connection the layer hands it. Where it runs:

- **inline**, on the event loop's thread, when it cannot wait (a store asks for this per
  kind of operation): a read (WAL readers never wait), or a write with
  ``synchronous=NORMAL`` (no fsync at commit) whose write lock is free right now (the inline
  connection's busy timeout is 0). Such a transaction costs tens of microseconds, less than
  handing it to a thread and back, which on a loaded machine costs hundreds;
- **on the layer's own thread** otherwise: when another process holds the write lock (the
  thread waits up to ``busy_timeout``), with ``synchronous=FULL`` (an fsync per commit),
  for migrations and WAL checkpoints (which may wait or fsync), and for every operation of
  a store that asks for no inline work (the memory service: a full-text search may take
  milliseconds). So the event loop never waits on a lock or a disk flush.

WAL checkpoints (inline writes only; the thread's connection keeps SQLite's own): one is due
every ``_CHECKPOINT_EVERY`` commits, and it waits for a pause in the writes
(``_CHECKPOINT_IDLE_S`` without a commit). A checkpoint in the middle of a burst of writes
costs the burst: its fsyncs stall the writes for milliseconds at a time (10 to 30 us per
commit on average on the benchmark VM), and it cannot restart the WAL, which a checkpoint
can only do when no commit lands while it runs, so the WAL keeps growing, and a write that
extends the file costs more than one that reuses it. In a pause it costs the writes nothing
and the next write starts the WAL over. Writes that never pause still get a checkpoint once
the WAL file has grown by ``_CHECKPOINT_FORCED_BYTES`` since the last one.

Every read checks before it answers, and every write transaction just before it commits,
that the files its connection uses are still the files at the path: the database, its
``-wal`` and its ``-shm`` (see :mod:`eventide._sqlite_files`, which also keeps a connection
from sharing another one's deleted WAL index). When they are not, the operation fails with
``BackendError``, nothing is acknowledged, and both connections are closed, so the next
operation opens whatever database is at the path then. Whether that file needs its tables is
decided by the schema version stored in it, not by its inode number, which a new file may
reuse.

Neither place belongs to an event loop, so the layer works from any loop, one after another.
Writers take SQLite's write lock up front (``BEGIN IMMEDIATE``), so several processes queue on
the lock instead of failing on a lock upgrade.
"""

from __future__ import annotations

import asyncio
import contextlib
import sqlite3
import threading
import time
import uuid
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, TypeVar, TypeVarTuple, cast

from eventide._database_urls import MEMORY_PATH
from eventide._sql_migrations import Migration, migrate_sqlite, sqlite_version
from eventide._sqlite_files import (
    REPLACED,
    TrackedConnection,
    check_files,
    files_at,
    is_busy,
    set_up,
)
from eventide.errors import BackendError

__all__ = ["SqliteDatabase", "SqliteSchema"]

_T = TypeVar("_T")
_Ts = TypeVarTuple("_Ts")

# See the module docstring (WAL checkpoints).
_CHECKPOINT_EVERY = 500
_CHECKPOINT_IDLE_S = 0.05
_CHECKPOINT_FORCED_BYTES = 64 * 1024 * 1024
# How many times an open starts again when a file at the path is replaced meanwhile.
_OPEN_TRIES = 3


@dataclass(frozen=True, slots=True)
class SqliteSchema:
    """A component's schema, as the shared migration runner takes it."""

    component: str
    migrations: Sequence[Migration]

    @property
    def version(self) -> int:
        """The version the last migration reaches."""
        return self.migrations[-1].version


class _FileGoneError(Exception):
    """The connection's files are no longer the files at the path (or, opening, another
    connection of the process to that database holds such files)."""


class _ReplacedWhileOpeningError(_FileGoneError):
    """A file at the path was deleted or replaced while a connection opened it."""


class SqliteDatabase:
    """One SQLite file (or ``:memory:``) and the connections that serve it (see the module
    docstring).

    Args:
        path: the database file (created if missing), or ``:memory:`` for a private
            database that lives as long as this object.
        schema: the tables the store needs (brought up to date by :meth:`migrate`, and on
            every new connection afterwards: the file at the path may be a new one).
        synchronous: ``NORMAL`` or ``FULL`` (SQLite's setting).
        busy_timeout: seconds the thread waits for another process's write lock.
        inline_reads: reads may run on the event loop's thread.
        inline_writes: writes may run there (only meaningful with ``NORMAL``).
        thread_name: the name prefix of the layer's thread.
    """

    def __init__(
        self,
        path: str,
        *,
        schema: SqliteSchema,
        synchronous: str,
        busy_timeout: float,
        inline_reads: bool,
        inline_writes: bool,
        thread_name: str,
    ) -> None:
        self.path = path
        self._schema = schema
        # ":memory:": one shared-cache database for the layer's connections, alive as long
        # as the layer keeps its first connection open.
        self._memory = path == MEMORY_PATH
        self._target = f"file:eventide-{uuid.uuid4().hex}?mode=memory&cache=shared"
        self._keepalive: sqlite3.Connection | None = None
        self._synchronous = synchronous
        self.busy_timeout = busy_timeout
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix=thread_name)
        self._thread_conn: sqlite3.Connection | None = None  # used only on the thread
        self._inline_conn: sqlite3.Connection | None = None  # used only under _inline_lock
        self._inline_lock = threading.Lock()
        self._inline_reads = inline_reads
        self._inline_writes = inline_writes and synchronous == "NORMAL"
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

    # --- running an operation ---
    async def run(
        self, fn: Callable[[sqlite3.Cursor, *_Ts], _T], /, *args: *_Ts, write: bool = True
    ) -> _T:
        """Run ``fn(cursor, *args)``: inline when it cannot wait, else on the layer's thread.

        A write runs in a transaction that takes the write lock up front (a deferred one
        that reads and then writes can fail at once with "database is locked" when another
        writer got in between, instead of waiting for it) and commits once the connection's
        files are checked; ``fn`` may end it with ``ROLLBACK`` itself (nothing to commit
        then). A read runs once the files are checked. One cursor per connection serves
        every operation (``conn.execute`` makes a new one per statement): ``fn`` consumes
        each statement's rows before the next.
        """
        if (self._inline_writes if write else self._inline_reads) and self._inline_lock.acquire(
            blocking=False
        ):
            gone = False
            try:
                try:
                    conn = self._inline_conn or self._open_inline()
                    result = self._call(conn, fn, args, write)
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
        return await self._on_thread_async(fn, args, write)

    async def _on_thread_async(
        self, fn: Callable[..., _T], args: tuple[Any, ...], write: bool
    ) -> _T:
        loop = asyncio.get_running_loop()
        try:
            return await loop.run_in_executor(self._executor, self._on_thread, fn, args, write)
        except sqlite3.Error as exc:
            raise self._backend_error(exc) from exc
        except _FileGoneError as exc:
            raise self._file_gone_error() from exc

    def _on_thread(self, fn: Callable[..., _T], args: tuple[Any, ...], write: bool) -> _T:
        try:
            conn = self._thread_conn
            if conn is None:
                conn = self._thread_conn = self._open(
                    timeout=self.busy_timeout, on_stale=self._let_go_of_thread_soon
                )
            return self._call(conn, fn, args, write)
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

    def _call(
        self,
        conn: sqlite3.Connection,
        fn: Callable[..., _T],
        args: tuple[Any, ...],
        write: bool,
    ) -> _T:
        """``fn(cursor, *args)`` on ``conn``, as :meth:`run` describes."""
        cur = cast(TrackedConnection, conn).reused_cursor
        if cur is None:
            cur = cast(TrackedConnection, conn).reused_cursor = conn.cursor()
        if not write:
            self.check(conn)
            return fn(cur, *args)
        cur.execute("BEGIN IMMEDIATE")
        try:
            result = fn(cur, *args)
            if conn.in_transaction:
                self.check(conn)
        except BaseException:
            if conn.in_transaction:
                cur.execute("ROLLBACK")
            raise
        if conn.in_transaction:
            cur.execute("COMMIT")
        return result

    def check(self, conn: sqlite3.Connection) -> None:
        """Fail the operation unless ``conn``'s database, WAL and WAL index are still the
        files at the path (called before reads and just before commits)."""
        if not self._memory:
            wal = check_files(cast(TrackedConnection, conn))
            if wal is None:
                raise _FileGoneError
            self._wal_size = wal.st_size

    # --- schema ---
    async def migrate(self) -> int:
        """Bring the schema up to date (on the thread: it may wait for another process that
        is migrating right now); return the version found."""
        found = await self._on_thread_async(self._migration, (), True)
        self._migrated = True
        return found

    def _migration(self, cur: sqlite3.Cursor) -> int:
        schema = self._schema
        return migrate_sqlite(cur, schema.component, schema.migrations, database=self.path)

    # --- connections ---
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
        before = None if self._memory else files_at(self.path)
        conn = sqlite3.connect(
            self._target if self._memory else self.path,
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
                self.path,
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
            schema = self._schema
            if self._migrated and sqlite_version(conn, schema.component) != schema.version:
                # A new file at the path (the old one went away), perhaps with the old
                # one's inode number: bring it up to date.
                self._call(conn, self._migration, (), True)
        except BaseException:
            conn.close()
            raise
        return conn

    def _open_inline(self) -> sqlite3.Connection:
        conn = self._open(timeout=0, on_stale=self._let_go_of_inline)
        # Checkpoints fsync; they run on the thread (see _after_inline_commit).
        conn.execute("PRAGMA wal_autocheckpoint=0")
        self._inline_conn = conn
        return conn

    def _drop_thread(self) -> None:
        """Close the thread's connection (on the thread)."""
        conn, self._thread_conn = self._thread_conn, None
        if conn is not None:
            conn.close()

    def _drop_inline(self) -> None:
        """Close the inline connection (the next operation opens a fresh one): after a
        failed commit it may be left inside a transaction, holding the write lock."""
        conn, self._inline_conn = self._inline_conn, None
        if conn is not None:
            conn.close()

    # on_stale: another connection of the process was refused because this one holds files
    # no longer at the path (see eventide._sqlite_files); let go of it while it is not in use.
    def _let_go_of_thread_soon(self, conn: sqlite3.Connection) -> None:
        with contextlib.suppress(RuntimeError):  # closed: nothing to do
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

    # --- checkpoints ---
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
        # Fire and forget on the thread: a failed passive checkpoint is harmless (the WAL
        # just grows until the next one), and nothing awaits it.
        # (A read: checked first, so a WAL that is no longer the one at the path is never
        # copied into the database file, which other processes may use with a new WAL.)
        self._executor.submit(self._on_thread, self._checkpoint, (), False)

    def _checkpoint(self, cur: sqlite3.Cursor) -> None:
        cur.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchall()

    # --- errors ---
    def _file_gone_error(self) -> BackendError:
        return BackendError(
            f"The SQLite database file {self.path!r} is no longer the file this store "
            "opened: it (or its folder) was deleted, moved or replaced. Nothing of this "
            "operation was committed. Put the database back (or let the next operation "
            "start a new one at that path, once its folder exists)."
        )

    def _backend_error(self, exc: sqlite3.Error) -> BackendError:
        if _is_unwritable(exc):
            return BackendError(
                f"SQLite database {self.path!r} could not be written ({_described(exc)}): "
                "check that the file, its -wal and -shm files and their folder are writable "
                "(file modes, an immutable attribute, a read-only mount) and that the disk "
                "has room. Nothing of this operation was committed; the next operation "
                "tries again."
            )
        return BackendError(
            f"SQLite database {self.path!r} failed: {_described(exc)}. Nothing of this "
            "operation was committed. If the database is locked, another process held the "
            f"write lock longer than busy_timeout={self.busy_timeout}s."
        )

    async def close(self) -> None:
        """Close the connections and the thread."""
        self._closed = True
        if self._checkpoint_timer is not None:
            self._checkpoint_timer.cancel()
            self._checkpoint_timer = None
        try:
            await asyncio.get_running_loop().run_in_executor(self._executor, self._drop_thread)
        finally:
            self._executor.shutdown(wait=False)
            with self._inline_lock:
                self._drop_inline()
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
