"""A SQLite store never acknowledges a write to a file that is no longer at its path."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from eventide.errors import BackendError
from eventide.events import Event, EventActions
from eventide.sessions.sql_session_service import SqlSessionService


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
