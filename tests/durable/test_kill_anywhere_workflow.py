"""Kill anywhere, for a graph workflow on DBOS workers (issue 31).

The workflow of ``tests/durable/workflow_kill_app.py`` (function nodes whose side effects go
to a ledger file, a fan-out and its join, an LLM node with a scripted model and a tool, a
human-input pause) runs on DBOS worker processes (``tests/durable/dbos_worker.py``). The test
enqueues the turns' messages and the user's answers one after another, and meanwhile
SIGKILLs the worker at random moments while it works, many times; each time a new worker
(another executor) starts and recovers the dead one's invocation from the log.
"""

from __future__ import annotations

import asyncio
import difflib
import os
import pprint
import random
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from typing import IO, Any

import pytest

from eventide import InMemorySessionService, Runner
from eventide.events import Event
from eventide.runtime.markers import CALL_KEY, FINISHED, invocation_mark
from eventide.sessions import SqlSessionService
from eventide.workflow.replay import DONE_KEY
from tests.durable.workflow_kill_app import (
    APP_NAME,
    answer,
    build_app,
    node_outputs,
    normalized_log,
    pending_request,
)

pytest.importorskip("dbos")
from eventide.durable.dbos_workers import InvocationQueue  # noqa: E402

pytestmark = pytest.mark.slow

TURNS = 4
KILLS = 12
ROOT = Path(__file__).resolve().parents[2]
SEED = 31
# Seconds the whole run may take before the test fails rather than hangs.
DEADLINE = 90.0


def _messages(turn: int, events: list[Event]) -> Any:
    """The next message of ``turn``: its text, or the answer to the workflow's request."""
    request = pending_request(events)
    return answer(request, f"yes-{turn}") if request is not None else f"turn-{turn}"


async def _uninterrupted(ledger: Path) -> list[Event]:
    """The session's events after the turns ran in one process, with no kill."""
    service = InMemorySessionService()
    runner = Runner(app=build_app(ledger), session_service=service)
    session_id = (await service.create_session(app_name=APP_NAME, user_id="u")).id
    for turn in range(TURNS):
        for _ in range(2):
            session = await service.get_session(
                app_name=APP_NAME, user_id="u", session_id=session_id
            )
            assert session is not None
            message = _messages(turn, session.events)
            async for _event in runner.run_async(
                user_id="u", session_id=session_id, new_message=message
            ):
                pass
    final = await service.get_session(app_name=APP_NAME, user_id="u", session_id=session_id)
    assert final is not None
    await runner.close()
    return final.events


def _completed(events: list[Event]) -> set[str]:
    """The side-effect keys whose completion the log holds: a node run's output (or its
    done marker) for ``<invocation>:<path>``, a call's response (or record) for a call id."""
    done: set[str] = set()
    for event in events:
        if event.node_info.path and (
            event.output is not None or (event.custom_metadata or {}).get(DONE_KEY)
        ):
            done.add(f"{event.invocation_id}:{event.node_info.path}")
        done.update(r.id for r in event.get_function_responses() if r.id)
        record = (event.custom_metadata or {}).get(CALL_KEY)
        if isinstance(record, dict) and record.get("id"):
            done.add(str(record["id"]))
    return done


def _summary(events: list[Event]) -> str:
    return "\n".join(
        f"{e.invocation_id} {e.author} {e.node_info.path} {invocation_mark(e)} "
        f"{e.error_code or ''} {[c.id for c in e.get_function_calls()]} "
        f"{[r.id for r in e.get_function_responses()]} {e.output!r}"
        for e in events
    )


def _diff(want: object, got: object) -> str:
    before = pprint.pformat(want, width=200).splitlines()
    after = pprint.pformat(got, width=200).splitlines()
    return "\n".join(difflib.unified_diff(before, after, "uninterrupted", "killed", lineterm=""))


def _starts(lines: list[str]) -> Counter[str]:
    return Counter(line.split()[1] for line in lines if line.startswith("start "))


