"""The PostgreSQL connection layer: asyncpg connections bound to one event loop, shared by
the session store and the memory service (they only write queries on top of it).

- **Its own small pool.** An operation runs on an idle connection; while fewer than
  ``max_connections`` are open a new one is opened, else the operation waits for the first
  one handed back (first come, first served). A checkout through SQLAlchemy's pool (which the
  session store used before) cost about 40 us of CPU and two greenlet switches, a sizeable
  part of a turn's store work; here it is a list pop. Connections open only when needed and
  stay open until :meth:`PostgresDatabase.close`.
- **Broken connections are abandoned, and the operation runs once more.** When a connection
  turns out dead (server restart, failover, ``pg_terminate_backend``), it is closed, and so
  is every connection opened before it that is idle or busy (the server most likely dropped
  them all: they are closed as they come back), so the one retry, on a fresh connection, does
  not meet another dead one. Only operations that are safe to repeat are retried (every
  read; an append, which its event id makes idempotent; a migration, one transaction).
- **One event loop at a time.** asyncpg connections belong to the loop that opened them. Used
  from another loop (each test's loop, ``Runner.run``'s private loop), the layer drops the
  previous loop's connections and opens new ones. The old ones cannot be closed politely
  (their loop is usually closed already): each is terminated, and its socket closed here,
  which asyncpg and asyncio keep private, so no descriptor leaks.

Driver and network failures become :class:`~eventide.errors.BackendError` naming the server
(never the password).
"""

from __future__ import annotations

import asyncio
import collections
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from eventide._database_urls import DatabaseUrl
from eventide.errors import BackendError

__all__ = ["PostgresDatabase"]

_T = TypeVar("_T")


