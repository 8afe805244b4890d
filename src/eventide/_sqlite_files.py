"""Which files a SQLite connection uses, and whether they are still the files at its path.

A SQLite database in WAL mode is three files: the database, its ``-wal`` and its ``-shm``
(the WAL index, which also carries the WAL's locks). When any of them, or their folder, is
deleted, moved or replaced while a connection holds it open, the connection goes on reading
and writing files that no other process uses (a WAL or index deleted under it is replaced by
a new one at the path). Eventide's SQLite connection layer (:mod:`eventide._sqlite_database`,
under the session store and the memory service) opens every connection as a
:class:`TrackedConnection`, which records the three files (device and inode each) when it
opens them, and calls :func:`check_files` before each commit and read: a connection whose
files are no longer at the path fails the operation, and the layer closes it.

SQLite gives all the connections of one process to one database file a single WAL index:
the ``-shm`` that the first of them mapped, shared while any of them is open. A connection
opened beside one that still holds a deleted ``-shm`` would read and write the new WAL at
the path through the old index: reads past its end (``SQLITE_IOERR_SHORT_READ``), and
commits that other processes never see. So the process's open tracked connections are
registered per database file, and a new one is refused (:data:`STALE_PEER`) while another
one holds a WAL or index that is no longer at the path. That one's owner is told
(``on_stale``) and lets go of it as soon as it is not in use, so the next attempt opens the
files at the path even when that owner is idle (a memory service beside a session service on
one file, say). And a tracked connection is closed for real, with no statement left open on it:
``sqlite3_close_v2`` keeps a connection with an unfinished statement open, files and shared
index included, until the statement is freed.

Every new connection is set up with :func:`set_up` (by :mod:`eventide._sqlite_database`, the
connection layer of both stores).
"""

from __future__ import annotations

import functools
import os
import sqlite3
import threading
import time
import weakref
from collections.abc import Callable

__all__ = [
    "REPLACED",
    "Files",
    "STALE_PEER",
    "TrackedConnection",
    "check_files",
    "connected",
    "enter_wal",
    "files_at",
    "is_busy",
    "opened",
    "set_up",
]

Identity = tuple[int, int]  # (device, inode) of a file
Files = tuple[Identity | None, Identity | None, Identity | None]  # database, -wal, -shm


# Why a new connection may not be used (see connected() and opened()):
# a file at the path was deleted or replaced while the connection opened it, so which one
# SQLite opened is not known (the open may start again);
REPLACED = "replaced while opening"
# another connection of the process to that database holds files no longer at the path.
STALE_PEER = "another connection holds gone files"


class TrackedConnection(sqlite3.Connection):
    """A connection that knows its path and the files it uses there (once :func:`opened`
    has recorded them)."""

    # The database's path, made absolute (checks follow a symlink there, as opening did), and
    # its -wal and -shm, which SQLite keeps beside the file a symlinked path leads to.
    path = ""
    wal_path = ""
    shm_path = ""
    identity: Identity = (0, 0)
    wal_identity: Identity | None = None
    shm_identity: Identity | None = None
    # A cursor its owner reuses for many statements, closed with the connection.
    reused_cursor: sqlite3.Cursor | None = None
    # Called (from any thread) when a new connection was refused because this one holds
    # files no longer at the path: the owner closes it once it is not in use.
    on_stale: Callable[[], None] | None = None

    def close(self) -> None:
        # The cursor first: a statement it still holds (a BEGIN that met another process's
        # lock, say) would keep the connection open inside SQLite after close().
        cursor, self.reused_cursor = self.reused_cursor, None
        if cursor is not None:
            cursor.close()
        with _lock:
            peers = _open.get(self.identity)
            if peers is not None:
                peers.pop(id(self), None)
                if not peers:
                    del _open[self.identity]
        super().close()


# This process's open tracked connections to each database file (by identity), as weak
# references keyed by id(): they share one WAL index.
_open: dict[Identity, dict[int, weakref.ref[TrackedConnection]]] = {}
_lock = threading.Lock()


def identity_at(path: str) -> Identity | None:
    """(device, inode) of the file at ``path``, or None when there is none."""
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return None
    return (st.st_dev, st.st_ino)


def files_at(path: str) -> Files:
    """The database, WAL and WAL index at ``path`` now: taken just before the connect."""
    real = os.path.realpath(path)
    return identity_at(path), identity_at(f"{real}-wal"), identity_at(f"{real}-shm")