async def test_a_workflow_sigkilled_at_random_moments_on_dbos_workers_finishes_exactly_once(
    database: str, tmp_path: Path
) -> None:
    """Every invocation finishes exactly once (DBOS SUCCESS, one ``finished`` marker), with
    the node outputs, events and state of an uninterrupted run; after each kill, a side
    effect runs again only for the node (or tool call) that was in flight, by the same id
    (invocation and node path, or call id), and every such one does run again."""
    expected = await _uninterrupted(tmp_path / "baseline.ledger")

    workers = _Workers(database, tmp_path)
    sessions = SqlSessionService(database)
    queue = InvocationQueue(database)
    session_id = (await sessions.create_session(app_name=APP_NAME, user_id="u")).id
    enqueued: list[str] = []

    async def log() -> list[Event]:
        session = await sessions.get_session(app_name=APP_NAME, user_id="u", session_id=session_id)
        assert session is not None
        return session.events

    async def drive() -> None:
        for turn in range(TURNS):
            for _ in range(2):
                message = _messages(turn, await log())
                workflow_id = queue.enqueue(
                    app_name=APP_NAME, user_id="u", session_id=session_id, new_message=message
                )
                enqueued.append(workflow_id)
                followed = queue.events(
                    sessions,
                    app_name=APP_NAME,
                    user_id="u",
                    session_id=session_id,
                    invocation_id=workflow_id,
                )
                async for _event in followed:
                    pass

    rng = random.Random(SEED)
    kills = 0
    interrupted: set[str] = set()  # started before a kill, completion not committed
    reruns_checked: list[tuple[int, set[str]]] = []  # (ledger position, completed at kill)
    started = time.monotonic()
    try:
        await workers.next()
        driver = asyncio.create_task(drive())
        while kills < KILLS and not driver.done():
            # Wait until the live worker works (its ledger or the log grows), then a while.
            ledger_before, events_before = len(workers.ledger_lines()), len(await log())
            while not driver.done():
                if len(workers.ledger_lines()) > ledger_before:
                    break
                if len(await log()) > events_before:
                    break
                assert time.monotonic() - started < DEADLINE, "no progress"
                await asyncio.sleep(0.01)
            await asyncio.sleep(rng.uniform(0.0, 0.3))
            if driver.done():
                break
            await workers.kill()
            kills += 1
            # No worker runs now: the log and the ledger are as the dead worker left them,
            # once PostgreSQL has finished a statement the worker sent just before it died
            # (its server process commits a COMMIT it received, then finds the client gone).
            await asyncio.sleep(0.2)
            lines = workers.ledger_lines()
            completed = _completed(await log())
            interrupted |= set(_starts(lines)) - completed
            reruns_checked.append((len(lines), completed))
            await workers.next()  # another executor, which recovers the dead one's work
        try:
            await asyncio.wait_for(driver, DEADLINE - (time.monotonic() - started))
        except TimeoutError:
            statuses = {w: queue.status(w) for w in enqueued}
            raise AssertionError(
                f"the turns did not finish within {DEADLINE} s ({kills} kills); workflows: "
                f"{statuses}; the log:\n{_summary(await log())}"
            ) from None
        # A kill after an invocation's last commit, before DBOS recorded its end, leaves
        # the workflow to be recovered (it then finds the invocation finished): wait for it.
        while True:
            statuses = {w: queue.status(w) for w in enqueued}
            if set(statuses.values()) <= {"SUCCESS", "ERROR"}:
                break
            assert time.monotonic() - started < DEADLINE, statuses
            await asyncio.sleep(0.05)
        events = await log()
        final = await sessions.get_session(app_name=APP_NAME, user_id="u", session_id=session_id)
        assert final is not None
    finally:
        workers.stop()
        queue.close()
        await sessions.close()
    assert set(statuses.values()) == {"SUCCESS"}, statuses
    assert len(enqueued) == 2 * TURNS
    for invocation_id in dict.fromkeys(e.invocation_id for e in events if e.invocation_id):
        marks = [invocation_mark(e) for e in events if e.invocation_id == invocation_id]
        assert marks.count(FINISHED) == 1, _summary(events)
    assert node_outputs(events) == node_outputs(expected)
    got, want = normalized_log(events), normalized_log(expected)
    assert got == want, _diff(want, got)
    assert final.state == _state_of(expected)

    lines = workers.ledger_lines()
    starts = _starts(lines)
    assert set(starts) <= _completed(events)  # every side effect's work is in the log
    calls = {c.id for e in events for c in e.get_function_calls() if c.id and c.name == "stamp"}
    # Every tool call the log holds ran, by the id its model response committed (a model
    # response committed before a kill is not requested again).
    assert calls == {key for key in starts if key.startswith("call-")}
    for position, completed in reruns_checked:
        rerun = set(_starts(lines[:position])) & set(_starts(lines[position:]))
        assert not rerun & completed, rerun & completed  # never one the log had completed
    repeated = {key for key, n in starts.items() if n > 1}
    assert repeated == interrupted
    assert kills == KILLS
    assert repeated, "no kill landed inside a side effect"
    print(f"kills={kills} interrupted side effects={sorted(interrupted)}")