class PostgresDatabase:
    """A PostgreSQL database served by asyncpg connections of the running loop (see the
    module docstring).

    Args:
        url: the parsed database URL.
        max_connections: the most connections open at once.
        connect_kwargs: extra arguments for ``asyncpg.connect`` (``server_settings``,
            ``ssl``, ``command_timeout``, ...).
    """

    def __init__(
        self,
        url: DatabaseUrl,
        *,
        max_connections: int,
        connect_kwargs: dict[str, Any] | None = None,
    ) -> None:
        if max_connections < 1:
            raise ValueError(f"max_connections must be at least 1, got {max_connections}")
        self._dsn = url.asyncpg_dsn
        self.where = url.redacted
        self.max_connections = max_connections
        self._connect_kwargs = dict(connect_kwargs or {})
        self._loop: asyncio.AbstractEventLoop | None = None
        # The loop's open connections, each with the generation it was opened in; those of
        # them that are idle; how many are being opened.
        self._open: dict[Any, int] = {}
        self._idle: list[Any] = []
        self._opening = 0
        # Bumped when a connection is found dead: connections of older generations are
        # closed instead of reused.
        self._generation = 0
        # Operations waiting for a connection, first come first served: each future gets an
        # idle connection, or None to try again (one was dropped: it may open a new one).
        self._waiters: collections.deque[asyncio.Future[Any]] = collections.deque()

    async def run(self, work: Callable[[Any], Awaitable[_T]], *, retry: bool = True) -> _T:
        """Run ``work(connection)`` (an asyncpg connection, in autocommit: ``work`` opens a
        transaction when it needs one). When the connection turns out dead, it runs once
        more on a fresh one if ``retry`` (``work`` must then be safe to repeat)."""
        errors = _driver_errors()
        for attempt in (1, 2):
            try:
                conn = self._idle.pop() if self._idle and self._loop_is_current() else None
                if conn is None:
                    conn = await self._acquire()
            except errors as exc:
                if attempt == 2 or not retry or not _is_disconnect(exc):
                    raise self._backend_error(exc) from exc
                continue
            try:
                result = await work(conn)
            except errors as exc:
                dead = conn.is_closed() or _is_disconnect(exc)
                if dead:
                    self._lost(conn)
                else:
                    self._release(conn)
                if attempt == 2 or not retry or not dead:
                    raise self._backend_error(exc) from exc
            except BaseException:
                # Cancelled (or a bug in ``work``): a connection left inside a transaction
                # or mid-statement is not handed to the next operation.
                if conn.is_in_transaction():
                    self._lost(conn, everyone=False)
                else:
                    self._release(conn)
                raise
            else:
                self._release(conn)
                return result
        raise AssertionError("unreachable")  # pragma: no cover - the loop returns or raises

    def _loop_is_current(self) -> bool:
        return self._loop is asyncio.get_running_loop()

    async def _acquire(self) -> Any:
        """An idle connection of the running loop: a new one while fewer than the limit are
        open, else the first one another operation hands back."""
        loop = asyncio.get_running_loop()
        if self._loop is not loop:
            self._abandon_all()
            self._loop = loop
        while True:
            if self._idle:
                return self._idle.pop()
            if len(self._open) + self._opening < self.max_connections:
                return await self._connect(loop)
            waiter: asyncio.Future[Any] = loop.create_future()
            self._waiters.append(waiter)
            try:
                conn = await waiter
            except BaseException:
                if waiter.done() and not waiter.cancelled():
                    handed = waiter.result()
                    if handed is not None:  # handed over just as this task was cancelled
                        self._release(handed)
                else:
                    try:
                        self._waiters.remove(waiter)
                    except ValueError:
                        pass
                raise
            if conn is not None:
                return conn
            if self._loop is not loop:  # the layer moved to another loop meanwhile
                raise RuntimeError(
                    "The database was used from another event loop while this operation "
                    "waited for a connection; use one PostgreSQL-backed service per loop at "
                    "a time."
                )

    async def _connect(self, loop: asyncio.AbstractEventLoop) -> Any:
        import asyncpg

        driver: Any = asyncpg  # untyped: what is used of it is typed here
        self._opening += 1
        try:
            conn: Any = await driver.connect(self._dsn, **self._connect_kwargs)
        finally:
            self._opening -= 1
        if self._loop is not loop:  # moved to another loop meanwhile
            _terminate(conn)
            raise RuntimeError("The database moved to another event loop while connecting.")
        self._open[conn] = self._generation
        return conn

    def _release(self, conn: Any) -> None:
        """An operation is done with ``conn``: hand it to the first waiter, or keep it idle;
        close it if it is stale (opened before a connection was found dead) or closed."""
        generation = self._open.get(conn)
        if generation is None:
            return  # dropped meanwhile (another loop, close)
        if generation != self._generation or conn.is_closed():
            self._lost(conn, everyone=False)
            return
        while self._waiters:
            waiter = self._waiters.popleft()
            if not waiter.done():
                waiter.set_result(conn)
                return
        self._idle.append(conn)

    def _lost(self, conn: Any, *, everyone: bool = True) -> None:
        """Drop ``conn``; when ``everyone``, it was found dead, so every connection opened
        so far is stale: the idle ones are closed now, the busy ones when handed back."""
        self._open.pop(conn, None)
        _terminate(conn)
        if everyone:
            self._generation += 1
            idle, self._idle = self._idle, []
            for other in idle:
                self._open.pop(other, None)
                _terminate(other)
        # Fewer are open now: waiting operations may open new ones.
        waiters, self._waiters = self._waiters, collections.deque()
        for waiter in waiters:
            if not waiter.done():
                waiter.set_result(None)

    def _abandon_all(self) -> None:
        """Drop every connection (they belong to another event loop)."""
        connections = list(self._open)
        self._open.clear()
        self._idle.clear()
        for conn in connections:
            _terminate(conn)
        waiters, self._waiters = self._waiters, collections.deque()
        for waiter in waiters:
            if not waiter.done():
                waiter.set_result(None)

    def _backend_error(self, exc: BaseException) -> BackendError:
        return BackendError(
            f"PostgreSQL at {self.where} failed: {type(exc).__name__}: {exc}. Nothing of this "
            "operation was committed, or (for an append whose answer was lost) it was "
            "committed whole; appending the same event again is safe. The next operation "
            "reconnects once the database is reachable."
        )

    async def close(self) -> None:
        """Close every connection (politely on their own loop, else terminated)."""
        if self._loop is None:
            return
        if not self._loop_is_current():
            self._abandon_all()
            self._loop = None
            return
        connections = list(self._open)
        self._open.clear()
        self._idle.clear()
        self._loop = None
        for conn in connections:
            try:
                await conn.close(timeout=5)
            except Exception:
                _terminate(conn)  # a dead server: nothing to say goodbye to


def _terminate(conn: Any) -> None:
    """Close ``conn`` at once, on any loop, leaking no socket."""
    try:
        conn.terminate()
    except RuntimeError:
        pass  # "Event loop is closed": terminate() has still marked it closed
    # With its loop gone, the transport never gets to close its socket; do it here.
    transport = getattr(conn, "_transport", None)
    sock = getattr(transport, "_sock", None)
    if sock is not None and transport is not None:
        sock.close()
        transport._sock = None


def _driver_errors() -> tuple[type[BaseException], ...]:
    import asyncpg

    return (
        OSError,
        asyncpg.PostgresError,
        asyncpg.InterfaceError,
        asyncpg.exceptions.InternalClientError,
    )


def _is_disconnect(exc: BaseException) -> bool:
    """The connection died under the operation (server restart, terminated backend), or
    none could be opened."""
    import asyncpg

    if isinstance(exc, asyncpg.InterfaceError):
        return "connection is closed" in str(exc) or "connection was closed" in str(exc)
    if isinstance(exc, asyncpg.exceptions.InternalClientError):
        # The server ended the session (e.g. pg_terminate_backend) while the connection sat
        # idle; asyncpg notices only when the next statement is sent.
        return True
    return isinstance(
        exc,
        ConnectionError
        | asyncpg.PostgresConnectionError
        | asyncpg.exceptions.OperatorInterventionError,
    )
