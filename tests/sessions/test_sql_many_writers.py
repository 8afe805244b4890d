"""Many OS processes append to one session at once; a writer killed with SIGKILL leaves a
consistent database. Run on a SQLite file and on PostgreSQL."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import uuid
from pathlib import Path
from typing import Any

import pytest

from eventide.sessions.sql_session_service import SqlSessionService
from tests.sessions.append_worker import delta_for

ROOT = Path(__file__).resolve().parents[2]
WRITERS = 4
EVENTS_EACH = 40


def _spawn(
    url: str, app: str, sid: str, worker: str, count: int, go: str = ""
) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [
            sys.executable,
            "-m",
            "tests.sessions.append_worker",
            url,
            app,
            "u",
            sid,
            worker,
            str(count),
            go,
        ],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        text=True,
    )


def _fold(events: list[Any]) -> dict[str, Any]:
    state: dict[str, Any] = {}
    for event in events:
        state.update(event.actions.state_delta)
    return state


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def db_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'shared.db'}"
    return str(request.getfixturevalue("postgres_sessions_url"))


@pytest.mark.slow
async def test_many_processes_append_to_one_session(db_url: str, tmp_path: Path) -> None:
    """Contract (many writers): N processes appending M events each to the SAME session lose
    no event and apply none twice; each writer's events keep its order; the state equals the
    fold of the stored deltas in log (commit) order; each writer's own copy, kept current by
    folding, is a prefix of the stored log."""
    app = f"app_{uuid.uuid4().hex[:8]}"
    service = SqlSessionService(db_url)
    session = await service.create_session(app_name=app, user_id="u", session_id="shared")
    go = tmp_path / "go"
    workers = [f"w{k}" for k in range(WRITERS)]
    procs = [_spawn(db_url, app, session.id, w, EVENTS_EACH, str(go)) for w in workers]
    try:
        for proc in procs:
            assert proc.stdout is not None
            assert proc.stdout.readline().strip() == "ready"
        go.touch()
        outputs = [proc.communicate(timeout=120)[0] for proc in procs]
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    assert [proc.returncode for proc in procs] == [0] * WRITERS

    stored = await service.get_session(app_name=app, user_id="u", session_id="shared")
    assert stored is not None
    ids = [e.id for e in stored.events]
    assert sorted(ids) == sorted(f"{w}-{i}" for w in workers for i in range(EVENTS_EACH))
    for w in workers:
        assert [i for i in ids if i.startswith(f"{w}-")] == [f"{w}-{i}" for i in range(EVENTS_EACH)]
    assert stored.state == _fold(stored.events)
    for w in workers:
        assert stored.state[w] == EVENTS_EACH - 1
        assert stored.state[f"user:{w}"] == EVENTS_EACH - 1
    for output in outputs:
        seen = json.loads(output.strip().splitlines()[-1])["seen"]
        assert seen == ids[: len(seen)]
    await service.close()


@pytest.mark.slow
async def test_sigkill_mid_append_leaves_a_consistent_database(db_url: str) -> None:
    """Crash safety: a writer killed with SIGKILL while appending in a loop leaves a database
    where every stored event is complete, every append that returned is stored, and the state
    equals the fold of the stored events' deltas."""
    app = f"app_{uuid.uuid4().hex[:8]}"
    service = SqlSessionService(db_url)
    await service.create_session(app_name=app, user_id="u", session_id="crash")
    proc = _spawn(db_url, app, "crash", "killed", 0)
    committed = -1
    try:
        assert proc.stdout is not None
        assert proc.stdout.readline().strip() == "ready"
        while committed < 60:
            line = proc.stdout.readline()
            assert line.startswith("committed "), line
            committed = int(line.split()[1])
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        if proc.stdout is not None:
            proc.stdout.close()
    assert proc.returncode == -signal.SIGKILL
    await service.close()

    reopened = SqlSessionService(db_url)
    stored = await reopened.get_session(app_name=app, user_id="u", session_id="crash")
    assert stored is not None
    ids = [e.id for e in stored.events]
    assert ids == [f"killed-{i}" for i in range(len(ids))]
    assert len(ids) >= committed + 1
    assert stored.state == _fold(stored.events)
    assert stored.state["killed"] == len(ids) - 1
    assert all(e.actions.state_delta == delta_for("killed", n) for n, e in enumerate(stored.events))
    await reopened.close()
