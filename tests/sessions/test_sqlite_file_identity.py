"""A SQLite store never acknowledges a write to a file that is no longer at its path."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import sqlite3
import subprocess
import sys
import threading
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

from eventide.errors import BackendError
from eventide.events import Event, EventActions
from eventide.memory.sql_memory_service import SqlMemoryService
from eventide.sessions.sql_session_service import SqlSessionService
from tests.sessions.conftest import IN_CI


def _event(n: int) -> Event:
    return Event(author="agent", invocation_id="i", actions=EventActions(state_delta={"n": n}))


def _remove(path: str) -> None:
    if os.path.exists(path):
        os.remove(path)


@pytest.mark.parametrize("how", ["folder deleted", "file deleted", "file replaced"])
async def test_append_after_the_database_file_went_away_fails_and_acknowledges_nothing(
    tmp_path: Path, how: str
) -> None:
    """Contract (failures; no acknowledged write is ever lost): when the SQLite file the
    store holds open is no longer the file at its path (the folder or the file deleted, or
    the file replaced: another inode), an append fails with BackendError naming the file,
    instead of committing to an unlinked file that no later process can read. Once a
    database is back at the path, the service works again on its own (regression: 164 turns
    were acknowledged after the folder was deleted)."""
    folder = tmp_path / "data"
    folder.mkdir()
    path = folder / "sessions.db"
    service = SqlSessionService(f"sqlite:///{path}")
    try:
        session = await service.create_session(app_name="app", user_id="u", session_id="s")
        await service.append_event(session, _event(1))
        if how == "folder deleted":
            shutil.rmtree(folder)
        elif how == "file deleted":
            for suffix in ("", "-wal", "-shm"):
                _remove(f"{path}{suffix}")
        else:
            replacement = folder / "other.db"
            other = SqlSessionService(f"sqlite:///{replacement}")
            await other.create_session(app_name="app", user_id="u", session_id="s")
            await other.close()
            for suffix in ("-wal", "-shm"):
                _remove(f"{path}{suffix}")
            os.replace(replacement, path)
        with pytest.raises(BackendError, match=r"sessions\.db.*no longer the file"):
            await service.append_event(session, _event(2))
        assert [e.actions.state_delta for e in session.events] == [{"n": 1}]

        folder.mkdir(exist_ok=True)
        if how == "file replaced":
            # The replacement holds its own session "s": the service now serves that file.
            fresh = await service.get_session(app_name="app", user_id="u", session_id="s")
            assert fresh is not None and fresh.events == []
        else:
            assert await service.get_session(app_name="app", user_id="u", session_id="s") is None
            fresh = await service.create_session(app_name="app", user_id="u", session_id="s")
        await service.append_event(fresh, _event(4))
        reread = await service.get_session(app_name="app", user_id="u", session_id="s")
        assert reread is not None and reread.state == {"n": 4}
    finally:
        await service.close()
    reopened = SqlSessionService(f"sqlite:///{path}")
    try:
        stored = await reopened.get_session(app_name="app", user_id="u", session_id="s")
        assert stored is not None
        assert [e.actions.state_delta for e in stored.events] == [{"n": 4}]
    finally:
        await reopened.close()


def _stored_ids_seen_by_another_process(path: Path) -> list[str] | None:
    """The event ids of session "s" as a separate process reads them (None: no session)."""
    code = (
        "import asyncio, json, sys\n"
        "from eventide.sessions.sql_session_service import SqlSessionService\n"
        "async def main():\n"
        "    svc = SqlSessionService(sys.argv[1])\n"
        "    s = await svc.get_session(app_name='app', user_id='u', session_id='s')\n"
        "    await svc.close()\n"
        "    print(json.dumps(None if s is None else [e.id for e in s.events]))\n"
        "asyncio.run(main())\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code, f"sqlite:///{path}"],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
    )
    found: list[str] | None = json.loads(done.stdout)
    return found


@pytest.mark.parametrize("synchronous", ["NORMAL", "FULL"])
async def test_append_after_the_wal_file_was_deleted_fails_and_acknowledges_nothing(
    tmp_path: Path, synchronous: str
) -> None:
    """Contract (failures; no acknowledged write is ever lost): the database file is still
    at its path but its ``-wal`` (and ``-shm``) were deleted. The store's connection would
    go on committing into the unlinked WAL, where no other process reads (another process
    starts a new WAL of its own at the path). So an append fails with BackendError and
    acknowledges nothing, and the service then works on the file at the path again
    (regression: such commits were acknowledged; NORMAL commits run inline, FULL ones on the
    store's thread)."""
    path = tmp_path / "sessions.db"
    service = SqlSessionService(f"sqlite:///{path}", synchronous=synchronous)
    try:
        session = await service.create_session(app_name="app", user_id="u", session_id="s")
        await service.append_event(session, _event(1))
        for suffix in ("-wal", "-shm"):
            os.remove(f"{path}{suffix}")
        with pytest.raises(BackendError, match=r"sessions\.db.*no longer the file"):
            await service.append_event(session, _event(2))
        assert [e.actions.state_delta for e in session.events] == [{"n": 1}]

        fresh = await service.get_session(app_name="app", user_id="u", session_id="s")
        if fresh is None:  # the session lived only in the deleted WAL
            fresh = await service.create_session(app_name="app", user_id="u", session_id="s")
        await service.append_event(fresh, Event(id="after", author="agent", invocation_id="i"))
        seen = _stored_ids_seen_by_another_process(path)
        assert seen is not None and seen[-1] == "after"
        assert len(seen) == len(fresh.events)
    finally:
        await service.close()


def _take_inode(folder: Path, inode: int) -> Path | None:
    """Create files in ``folder`` until one gets inode number ``inode`` (ext4 hands a freed
    inode out again at once); the others are removed. None if none did."""
    others: list[Path] = []
    try:
        for n in range(64):
            candidate = folder / f"candidate-{n}"
            candidate.touch()
            if candidate.stat().st_ino == inode:
                return candidate
            others.append(candidate)
    finally:
        for other in others:
            other.unlink()
    return None


async def test_a_new_database_file_that_reuses_the_old_inode_number_is_migrated(
    tmp_path: Path,
) -> None:
    """The database file was deleted and a new, empty one appeared at the path with the
    same inode number (file systems reuse a freed number at once). The store decides
    whether a file needs its tables by the schema version stored in it, not by its inode, so
    it migrates the new file and goes on working (regression: the reused number made it
    take the empty file for the one it had migrated, and every call failed with "no such
    table")."""
    folder = tmp_path / "data"
    folder.mkdir()
    path = folder / "sessions.db"
    # FULL: writes run on the store's thread (reads inline): the one connection, which met
    # the deleted file, is closed, and the old inode is freed.
    service = SqlSessionService(f"sqlite:///{path}", synchronous="FULL")
    try:
        session = await service.create_session(app_name="app", user_id="u", session_id="s")
        await service.append_event(session, _event(1))
        old_inode = path.stat().st_ino
        for suffix in ("", "-wal", "-shm"):
            _remove(f"{path}{suffix}")
        with pytest.raises(BackendError, match="no longer the file"):
            await service.append_event(session, _event(2))
        reused = _take_inode(folder, old_inode)
        if reused is None:
            message = "this file system did not hand the freed inode number out again"
            if IN_CI:
                pytest.fail(message + " (CI=true: the regression must be exercised)")
            pytest.skip(message)
        reused.rename(path)  # an empty file: an empty SQLite database
        assert path.stat().st_ino == old_inode

        assert await service.get_session(app_name="app", user_id="u", session_id="s") is None
        fresh = await service.create_session(app_name="app", user_id="u", session_id="s")
        await service.append_event(fresh, _event(3))
        reread = await service.get_session(app_name="app", user_id="u", session_id="s")
        assert reread is not None and reread.state == {"n": 3}
    finally:
        await service.close()


# A process that holds the database's write lock and, when told, deletes some of its files.
_LOCK_HOLDER = """
import os, sqlite3, sys
path = sys.argv[1]
conn = sqlite3.connect(path, isolation_level=None)
conn.execute("BEGIN IMMEDIATE")
print("locked", flush=True)
for line in sys.stdin:
    command, *suffixes = line.split()
    if command == "remove":
        for suffix in suffixes:
            os.remove(path + suffix)
        print("removed", flush=True)
    else:
        conn.execute("ROLLBACK")
        conn.close()
        print("released", flush=True)
        break
"""


class _LockHolder:
    """Another process holding the database's write lock (SQLite's locks of one process
    do not exclude each other's connections the way another process's do)."""

    def __init__(self, path: Path) -> None:
        self._proc = subprocess.Popen(
            [sys.executable, "-c", _LOCK_HOLDER, str(path)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        self._say("", "locked")

    def _say(self, line: str, answer: str) -> None:
        assert self._proc.stdin is not None and self._proc.stdout is not None
        if line:
            self._proc.stdin.write(line + "\n")
            self._proc.stdin.flush()
        assert self._proc.stdout.readline().strip() == answer

    def remove(self, *suffixes: str) -> None:
        self._say("remove " + " ".join(suffixes), "removed")

    def release(self) -> None:
        if self._proc.returncode is not None:
            return
        try:
            if self._proc.poll() is None:
                self._say("release", "released")
        finally:
            assert self._proc.stdin is not None and self._proc.stdout is not None
            self._proc.stdin.close()
            self._proc.stdout.close()
            self._proc.wait(timeout=10)


def _delete_under_lock(path: Path, *suffixes: str) -> None:
    """Delete the database's files with these suffixes while another process holds its
    write lock (so no writer is between its file check and its commit meanwhile)."""
    holder = _LockHolder(path)
    try:
        holder.remove(*suffixes)
    finally:
        holder.release()


def _deleted_files_open(path: Path) -> list[str]:
    """Files of the database at ``path`` that this process holds open although they were
    deleted (Linux: /proc/self/fd)."""
    found = []
    for fd in os.listdir("/proc/self/fd"):
        try:
            target = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:
            continue
        if target.startswith(str(path)) and target.endswith("(deleted)"):
            found.append(target)
    return found


async def _append_after_and_check(
    service: SqlSessionService, path: Path, event_id: str = "after"
) -> None:
    """Append an event with id ``event_id`` to session "s" (created again if it lived only
    in deleted files); another process must read it, last, from the files at the path."""
    fresh = await service.get_session(app_name="app", user_id="u", session_id="s")
    if fresh is None:
        fresh = await service.create_session(app_name="app", user_id="u", session_id="s")
    await service.append_event(fresh, Event(id=event_id, author="agent", invocation_id="i"))
    seen = _stored_ids_seen_by_another_process(path)
    assert seen is not None and seen[-1] == event_id
    assert len(seen) == len(fresh.events)


async def test_an_append_that_waited_for_another_writer_lets_go_of_deleted_files(
    tmp_path: Path,
) -> None:
    """Contract (failures; no acknowledged write is ever lost): an append waits for another
    process's write lock, and that process deletes the ``-wal`` and ``-shm`` meanwhile. The
    append fails and acknowledges nothing; the store lets go of the deleted files for real,
    so its next append reaches the files at the path, where another process reads it
    (regression: the connection whose BEGIN met the lock stayed open inside SQLite after
    close(), kept by the statement on its reused cursor, and the process's next connection
    shared its deleted WAL index: SQLITE_IOERR_SHORT_READ, or commits no other process saw;
    the lost writes of the deleted-files fault test)."""
    path = tmp_path / "sessions.db"
    service = SqlSessionService(f"sqlite:///{path}")
    holder = None
    try:
        session = await service.create_session(app_name="app", user_id="u", session_id="s")
        await service.append_event(session, _event(1))
        holder = _LockHolder(path)
        append = asyncio.ensure_future(service.append_event(session, _event(2)))
        await asyncio.sleep(0.2)  # the append met the lock and waits on the store's thread
        assert not append.done()
        holder.remove("-wal", "-shm")
        holder.release()
        with pytest.raises(BackendError, match=r"sessions\.db.*no longer the file"):
            await append
        assert [e.actions.state_delta for e in session.events] == [{"n": 1}]
        assert _deleted_files_open(path) == []
        await _append_after_and_check(service, path)
    finally:
        if holder is not None:
            holder.release()
        await service.close()


async def test_an_append_after_the_shm_file_alone_was_deleted_fails(tmp_path: Path) -> None:
    """Contract (failures; no acknowledged write is ever lost): only the ``-shm`` (the WAL
    index, which also carries the WAL's locks) was deleted. Another process then starts a
    new index over the same WAL and takes the write lock. The store's connection, still on
    the old index, does not see that lock; rather than commit beside the other writer into
    the one WAL, its append fails and acknowledges nothing. Once the other writer is done,
    the store works on the files at the path again."""
    path = tmp_path / "sessions.db"
    service = SqlSessionService(f"sqlite:///{path}")
    other_writer = None
    try:
        session = await service.create_session(app_name="app", user_id="u", session_id="s")
        await service.append_event(session, _event(1))
        _delete_under_lock(path, "-shm")
        other_writer = _LockHolder(path)  # on a new -shm
        with pytest.raises(BackendError, match=r"sessions\.db.*no longer the file"):
            await service.append_event(session, _event(2))
        other_writer.release()
        await _append_after_and_check(service, path)
        with sqlite3.connect(path) as check:
            assert check.execute("PRAGMA integrity_check").fetchone() == ("ok",)
    finally:
        if other_writer is not None:
            other_writer.release()
        await service.close()


async def _eventually(call: Callable[[], Awaitable[object]], within: float = 2.0) -> None:
    """Call until it stops raising BackendError (for ``within`` seconds at most)."""
    deadline = time.monotonic() + within
    while True:
        try:
            await call()
            return
        except BackendError:
            if time.monotonic() > deadline:
                raise
            await asyncio.sleep(0.01)


async def test_a_second_service_in_the_process_does_not_share_deleted_files(
    tmp_path: Path,
) -> None:
    """Contract (failures; no acknowledged write is ever lost): two services of one process
    use the same database; its ``-wal`` and ``-shm`` are deleted while the first, idle, holds
    them. SQLite gives a process's connections to one file one WAL index, so a connection
    the second service opens now would share the first one's deleted index. Instead its call
    fails as on a deleted file, and the first service is told to let go of those files: the
    second recovers on its own, and the first then works without a failed call of its own."""
    path = tmp_path / "sessions.db"
    first = SqlSessionService(f"sqlite:///{path}")
    second = SqlSessionService(f"sqlite:///{path}")
    try:
        session = await first.create_session(app_name="app", user_id="u", session_id="s")
        await first.append_event(session, _event(1))
        _delete_under_lock(path, "-wal", "-shm")
        with pytest.raises(BackendError, match=r"sessions\.db.*no longer the file"):
            await second.get_session(app_name="app", user_id="u", session_id="s")
        await _eventually(lambda: second.get_session(app_name="app", user_id="u", session_id="s"))
        await _append_after_and_check(second, path, "by second")
        await _append_after_and_check(first, path, "by first")
    finally:
        await first.close()
        await second.close()


async def test_a_memory_service_beside_sessions_lets_go_of_deleted_files(tmp_path: Path) -> None:
    """Contract (failures; no acknowledged write is ever lost): sessions and memory share
    one SQLite file, as the architecture allows; its ``-wal`` and ``-shm`` are deleted while
    the memory service, idle, holds them. The session service fails as on a deleted file
    until the memory service has let go of them, which it does on its own, and then both
    work on the files at the path (regression: the memory service's connection was not
    tracked, so every session call failed with SQLITE_IOERR_SHORT_READ, or read another
    process's WAL frames as the wrong pages, for as long as the memory service stayed
    idle)."""
    path = tmp_path / "app.db"
    sessions = SqlSessionService(f"sqlite:///{path}")
    memory = SqlMemoryService(f"sqlite:///{path}")
    try:
        session = await sessions.create_session(app_name="app", user_id="u", session_id="s")
        await sessions.append_event(session, _event(1))
        await memory.search_memory(app_name="app", user_id="u", query="hello")  # opens it
        _delete_under_lock(path, "-wal", "-shm")
        with pytest.raises(BackendError, match=r"app\.db.*no longer the file"):
            await sessions.append_event(session, _event(2))
        await _eventually(lambda: sessions.get_session(app_name="app", user_id="u", session_id="s"))
        await _append_after_and_check(sessions, path)
        found = await memory.search_memory(app_name="app", user_id="u", query="hello")
        assert found.memories == []
        with sqlite3.connect(path) as check:
            assert check.execute("PRAGMA integrity_check").fetchone() == ("ok",)
    finally:
        await sessions.close()
        await memory.close()


async def test_a_database_path_that_is_a_symlink_works(tmp_path: Path) -> None:
    """A database path that is a symlink to the file works for sessions and memory alike.
    SQLite keeps the ``-wal`` and ``-shm`` beside the file the link leads to, so that is
    where the file checks look (regression: they looked beside the link, found no WAL, and
    every call failed as on a deleted file)."""
    real = tmp_path / "real"
    real.mkdir()
    link = tmp_path / "app.db"
    link.symlink_to(real / "app.db")
    sessions = SqlSessionService(f"sqlite:///{link}")
    memory = SqlMemoryService(f"sqlite:///{link}")
    try:
        session = await sessions.create_session(app_name="app", user_id="u", session_id="s")
        await sessions.append_event(session, _event(1))
        found = await memory.search_memory(app_name="app", user_id="u", query="hello")
        assert found.memories == []
        stored = await sessions.get_session(app_name="app", user_id="u", session_id="s")
        assert stored is not None and stored.state == {"n": 1}
        assert (real / "app.db-wal").exists() and not (tmp_path / "app.db-wal").exists()
    finally:
        await sessions.close()
        await memory.close()


@pytest.mark.parametrize("service_kind", ["sessions", "memory"])
async def test_a_connection_can_be_told_to_let_go_as_soon_as_it_is_registered(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, service_kind: str
) -> None:
    """Contract (failures): a store's new connection is registered among the process's
    connections to its file only once the store can be told to let go of it. Another
    connection that finds it holding gone files from that moment calls ``on_stale``;
    were it still unset, the holder would not be told, and every new connection to the
    file would be refused for as long as the holder stayed idle (regression: the session
    store set it just after registering)."""
    from eventide import _sqlite_files

    registered: list[bool] = []
    real_opened = _sqlite_files.opened

    def checked_opened(conn: _sqlite_files.TrackedConnection, before: _sqlite_files.Files) -> Any:
        registered.append(callable(conn.on_stale))
        return real_opened(conn, before)

    monkeypatch.setattr(_sqlite_files, "opened", checked_opened)
    path = tmp_path / "app.db"
    if service_kind == "sessions":
        sessions = SqlSessionService(f"sqlite:///{path}")
        try:
            session = await sessions.create_session(app_name="app", user_id="u", session_id="s")
            await sessions.append_event(session, _event(1))
        finally:
            await sessions.close()
    else:
        memory = SqlMemoryService(f"sqlite:///{path}")
        try:
            await memory.search_memory(app_name="app", user_id="u", query="hello")
        finally:
            await memory.close()
    assert registered, "no connection was opened"
    assert all(registered), f"on_stale unset at registration: {registered}"


def test_a_connection_checked_while_another_registers_sees_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Contract (failures; no acknowledged write is ever lost): a connection of the process
    opening while another one records its files and registers either sees that one
    registered or fails to open. Here the ``-wal`` and ``-shm`` are deleted just after the
    first connection looked at them, and a second connection is checked at that moment: it
    must be refused (STALE_PEER) and the first one's owner told, since it would share the
    first one's deleted WAL index (regression: the look and the registration were two
    steps, and a check in between passed)."""
    from eventide import _sqlite_files as files

    path = str(tmp_path / "app.db")
    setup = sqlite3.connect(path)
    setup.execute("PRAGMA journal_mode=WAL")
    setup.execute("CREATE TABLE t (x)")
    setup.commit()  # the -wal and -shm stay while this connection is open

    before_first = files.files_at(path)
    first = sqlite3.connect(path, factory=files.TrackedConnection, check_same_thread=False)
    told: list[bool] = []
    first.on_stale = lambda: told.append(True)
    assert files.connected(first, path, before_first) is None

    real_identity_at = files.identity_at
    second_result: list[str | None] = []

    def check_second() -> None:
        before = files.files_at(path)
        second = sqlite3.connect(path, factory=files.TrackedConnection, check_same_thread=False)
        try:
            second_result.append(files.connected(second, path, before))
        finally:
            second.close()

    def look(at: str) -> tuple[int, int] | None:
        seen = real_identity_at(at)
        if at == first.shm_path and not second_result and not checker.is_alive():
            for suffix in ("-wal", "-shm"):
                os.remove(path + suffix)
            checker.start()
            checker.join(timeout=0.5)  # it runs now, unless the registration is locked
        return seen

    checker = threading.Thread(target=check_second)
    monkeypatch.setattr(files, "identity_at", look)
    try:
        assert files.opened(first, before_first) is None
        checker.join(timeout=10)
        assert second_result == [files.STALE_PEER]
        assert told == [True]
    finally:
        first.close()
        setup.close()
