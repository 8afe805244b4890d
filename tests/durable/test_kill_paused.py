"""Kill tests for paused invocations: a real process runs the paused app's turn on a SQLite
file and is SIGKILLed at each point, idle while paused or inside a model call or tool after
an answer; new processes resume it and send the remaining answers."""

from __future__ import annotations

import asyncio
import os
import re
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest

from eventide.sessions import SqlSessionService
from eventide.sessions.session import Session
from tests.durable.durable_app import normalized
from tests.durable.paused_app import IDLE, IN_MODEL_CALL, IN_TOOL, KILL_POINTS, STEPS

ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.slow


def _worker(step: str, db: Path, ledger: Path, kill_at: str | None = None) -> subprocess.Popen[str]:
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), str(ROOT)]),
        "DURABLE_LEDGER": str(ledger),
        "DURABLE_KILL_AT": kill_at or "",
        "DURABLE_SIGNAL": str(db.with_suffix(".signal")),
    }
    return subprocess.Popen(
        [sys.executable, "-m", "tests.durable.paused_worker", step, str(db), "s1"],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _finish(process: subprocess.Popen[str]) -> None:
    out, err = process.communicate(timeout=60)
    assert process.returncode == 0, f"worker failed:\n{out}\n{err}"


async def _stored(db: Path) -> Session:
    service = SqlSessionService(f"sqlite:///{db}")
    try:
        session = await service.get_session(app_name="paused_app", user_id="u", session_id="s1")
    finally:
        await service.close()
    assert session is not None
    return session


def _ledger(path: Path) -> list[str]:
    return path.read_text().splitlines() if path.exists() else []


def _shape(session: Session) -> str:
    return re.sub(r"call-[0-9a-f]+-[0-9a-z]+", "call-*", repr(normalized(session.events)))


@pytest.fixture(scope="module")
def uninterrupted(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """The turn's three messages, each in its own worker process, none killed."""
    base = tmp_path_factory.mktemp("uninterrupted")
    db, ledger = base / "sessions.db", base / "ledger"
    for step in STEPS:
        _finish(_worker(step, db, ledger))
    return db, ledger


@pytest.mark.parametrize("point", KILL_POINTS)
async def test_sigkill_around_a_pause_then_resume_or_answer_in_new_processes(
    tmp_path: Path, point: str, uninterrupted: tuple[Path, Path]
) -> None:
    """Issue 17 (paused invocations, kill tests): SIGKILL the process at the point (idle
    while the invocation waits for the user, or inside a model call or tool after an
    answer); a new process resumes it when it was mid-way, and new processes send the
    remaining answers. The final events and state equal an uninterrupted turn's, all in one
    invocation, no committed model response is requested again, and each tool ran once per
    call id except the one interrupted while running (the long-running tool, which returned
    nothing, included)."""
    db, ledger = tmp_path / "sessions.db", tmp_path / "ledger"
    signal_file = db.with_suffix(".signal")
    killed = False
    for step in STEPS:
        process = _worker(step, db, ledger, kill_at=None if killed else point)
        deadline = time.monotonic() + 60
        while not killed and not signal_file.exists():
            if process.poll() is not None:
                break  # this step does not reach the point
            assert time.monotonic() < deadline, f"the worker never reached {point}"
            await asyncio.sleep(0.01)
        if not killed and signal_file.exists():
            assert signal_file.read_text().split()[0] == point
            process.send_signal(signal.SIGKILL)
            process.communicate(timeout=30)
            assert process.returncode == -signal.SIGKILL
            killed = True
            if point not in IDLE:
                _finish(_worker("resume", db, ledger))
        else:
            _finish(process)
    assert killed

    expected = await _stored(uninterrupted[0])
    final = await _stored(db)
    assert _shape(final) == _shape(expected)
    assert final.state == expected.state
    assert len({e.invocation_id for e in final.events}) == 1

    lines, baseline = _ledger(ledger), _ledger(uninterrupted[1])
    models = [line for line in lines if line.startswith("model")]
    assert len(models) == len([b for b in baseline if b.startswith("model")]) + (
        1 if point in IN_MODEL_CALL else 0
    )
    starts = Counter(line.split()[2] for line in lines if line.startswith("start "))
    assert len(starts) == 3
    assert sorted(starts.values()) == ([1, 1, 2] if point in IN_TOOL else [1, 1, 1])
