"""Where the memory service's SQL runs: one driver per dialect, no SQLAlchemy.

- **SQLite**: the standard library's ``sqlite3`` (as the session store), one connection on a
  thread of the service's own, so the event loop never waits on a lock or a disk write. An
  operation is one Python function running one whole transaction there. Before it runs, and
  again before a write commits, the connection's files are checked to be the files at the
  path (:mod:`eventide._sqlite_files`): a database or WAL deleted under the service fails
  the call, and the next one opens whatever is at the path then.
- **PostgreSQL**: asyncpg, with a pool of its own per event loop (asyncpg connections
  belong to the loop that opened them). A connection the server dropped (restart,
  failover, ``pg_terminate_backend``) is replaced and the operation, which is always safe
  to repeat, runs once more.

Both bring the schema up to date (:mod:`eventide.memory.sql_memory_schema`) with the shared
runner before the first operation on a new connection (SQLite: the file may be a new one) or
pool (PostgreSQL), and turn driver failures into :class:`BackendError`.
"""

from __future__ import annotations

import asyncio
import contextlib
import sqlite3
from collections.abc import Awaitable, Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

from eventide._database_urls import MEMORY_PATH, DatabaseUrl
from eventide._sql_migrations import migrate_postgres, migrate_sqlite, sqlite_version
from eventide._sqlite_files import (
    REPLACED,
    TrackedConnection,
    check_files,
    files_at,
    set_up,
)
from eventide.errors import BackendError, ConfigurationError
from eventide.memory.sql_memory_schema import COMPONENT, MIGRATIONS, SCHEMA_VERSION

__all__ = ["PostgresMemoryBackend", "SqliteMemoryBackend"]

_T = TypeVar("_T")

# How many times an open starts again when a file at the path is replaced meanwhile.
_OPEN_ATTEMPTS = 3


class _FileGoneError(Exception):
    """The connection's files are no longer the files at the path (see _sqlite_files)."""


def _failure(where: str, doing: str, exc: BaseException) -> BackendError:
    return BackendError(
        f"Memory store {where!r} failed to {doing}: {exc}. Nothing was changed by this "
        "call; check that the database is reachable and writable, then retry."
    )


class SqliteMemoryBackend:
    """A SQLite file (or ``:memory:``) served by one connection on the backend's thread."""

    def __init__(self, path: str, *, busy_timeout: float) -> None:
        self._path = path
        self._busy_timeout = busy_timeout
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="eventide-memory")
        self._conn: sqlite3.Connection | None = None  # used only on the thread

    async def run(self, fn: Callable[[sqlite3.Connection], _T], *, doing: str) -> _T:
        """Run ``fn(connection)`` on the backend's thread."""
        loop = asyncio.get_running_loop()
        try:
            return await loop.run_in_executor(self._executor, self._call, fn)
        except sqlite3.Error as exc:
            if "fts5" in str(exc).lower():
                raise ConfigurationError(
                    "This Python's SQLite was built without FTS5, which SqlMemoryService "
                    "needs. Use a Python whose sqlite3 has FTS5, or PostgreSQL."
                ) from exc
            raise _failure(self._path, doing, exc) from exc
        except _FileGoneError as exc:
            raise BackendError(
                f"Memory store {self._path!r} failed to {doing}: its SQLite file is no longer "
                "the file this service opened (it, its -wal or -shm, or their folder was "
                "deleted, moved or replaced). Nothing was changed by this call; the next call "
                "uses the database at that path."
            ) from exc

    def _call(self, fn: Callable[[sqlite3.Connection], _T]) -> _T:
        conn = self._conn or self._open()
        try:
            _check(conn)
            return fn(conn)
        except _FileGoneError:
            self._conn = None
            conn.close()
            raise
        except sqlite3.Error:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            if self._path != MEMORY_PATH:
                # The next operation starts on a fresh connection (and checks the schema of
                # whatever file is at the path then).
                self._conn = None
                conn.close()
            raise

    def _open(self) -> sqlite3.Connection:
        for attempt in range(_OPEN_ATTEMPTS):
            before = None if self._path == MEMORY_PATH else files_at(self._path)
            conn = sqlite3.connect(
                self._path,
                timeout=self._busy_timeout,
                isolation_level=None,  # explicit BEGIN IMMEDIATE / COMMIT
                check_same_thread=False,  # opened and used on the thread, closed from close()
                factory=TrackedConnection,
            )
            try:
                # WAL lets searches run while another process indexes; NORMAL is durable
                # against process crashes (an OS crash may lose the last commits, which is
                # fine for an index).
                problem = set_up(
                    conn,
                    self._path,
                    before,
                    timeout=self._busy_timeout,
                    synchronous="NORMAL",
                    on_stale=self._let_go_soon,
                )
                if problem is not None:
                    conn.close()
                    if problem == REPLACED and attempt < _OPEN_ATTEMPTS - 1:
                        continue  # a file at the path changed while it opened: again
                    raise _FileGoneError
                self._migrate(conn)
            except BaseException:
                conn.close()
                raise
            self._conn = conn
            return conn
        raise AssertionError("unreachable")  # pragma: no cover - the loop returns or raises

    def _let_go_soon(self, conn: sqlite3.Connection) -> None:
        """Close ``conn`` on the backend's thread, after the call running there (if any)."""
        with contextlib.suppress(RuntimeError):  # the service is closed: nothing to do
            self._executor.submit(self._let_go, conn)

    def _let_go(self, conn: sqlite3.Connection) -> None:
        if self._conn is conn:
            self._conn = None
            conn.close()

    def _migrate(self, conn: sqlite3.Connection) -> None:
        """Bring the file's schema up to date; only reads when it is (every new connection
        checks: the file at the path may be a new one)."""
        if sqlite_version(conn, COMPONENT) != SCHEMA_VERSION:
            write(conn, lambda: migrate_sqlite(conn, COMPONENT, MIGRATIONS, database=self._path))

    async def close(self) -> None:
        def close_connection() -> None:
            conn, self._conn = self._conn, None
            if conn is not None:
                conn.close()

        try:
            await asyncio.get_running_loop().run_in_executor(self._executor, close_connection)
        finally:
            self._executor.shutdown(wait=False)


