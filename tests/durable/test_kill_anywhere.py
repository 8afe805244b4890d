"""Kill anywhere (issue 31): a SequentialAgent/ParallelAgent pipeline whose tools record their
side effects in a file is SIGKILLed at random moments, again and again, each time resumed by
a new process with ``Runner.resume_async`` (``tests/durable/kill_anywhere_app.py``)."""

from __future__ import annotations

import asyncio
import os
import random
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest

from eventide.runtime.markers import CALL_KEY, FINISHED, invocation_mark
from eventide.sessions import SqlSessionService
from eventide.sessions.session import Session
from tests.durable.durable_app import normalized
from tests.durable.kill_anywhere_app import APP_NAME, SESSION_ID, invocations

ROOT = Path(__file__).resolve().parents[2]
TURNS = 2
KILLS = 16
SEED = 31

pytestmark = pytest.mark.slow


def _start(db: Path, ledger: Path) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), str(ROOT)])}
    process = subprocess.Popen(
        [sys.executable, "-m", "tests.durable.kill_anywhere_app", str(db), str(ledger), str(TURNS)],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert process.stdout is not None and process.stderr is not None
    # Read "ready" a byte at a time from the pipe itself: ``readline`` would buffer what
    # follows it ("done", from a worker with nothing left to do), which ``communicate``
    # (reading the pipe's descriptor) then never sees.
    line = b""
    while not line.endswith(b"\n"):
        byte = os.read(process.stdout.fileno(), 1)
        if not byte:
            break
        line += byte
    assert line.strip() == b"ready", process.stderr.read()
    return process


def _finish(process: subprocess.Popen[str]) -> None:
    out, err = process.communicate(timeout=60)
    assert process.returncode == 0, f"the worker failed:\n{out}\n{err}"
    assert out.strip().endswith("done")


def _stored(db: Path) -> Session:
    session = _maybe_stored(db)
    assert session is not None
    return session


def _maybe_stored(db: Path) -> Session | None:
    """The session, or None when the process died before creating it."""
    if not db.exists():
        return None

    async def read() -> Session | None:
        service = SqlSessionService(f"sqlite:///{db}")
        try:
            return await service.get_session(app_name=APP_NAME, user_id="u", session_id=SESSION_ID)
        finally:
            await service.close()

    return asyncio.run(read())


def _lines(ledger: Path) -> list[str]:
    return ledger.read_text().splitlines() if ledger.exists() else []


def _starts(lines: list[str]) -> Counter[str]:
    return Counter(line.split()[1] for line in lines if line.startswith("start "))


def _in_flight(session: Session) -> tuple[set[str], set[str]]:
    """The committed calls, and those among them with no committed answer (a response, or
    the record of a call that finished while its siblings ran)."""
    calls = {c.id for e in session.events for c in e.get_function_calls() if c.id}
    answered = {r.id for e in session.events for r in e.get_function_responses() if r.id}
    for event in session.events:
        record = (event.custom_metadata or {}).get(CALL_KEY)
        if isinstance(record, dict) and record.get("id"):
            answered.add(str(record["id"]))
    return calls, calls - answered


def test_sigkill_at_random_moments_then_resume_until_done(tmp_path: Path) -> None:
    """Issue 31 (kill anywhere): one session's invocations are SIGKILLed at random moments
    many times, each new process continuing where the last one died (``resume_async`` for
    the unfinished invocation, then the next message). Every invocation finishes exactly
    once, with the events and state of an uninterrupted run; after each kill, a side effect
    runs again only for a call that was in flight (committed, not answered) and with that
    call's id, and a call whose answer was committed never runs again."""
    baseline_db, baseline_ledger = tmp_path / "baseline.db", tmp_path / "baseline.ledger"
    _finish(_start(baseline_db, baseline_ledger))
    expected = _stored(baseline_db)

    db, ledger = tmp_path / "sessions.db", tmp_path / "ledger"
    rng = random.Random(SEED)
    in_flight_ever: set[str] = set()
    interrupted: set[str] = set()  # in flight, and its side effect had started
    kills = killed_in_a_tool = 0
    finished = False
    for round_number in range(KILLS + 1):
        # What the log says before this process starts: the calls committed, and those
        # of them in flight when the last process died.
        before = _lines(ledger)
        crashed = _maybe_stored(db)
        calls, in_flight = _in_flight(crashed) if crashed is not None else (set(), set())
        ended = {line.split()[1] for line in before if line.startswith("end ")}
        in_flight_ever |= in_flight
        interrupted |= in_flight & set(_starts(before))
        killed_in_a_tool += bool(set(_starts(before)) - ended)

        process = _start(db, ledger)
        if round_number < KILLS:
            time.sleep(rng.uniform(0.0, 0.15))
        if round_number < KILLS and process.poll() is None:
            process.send_signal(signal.SIGKILL)
            process.communicate(timeout=30)
            kills += 1
        else:
            _finish(process)  # every turn finished (before the kill, or the last round)
            finished = True
        # This process ran again only calls in flight, never one whose answer was committed.
        rerun = set(_starts(_lines(ledger)[len(before) :]))
        assert rerun & calls <= in_flight, (rerun & calls) - in_flight
        if finished:
            break

    final = _stored(db)
    ids = invocations(final)
    assert len(ids) == TURNS
    for invocation_id in ids:
        marks = [invocation_mark(e) for e in final.events if e.invocation_id == invocation_id]
        assert marks.count(FINISHED) == 1
    messages = [
        part.text
        for event in final.events
        if event.author == "user" and event.content is not None
        for part in event.content.parts or []
    ]
    assert messages == [f"turn-{n}" for n in range(TURNS)]
    assert normalized(final.events) == normalized(expected.events)
    assert final.state == expected.state
    assert final.state == {f"stamps_{s}": TURNS for s in ("prep", "left", "right", "wrap")}

    starts = _starts(_lines(ledger))
    calls, in_flight = _in_flight(final)
    assert in_flight == set()
    assert set(starts) == calls  # every call ran, by the id its model response committed
    repeated = {call_id for call_id, n in starts.items() if n > 1}
    assert repeated <= in_flight_ever
    # Exactly the calls a kill interrupted ran twice (or more), each by its own id.
    assert repeated == interrupted
    assert repeated
    assert kills >= KILLS // 2
    assert killed_in_a_tool >= 1
