"""Kill tests: a real process running a tool-calling multi-agent invocation on a SQLite file
is SIGKILLed at each point, and a new process resumes it."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from eventide.sessions import SqlSessionService
from eventide.sessions.session import Session
from tests.durable import sibling_app
from tests.durable.durable_app import KILL_POINTS, normalized

ROOT = Path(__file__).resolve().parents[2]
# Points inside a model call (that call is made again) and inside a tool (that tool runs
# again, with the same call id).
IN_MODEL_CALL = {"after_response_committed"}
IN_TOOL = {"tool_running", "parallel_branch", "loop_round_2"}

pytestmark = pytest.mark.slow


def _worker(
    mode: str, db: Path, ledger: Path, kill_at: str | None = None, app: str = "durable_app"
) -> subprocess.Popen[str]:
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), str(ROOT)]),
        "DURABLE_LEDGER": str(ledger),
        "DURABLE_KILL_AT": kill_at or "",
        "DURABLE_SIGNAL": str(db.with_suffix(".signal")),
        "DURABLE_APP": app,
    }
    return subprocess.Popen(
        [sys.executable, "-m", "tests.durable.worker", mode, str(db), "s1"],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _finish(process: subprocess.Popen[str]) -> None:
    out, err = process.communicate(timeout=60)
    assert process.returncode == 0, f"worker failed:\n{out}\n{err}"


async def _stored(db: Path, app: str = "durable_app") -> Session:
    service = SqlSessionService(f"sqlite:///{db}")
    try:
        session: Session | None = await service.get_session(
            app_name=app, user_id="u", session_id="s1"
        )
    finally:
        await service.close()
    assert session is not None
    return session


def _ledger(path: Path) -> list[str]:
    return path.read_text().splitlines() if path.exists() else []


def _tool_starts(lines: list[str]) -> Counter[str]:
    return Counter(line.split()[2] for line in lines if line.startswith("start "))


def _model_calls(lines: list[str]) -> int:
    return sum(1 for line in lines if line.startswith("model "))


async def _kill_at(point: str, db: Path, ledger: Path, app: str = "durable_app") -> None:
    """Start a worker running the invocation and SIGKILL it once it reaches ``point``."""
    signal_file = db.with_suffix(".signal")
    process = _worker("run", db, ledger, kill_at=point, app=app)
    deadline = time.monotonic() + 60
    while not signal_file.exists():
        if process.poll() is not None:
            out, err = process.communicate()
            pytest.fail(f"the worker ended before reaching {point}:\n{out}\n{err}")
        assert time.monotonic() < deadline, f"the worker never reached {point}"
        await asyncio.sleep(0.01)
    assert signal_file.read_text().split()[0] == point
    process.send_signal(signal.SIGKILL)
    process.communicate(timeout=30)
    assert process.returncode == -signal.SIGKILL


@pytest.fixture(scope="module")
def uninterrupted(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """An uninterrupted run in a worker process: its database and ledger."""
    base = tmp_path_factory.mktemp("uninterrupted")
    db, ledger = base / "sessions.db", base / "ledger"
    _finish(_worker("run", db, ledger))
    return db, ledger


@pytest.mark.parametrize("point", KILL_POINTS)
async def test_sigkill_at_each_point_then_resume_in_a_new_process(
    tmp_path: Path, point: str, uninterrupted: tuple[Path, Path]
) -> None:
    """Issue 17 (kill tests): SIGKILL the process at the point, resume in a new process:
    the final events and state equal an uninterrupted run's, no committed model response
    is requested again, and each tool ran once per call id except the one interrupted while
    running (run again with the same id)."""
    db, ledger = tmp_path / "sessions.db", tmp_path / "ledger"
    await _kill_at(point, db, ledger)

    crashed = await _stored(db)
    answered = {r.id for e in crashed.events for r in e.get_function_responses()}
    unanswered = {c.id for e in crashed.events for c in e.get_function_calls()} - answered
    interrupted = unanswered & set(_tool_starts(_ledger(ledger)))

    _finish(_worker("resume", db, ledger))

    expected = await _stored(uninterrupted[0])
    final = await _stored(db)
    assert normalized(final.events) == normalized(expected.events)
    assert final.state == expected.state
    assert len({e.invocation_id for e in final.events}) == 1

    lines, baseline = _ledger(ledger), _ledger(uninterrupted[1])
    extra = 1 if point in IN_MODEL_CALL else 0
    assert _model_calls(lines) == _model_calls(baseline) + extra
    starts = _tool_starts(lines)
    calls: set[Any] = {
        c.id for e in final.events for c in e.get_function_calls() if c.name != "exit_loop"
    }
    assert set(starts) == calls
    assert {call_id for call_id, n in starts.items() if n > 1} == interrupted
    assert len(interrupted) == (1 if point in IN_TOOL else 0)


@pytest.fixture(scope="module")
def uninterrupted_siblings(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """An uninterrupted run of the sibling-calls app in a worker process."""
    base = tmp_path_factory.mktemp("uninterrupted_siblings")
    db, ledger = base / "sessions.db", base / "ledger"
    _finish(_worker("run", db, ledger, app=sibling_app.APP_NAME))
    return db, ledger


@pytest.mark.parametrize("point", sibling_app.KILL_POINTS)
async def test_sigkill_while_sibling_calls_run_then_resume(
    tmp_path: Path, point: str, uninterrupted_siblings: tuple[Path, Path]
) -> None:
    """Issue 17 (several tool calls from one model response): each call that finished was
    committed at once while its siblings still ran, so after a SIGKILL (inside the last
    call, or after all three were recorded but before their response event) a new process
    runs only the interrupted call again (same call id); the final events and state equal an
    uninterrupted run's and no model call is repeated."""
    app = sibling_app.APP_NAME
    db, ledger = tmp_path / "sessions.db", tmp_path / "ledger"
    await _kill_at(point, db, ledger, app=app)
    crashed = await _stored(db, app)
    expected_records = ["fetch", "fetch"] + ([] if point in sibling_app.IN_TOOL else ["slow"])
    assert sibling_app.recorded_calls(crashed.events) == expected_records
    assert not any(e.get_function_responses() for e in crashed.events)

    _finish(_worker("resume", db, ledger, app=app))

    expected = await _stored(uninterrupted_siblings[0], app)
    final = await _stored(db, app)
    assert normalized(final.events) == normalized(expected.events)
    assert final.state == expected.state == {"got_a": True, "got_b": True, "slow_done": True}
    assert len({e.invocation_id for e in final.events}) == 1
    lines, baseline = _ledger(ledger), _ledger(uninterrupted_siblings[1])
    assert _model_calls(lines) == _model_calls(baseline) == 3
    starts = _tool_starts(lines)
    calls = {c.id: c.name for e in final.events for c in e.get_function_calls()}
    assert set(starts) == set(calls)
    again = [calls[call_id] for call_id, n in starts.items() if n > 1]
    assert again == (["slow"] if point in sibling_app.IN_TOOL else [])