class _Workers:
    """One live worker process (``tests/durable/dbos_worker.py``) at a time, each a new DBOS
    executor, and a spare already imported (held before it starts), so a kill costs the
    spare's start, not a whole process start."""

    def __init__(self, database: str, tmp_path: Path) -> None:
        self.database = database
        self.tmp_path = tmp_path
        self.ledger = tmp_path / "ledger"
        self.count = 0
        self.live: subprocess.Popen[str] | None = None
        self.stderr: list[IO[str]] = []
        self.spare = self._spawn()

    def _spawn(self) -> subprocess.Popen[str]:
        env = {
            **os.environ,
            "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), str(ROOT)]),
            "DURABLE_LEDGER": str(self.ledger),
            "DURABLE_LIVENESS_INTERVAL": "0.2",
            "DURABLE_HOLD_START": "1",
        }
        name = f"w{self.count}"
        self.count += 1
        args = [sys.executable, "-m", "tests.durable.dbos_worker", name, self.database]
        stderr = (self.tmp_path / f"{name}.stderr").open("w")
        self.stderr.append(stderr)
        return subprocess.Popen(
            args,
            cwd=ROOT,
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=stderr,
            text=True,
        )

    async def next(self) -> None:
        """Start the spare (it becomes the live worker) and load the next spare."""
        process = self.spare
        assert process.stdin is not None and process.stdout is not None
        for expected in ("loaded", "ready"):
            line = await asyncio.to_thread(process.stdout.readline)
            assert line.strip() == expected, f"a worker did not start: {line!r}"
            if expected == "loaded":
                process.stdin.write("go\n")
                process.stdin.flush()
        self.live = process
        self.spare = self._spawn()

    async def kill(self) -> None:
        assert self.live is not None
        self.live.send_signal(signal.SIGKILL)
        await asyncio.to_thread(self.live.communicate, timeout=30)
        self.live = None

    def ledger_lines(self) -> list[str]:
        return self.ledger.read_text().splitlines() if self.ledger.exists() else []

    def stop(self) -> None:
        self.spare.kill()
        self.spare.communicate(timeout=30)
        if self.live is not None:
            self.live.send_signal(signal.SIGTERM)
            try:
                self.live.communicate(timeout=30)
            except subprocess.TimeoutExpired:
                self.live.kill()
                self.live.communicate(timeout=30)
        for stderr in self.stderr:
            stderr.close()


def _state_of(events: list[Event]) -> dict[str, Any]:
    state: dict[str, Any] = {}
    for event in events:
        state.update(event.actions.state_delta)
    return state