def _check(conn: sqlite3.Connection) -> None:
    """Raise _FileGoneError unless a file connection's files are still those at its path."""
    if isinstance(conn, TrackedConnection) and conn.path and check_files(conn) is None:
        raise _FileGoneError


def write(conn: sqlite3.Connection, body: Callable[[], _T]) -> _T:
    """Run ``body`` in a write transaction. The write lock is taken up front: a deferred
    transaction that reads and then writes can fail at once with "database is locked" when
    another writer got in between, instead of waiting for it."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        result = body()
        _check(conn)  # nothing committed into files no longer at the path
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")
    return result


class PostgresMemoryBackend:
    """A PostgreSQL database served by an asyncpg pool per event loop."""

    def __init__(self, url: DatabaseUrl, *, max_connections: int) -> None:
        self._dsn = url.asyncpg_dsn
        self._where = url.redacted
        self._max_connections = max_connections
        self._pool: Any = None
        self._pool_loop: asyncio.AbstractEventLoop | None = None
        self._starting: asyncio.Task[Any] | None = None

    async def run(self, fn: Callable[[Any], Awaitable[_T]], *, doing: str) -> _T:
        """Run ``fn(connection)`` on a pooled asyncpg connection; once more on a fresh one
        when the pooled one turns out to be dead. ``fn`` must be safe to repeat."""
        errors = _driver_errors()
        for attempt in (1, 2):
            try:
                pool = await self._current_pool()
                async with pool.acquire() as conn:
                    return await fn(conn)
            except errors as exc:
                if attempt == 2 or not _is_disconnect(exc):
                    raise _failure(self._where, doing, exc) from exc
        raise AssertionError("unreachable")  # pragma: no cover - the loop returns or raises

    async def _current_pool(self) -> Any:
        loop = asyncio.get_running_loop()
        if self._pool is not None and self._pool_loop is loop:
            return self._pool
        starting = self._starting
        if starting is None or starting.get_loop() is not loop:
            starting = self._starting = loop.create_task(self._start())
        try:
            pool = await asyncio.shield(starting)
        except BaseException:
            if self._starting is starting and starting.done():
                self._starting = None  # the next call tries again
            raise
        if self._pool is not pool:
            if self._pool is not None:
                _abandon(self._pool)
            self._pool, self._pool_loop = pool, loop
        return pool

    async def _start(self) -> Any:
        import asyncpg

        driver: Any = asyncpg  # untyped: what is used of it is typed here
        pool: Any = await driver.create_pool(self._dsn, min_size=0, max_size=self._max_connections)
        try:
            async with pool.acquire() as conn, conn.transaction():
                await migrate_postgres(conn, COMPONENT, MIGRATIONS, database=self._where)
        except BaseException:
            pool.terminate()
            raise
        return pool

    async def close(self) -> None:
        pool, self._pool = self._pool, None
        self._starting = None
        if pool is None:
            return
        if self._pool_loop is asyncio.get_running_loop():
            await pool.close()
        else:
            _abandon(pool)


def _abandon(pool: Any) -> None:
    """Drop a pool whose connections belong to another event loop.

    They cannot be closed politely from here (their loop is usually closed already), so each
    is terminated: the server sees a disconnect, nothing is left half-open. With its loop
    gone, a transport never gets to close its socket; that is done here (asyncpg and asyncio
    keep it private), so no descriptor leaks.
    """
    for holder in getattr(pool, "_holders", ()):
        conn = getattr(holder, "_con", None)
        if conn is None:
            continue
        try:
            conn.terminate()
        except RuntimeError:
            pass  # "Event loop is closed": terminate() has still marked it closed
        transport = getattr(conn, "_transport", None)
        sock = getattr(transport, "_sock", None)
        if sock is not None:
            sock.close()
            transport._sock = None  # type: ignore[union-attr]


def _driver_errors() -> tuple[type[BaseException], ...]:
    import asyncpg

    return (
        OSError,
        asyncpg.PostgresError,
        asyncpg.InterfaceError,
        asyncpg.exceptions.InternalClientError,
    )


def _is_disconnect(exc: BaseException) -> bool:
    """The connection died under the operation (server restart, terminated backend)."""
    import asyncpg

    if isinstance(exc, asyncpg.InterfaceError):
        return "connection is closed" in str(exc) or "connection was closed" in str(exc)
    return isinstance(
        exc,
        ConnectionError
        | asyncpg.exceptions.InternalClientError
        | asyncpg.PostgresConnectionError
        | asyncpg.exceptions.OperatorInterventionError,
    )