def connected(conn: TrackedConnection, path: str, before: Files) -> str | None:
    """Right after ``sqlite3.connect`` (which opens the database file and reads nothing):
    record the database file. Give why the connection may not be used, or None: REPLACED,
    or STALE_PEER when another connection of the process to that file holds a WAL or index
    other than the ones at the path (this one would share that index; its owner is told)."""
    identity = identity_at(path)
    if identity is None or (before[0] is not None and identity != before[0]):
        return REPLACED
    real = os.path.realpath(path)
    conn.path = os.path.abspath(path)
    conn.wal_path, conn.shm_path = f"{real}-wal", f"{real}-shm"
    conn.identity = identity
    with _lock:
        peers = [ref() for ref in _open.get(identity, {}).values()]
    stale = [p for p in peers if p is not None and (p.wal_identity, p.shm_identity) != before[1:]]
    for peer in stale:
        if peer.on_stale is not None:
            peer.on_stale()
    return STALE_PEER if stale else None


def opened(conn: TrackedConnection, before: Files) -> str | None:
    """Once the connection is in WAL mode: read once (which opens the WAL and maps its
    index), record both, and register the connection among the process's connections to
    its database. Give REPLACED when a file at the path changed in between, else None."""
    conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
    # Looked at and registered in one hold of the lock that connected() checks peers under:
    # files deleted after this look are then seen by any connection checked from now on as
    # held here, and files deleted before it fail this open. (Looked at, then registered,
    # a connection checked in between would not see this one, and would share the index
    # this one holds while the files at the path are new.)
    with _lock:
        wal = identity_at(conn.wal_path)
        shm = identity_at(conn.shm_path)
        if _replaced(before[1], wal) or _replaced(before[2], shm):
            return REPLACED
        conn.wal_identity, conn.shm_identity = wal, shm
        peers = _open.setdefault(conn.identity, {})
        for key in [k for k, ref in peers.items() if ref() is None]:
            del peers[key]  # garbage-collected without close()
        peers[id(conn)] = weakref.ref(conn)
    return None


def _replaced(before: Identity | None, after: Identity | None) -> bool:
    """Whether the file at a path, looked at before and after SQLite opened it, is not known
    to be the one it opened (deleted, or replaced, in between)."""
    return after is None or (before is not None and after != before)


def check_files(conn: TrackedConnection) -> os.stat_result | None:
    """The WAL's status when the connection's database, WAL and WAL index are still the
    files at its path; None when any of them is not."""
    try:
        st = os.stat(conn.path)
        wal = os.stat(conn.wal_path)
        shm = os.stat(conn.shm_path)
    except FileNotFoundError:
        return None
    if (
        (st.st_dev, st.st_ino) != conn.identity
        or (wal.st_dev, wal.st_ino) != conn.wal_identity
        or (shm.st_dev, shm.st_ino) != conn.shm_identity
    ):
        return None
    return wal


def set_up(
    conn: TrackedConnection,
    path: str,
    before: Files | None,
    *,
    timeout: float,
    synchronous: str,
    on_stale: Callable[[TrackedConnection], None],
) -> str | None:
    """Make a new connection ready: its owner's ``on_stale`` set, then (a file database,
    ``before`` taken by :func:`files_at` just before the connect) checked against its peers,
    switched to WAL with ``synchronous``, and its files recorded and registered. Give why it
    may not be used (REPLACED, STALE_PEER), or None. ``before`` None: an in-memory database,
    which has no files to track."""
    conn.on_stale = functools.partial(on_stale, conn)
    if before is not None:
        problem = connected(conn, path, before)
        if problem is not None:
            return problem  # before any read: it would map another connection's index
    enter_wal(conn, timeout)
    conn.execute(f"PRAGMA synchronous={synchronous}")
    return None if before is None else opened(conn, before)


def enter_wal(conn: sqlite3.Connection, timeout: float) -> None:
    """``PRAGMA journal_mode=WAL``, tried again for up to ``timeout`` seconds while the file
    is busy.

    A new database starts in rollback-journal mode, and switching it to WAL takes its
    exclusive lock. When another connection holds the write lock meanwhile (several
    processes opening one new file at once: one of them is already creating the tables),
    SQLite reports the clash at once instead of calling its busy handler, so the wait is
    done here. Between tries this connection holds no lock.
    """
    deadline = time.monotonic() + timeout
    pause = 0.001
    while True:
        try:
            conn.execute("PRAGMA journal_mode=WAL")
            return
        except sqlite3.OperationalError as exc:
            if not is_busy(exc) or time.monotonic() + pause > deadline:
                raise
        time.sleep(pause)
        pause = min(pause * 2, 0.05)


def is_busy(exc: sqlite3.OperationalError) -> bool:
    """SQLITE_BUSY or SQLITE_LOCKED (any extended code): the lock is held elsewhere."""
    code = getattr(exc, "sqlite_errorcode", None)
    if code is None:
        return "locked" in str(exc) or "busy" in str(exc)
    return code & 0xFF in (sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED)
