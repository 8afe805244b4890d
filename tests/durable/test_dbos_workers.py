"""Invocations on DBOS workers over PostgreSQL (issue 17): real worker processes, a real
private database on the shared PostgreSQL server."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from eventide import InMemorySessionService, Runner
from eventide.errors import BackendError
from eventide.runtime.markers import FINISHED, invocation_mark
from eventide.sessions import SqlSessionService
from tests.durable.durable_app import Probe, build_app, normalized

pytest.importorskip("dbos")
from eventide.durable.dbos_workers import InvocationQueue  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.slow


class Workers:
    """Worker processes (``tests/durable/dbos_worker.py``) on one database."""

    def __init__(
        self,
        database: str,
        tmp_path: Path,
        kill_at: str | None = None,
        env: dict[str, str] | None = None,
    ) -> None:
        self.database = database
        self.ledger = tmp_path / "ledger"
        self.signal = tmp_path / "signal"
        self.kill_at = kill_at
        self.env = env or {}  # more of the worker's settings (see tests/durable/dbos_worker.py)
        self.processes: dict[str, subprocess.Popen[str]] = {}

    def start(
        self,
        *executor_ids: str,
        worker_concurrency: int | None = None,
        concurrency: int | None = None,
    ) -> None:
        env = {
            **os.environ,
            # This checkout's sources first (the venv's editable install may point elsewhere).
            "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), str(ROOT)]),
            "DURABLE_LEDGER": str(self.ledger),
            "DURABLE_KILL_AT": self.kill_at or "",
            "DURABLE_SIGNAL": str(self.signal),
            **self.env,
        }
        for executor_id in executor_ids:
            args = [sys.executable, "-m", "tests.durable.dbos_worker", executor_id, self.database]
            args += [str(worker_concurrency or ""), str(concurrency or "")]
            self.processes[executor_id] = subprocess.Popen(
                args, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
            )
        for executor_id in executor_ids:
            process = self.processes[executor_id]
            assert process.stdout is not None
            line = process.stdout.readline()
            if line.strip() != "ready":
                process.kill()
                raise AssertionError(f"worker {executor_id} did not start: {process.stderr}")

    def stop(self) -> None:
        for process in self.processes.values():
            if process.poll() is None:
                process.send_signal(signal.SIGTERM)
        for executor_id, process in self.processes.items():
            try:
                _, err = process.communicate(timeout=30)
            except subprocess.TimeoutExpired:
                process.kill()
                _, err = process.communicate()
            except ValueError:  # already collected (a killed worker)
                continue
            problems = [line for line in (err or "").splitlines() if "Error" in line]
            if problems:
                print(f"worker {executor_id} stderr:", *problems[-20:], sep="\n")

    def ledger_lines(self) -> list[str]:
        return self.ledger.read_text().splitlines() if self.ledger.exists() else []


def _popen(command: list[str]) -> subprocess.Popen[str]:
    return subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


async def _wait_for_status(
    queue: InvocationQueue, invocation_ids: list[str], within: float
) -> dict[str, str | None]:
    deadline = time.monotonic() + within
    while True:
        statuses = {i: await asyncio.to_thread(queue.status, i) for i in invocation_ids}
        if all(s in ("SUCCESS", "ERROR") for s in statuses.values()):
            return statuses
        if time.monotonic() > deadline:
            return statuses
        await asyncio.sleep(0.2)


async def test_a_worker_killed_mid_invocation_is_finished_by_the_other(
    database: str, tmp_path: Path
) -> None:
    """Issue 17 (DBOS): two worker processes; the one running the invocation is SIGKILLed
    while a tool runs; the other recovers the invocation and completes it: the events and
    state equal an uninterrupted run's, the interrupted tool call ran again with the same
    call id and every other call ran once; the client streamed the events as committed."""
    workers = Workers(database, tmp_path, kill_at="tool_running")
    sessions = SqlSessionService(database)
    queue = InvocationQueue(database)
    try:
        session = await sessions.create_session(app_name="durable_app", user_id="u")
        workers.start("w1", "w2")
        invocation_id = queue.enqueue(
            app_name="durable_app", user_id="u", session_id=session.id, new_message="go"
        )
        streamed = []
        stream = queue.events(
            sessions,
            app_name="durable_app",
            user_id="u",
            session_id=session.id,
            invocation_id=invocation_id,
        )

        async def kill_at_the_signal() -> str:
            # Watched on its own, not between streamed events: the blocked tool commits
            # nothing, so the stream may have delivered its last event before the signal
            # (regression: then the test waited out the tool's 60 s and the run failed).
            for _ in range(3000):
                if workers.signal.exists():
                    break
                await asyncio.sleep(0.02)
            _, pid = workers.signal.read_text().split()
            name = next(e for e, p in workers.processes.items() if str(p.pid) == pid)
            workers.processes[name].send_signal(signal.SIGKILL)
            await asyncio.to_thread(workers.processes[name].communicate, timeout=30)
            return name

        killer = asyncio.create_task(kill_at_the_signal())
        try:
            async for event in stream:
                streamed.append(event)
            killed = await asyncio.wait_for(killer, 30)
        finally:
            killer.cancel()
        assert workers.processes[killed].returncode == -signal.SIGKILL
        statuses = await _wait_for_status(queue, [invocation_id], 60)
        assert statuses[invocation_id] == "SUCCESS"

        final = await sessions.get_session(
            app_name="durable_app", user_id="u", session_id=session.id
        )
        assert final is not None
        assert [e.id for e in streamed] == [
            e.id for e in final.events if e.invocation_id == invocation_id
        ]
        assert invocation_mark(final.events[-1]) == FINISHED

        baseline_probe = Probe(tmp_path / "baseline")
        baseline_service = InMemorySessionService()
        baseline_runner = Runner(app=build_app(baseline_probe), session_service=baseline_service)
        base = await baseline_service.create_session(app_name="durable_app", user_id="u")
        async for _ in baseline_runner.run_async(user_id="u", session_id=base.id, new_message="go"):
            pass
        expected = await baseline_service.get_session(
            app_name="durable_app", user_id="u", session_id=base.id
        )
        assert expected is not None
        assert normalized(final.events) == normalized(expected.events)
        assert final.state == expected.state

        starts = Counter(line.split()[2] for line in workers.ledger_lines() if "start " in line)
        (book,) = [c.id for e in final.events for c in e.get_function_calls() if c.name == "book"]
        assert book is not None
        assert starts[book] == 2
        assert all(n == 1 for call_id, n in starts.items() if call_id != book)
        models = sum(1 for line in workers.ledger_lines() if line.startswith("model "))
        assert models == sum(1 for line in baseline_probe.ledger_lines() if "model " in line)
    finally:
        workers.stop()
        queue.close()
        await sessions.close()


async def test_200_invocations_across_3_workers_complete_exactly_once(
    database: str, tmp_path: Path
) -> None:
    """Issue 17 (DBOS): 200 invocations enqueued for 3 worker processes all complete, each
    exactly once: one finished invocation per session, one tool call per invocation, and
    every worker took a share."""
    workers = Workers(database, tmp_path)
    sessions = SqlSessionService(database)
    queue = InvocationQueue(database)
    try:
        session_ids = [
            (await sessions.create_session(app_name="quick", user_id="u")).id for _ in range(200)
        ]
        workers.start("w1", "w2", "w3", worker_concurrency=8)
        invocation_ids = [
            queue.enqueue(app_name="quick", user_id="u", session_id=s, new_message="2 + 3?")
            for s in session_ids
        ]
        statuses = await _wait_for_status(queue, invocation_ids, 180)
        assert Counter(statuses.values()) == Counter({"SUCCESS": 200})

        for session_id, invocation_id in zip(session_ids, invocation_ids, strict=True):
            stored = await sessions.get_session(
                app_name="quick", user_id="u", session_id=session_id
            )
            assert stored is not None
            assert {e.invocation_id for e in stored.events} == {invocation_id}
            assert [invocation_mark(e) for e in stored.events].count(FINISHED) == 1
            assert [e.text for e in stored.events if e.text] == ["2 + 3?", "done: {'sum': 5}"]
        starts = Counter(line.split()[2] for line in workers.ledger_lines())
        assert len(starts) == 200 and set(starts.values()) == {1}

        ran_on = {
            w.executor_id
            for w in queue._client.list_workflows(workflow_ids=invocation_ids, load_input=False)
        }
        assert ran_on == {"w1", "w2", "w3"}
    finally:
        workers.stop()
        queue.close()
        await sessions.close()


def test_an_unreachable_dbos_database_is_a_clear_error() -> None:
    """Issue 17 (bad input): a DBOS system database that is not reachable raises
    BackendError naming the URL and saying nothing was enqueued."""
    queue = None
    with pytest.raises(BackendError, match="(?s)not reachable.*nothing was enqueued"):
        queue = InvocationQueue("postgresql://postgres@127.0.0.1:1/nowhere")
        queue.enqueue(app_name="quick", user_id="u", session_id="s", new_message="hi")
    if queue is not None:
        queue.close()


async def test_the_eventide_worker_command_runs_queued_invocations(
    database: str, tmp_path: Path
) -> None:
    """Issue 17 (DBOS): `eventide worker APPS_DIR --database URL --executor-id ID` dequeues
    and runs an invocation enqueued by a client, whose events the client streams; SIGTERM
    stops the worker cleanly (exit code 0)."""
    app_folder = tmp_path / "apps" / "greeter"
    app_folder.mkdir(parents=True)
    (app_folder / "agent.py").write_text(
        "from eventide import LlmAgent\n"
        "from eventide.testing import ScriptedModel\n"
        "root_agent = LlmAgent(name='greeter', model=ScriptedModel(responses=['Hello!']))\n"
    )
    command = [
        str(Path(sys.executable).with_name("eventide")),
        "worker",
        str(tmp_path / "apps"),
        "--database",
        database,
        "--executor-id",
        "cli-1",
    ]
    process = _popen(command)
    sessions = SqlSessionService(database)
    queue = InvocationQueue(database)
    try:
        assert process.stdout is not None
        assert "Worker cli-1 is running the apps greeter" in process.stdout.readline()
        session = await sessions.create_session(app_name="greeter", user_id="u")
        invocation_id = queue.enqueue(
            app_name="greeter", user_id="u", session_id=session.id, new_message="hi"
        )
        events = [
            e
            async for e in queue.events(
                sessions,
                app_name="greeter",
                user_id="u",
                session_id=session.id,
                invocation_id=invocation_id,
            )
        ]
        assert [e.text for e in events if e.text] == ["hi", "Hello!"]
    finally:
        process.send_signal(signal.SIGTERM)
        _, err = process.communicate(timeout=30)
        queue.close()
        await sessions.close()
    assert process.returncode == 0, err


async def test_the_api_server_runs_turns_on_the_workers(database: str, tmp_path: Path) -> None:
    """Issue 17 (DBOS): an API server built with an invocation queue (`api-server --workers
    dbos`) runs POST /run and /run_sse turns on a worker process, streaming the events the
    worker commits; a missing session is still a 404."""
    async with _api_on_workers(database, tmp_path) as (client, body, _, workers):
        answer = await client.post("/run", json=body, timeout=60)
        assert answer.status_code == 200, answer.text
        texts = [
            p["text"]
            for e in answer.json()
            for p in (e.get("content") or {}).get("parts", [])
            if p.get("text")
        ]
        assert texts == ["done: {'sum': 5}"]
        async with client.stream("POST", "/run_sse", json=body, timeout=60) as stream:
            frames = [line async for line in stream.aiter_lines() if line.startswith("data:")]
        assert any("done: {'sum': 5}" in frame for frame in frames)
        missing = await client.post("/run", json={**body, "sessionId": "nope"}, timeout=60)
        assert missing.status_code == 404
        assert [line.split()[1] for line in workers.ledger_lines()] == ["add", "add"]
        assert (tmp_path / "server-ledger").exists() is False  # the server ran no tool itself


async def test_the_queue_concurrency_limit_holds_across_workers(
    database: str, tmp_path: Path
) -> None:
    """Issue 17 (DBOS: the queue's concurrency limit): with a limit of 2 invocations at a
    time across all workers, 8 slow invocations enqueued for 3 worker processes never run
    more than 2 at once, and all complete."""
    workers = Workers(database, tmp_path)
    sessions = SqlSessionService(database)
    queue = InvocationQueue(database)
    try:
        session_ids = [
            (await sessions.create_session(app_name="slow", user_id="u")).id for _ in range(8)
        ]
        workers.start("w1", "w2", "w3", concurrency=2)
        invocation_ids = [
            queue.enqueue(app_name="slow", user_id="u", session_id=s, new_message="nap")
            for s in session_ids
        ]
        statuses = await _wait_for_status(queue, invocation_ids, 120)
        assert Counter(statuses.values()) == Counter({"SUCCESS": 8})
        moments: list[tuple[float, int]] = []
        for line in workers.ledger_lines():
            kind, _, _, at = line.split()
            moments.append((float(at), 1 if kind == "start" else -1))
        running = most = 0
        for _, change in sorted(moments, key=lambda m: (m[0], m[1])):
            running += change
            most = max(most, running)
        assert len(moments) == 16
        assert most == 2  # the limit was reached, never passed
    finally:
        workers.stop()
        queue.close()
        await sessions.close()


async def test_state_delta_reaches_the_worker_with_the_message(
    database: str, tmp_path: Path
) -> None:
    """Issue 17 (DBOS: state_delta): a turn enqueued with a state_delta commits it with
    the user's message on the worker, as Runner.run_async does in process; the tool's own
    state change follows, and the session's state holds both."""
    workers = Workers(database, tmp_path)
    sessions = SqlSessionService(database)
    queue = InvocationQueue(database)
    try:
        session = await sessions.create_session(app_name="slow", user_id="u")
        workers.start("w1")
        invocation_id = queue.enqueue(
            app_name="slow",
            user_id="u",
            session_id=session.id,
            new_message="nap",
            state_delta={"mood": "sleepy", "user:tz": "UTC"},
        )
        events = [
            e
            async for e in queue.events(
                sessions,
                app_name="slow",
                user_id="u",
                session_id=session.id,
                invocation_id=invocation_id,
            )
        ]
        assert events[0].author == "user" and events[0].text == "nap"
        assert events[0].actions.state_delta == {"mood": "sleepy", "user:tz": "UTC"}
        stored = await sessions.get_session(app_name="slow", user_id="u", session_id=session.id)
        assert stored is not None
        assert stored.state == {"mood": "sleepy", "user:tz": "UTC", "napped": True}
    finally:
        workers.stop()
        queue.close()
        await sessions.close()


async def test_a_worker_stopped_mid_invocation_exits_and_the_other_finishes_it(
    database: str, tmp_path: Path
) -> None:
    """Issue 17 (DBOS: stopping a worker does not hang): SIGTERM reaches a worker while its
    invocation's tool is still running (blocked); the worker exits (code 0) without waiting
    for it, and the other worker recovers the invocation and completes it."""
    workers = Workers(database, tmp_path, kill_at="tool_running")
    sessions = SqlSessionService(database)
    queue = InvocationQueue(database)
    try:
        session = await sessions.create_session(app_name="durable_app", user_id="u")
        workers.start("w1", "w2")
        invocation_id = queue.enqueue(
            app_name="durable_app", user_id="u", session_id=session.id, new_message="go"
        )
        for _ in range(600):
            if workers.signal.exists():
                break
            await asyncio.sleep(0.1)
        _, pid = workers.signal.read_text().split()
        stopped = next(e for e, p in workers.processes.items() if str(p.pid) == pid)
        process = workers.processes[stopped]
        process.send_signal(signal.SIGTERM)
        _, err = process.communicate(timeout=30)  # a hang fails here
        assert process.returncode == 0, err
        statuses = await _wait_for_status(queue, [invocation_id], 90)
        assert statuses[invocation_id] == "SUCCESS"
        final = await sessions.get_session(
            app_name="durable_app", user_id="u", session_id=session.id
        )
        assert final is not None
        assert invocation_mark(final.events[-1]) == FINISHED
    finally:
        workers.stop()
        queue.close()
        await sessions.close()


async def test_a_streaming_turn_on_the_workers_streams_partial_chunks(
    database: str, tmp_path: Path
) -> None:
    """Issue 17 (DBOS: partial events): a /run_sse turn with streaming on, run by a worker
    process: the client receives the model's partial chunks (published by the worker with
    PostgreSQL NOTIFY while it runs) before the complete answer; chunks are not committed."""
    async with _api_on_workers(database, tmp_path) as (client, body, services, _):
        streaming = {**body, "streaming": True}
        async with client.stream("POST", "/run_sse", json=streaming, timeout=60) as stream:
            frames = [
                json.loads(line[len("data:") :])
                async for line in stream.aiter_lines()
                if line.startswith("data:")
            ]
        texts = [
            (bool(f.get("partial")), p["text"])
            for f in frames
            for p in (f.get("content") or {}).get("parts", [])
            if p.get("text")
        ]
        answer = "done: {'sum': 5}"
        chunks = [text for partial, text in texts if partial]
        assert "".join(chunks) == answer and len(chunks) > 1
        assert texts[-1] == (False, answer)  # the complete answer after its chunks
        stored = await services.session_service.get_session(
            app_name="quick", user_id="u", session_id=body["sessionId"]
        )
        assert stored is not None
        assert not any(e.partial for e in stored.events)


@contextlib.asynccontextmanager
async def _api_on_workers(
    database: str, tmp_path: Path
) -> AsyncIterator[tuple[httpx.AsyncClient, dict[str, Any], Any, Workers]]:
    """An API server whose turns run on one worker process (``--workers dbos``), its HTTP
    client, the body of a turn in a new session of the quick app, its services, the workers."""
    from eventide.apps.services import build_services
    from eventide.server.api_server import create_app
    from tests.durable.dbos_worker import quick_app

    workers = Workers(database, tmp_path)
    services = build_services(session_db=database, artifact_root="memory:")
    queue = InvocationQueue(database)
    api = create_app(
        apps={"quick": quick_app(Probe(tmp_path / "server-ledger"))},
        services=services,
        invocation_queue=queue,
    )
    try:
        workers.start("w1")
        session = await services.session_service.create_session(app_name="quick", user_id="u")
        body: dict[str, Any] = {
            "appName": "quick",
            "userId": "u",
            "sessionId": session.id,
            "newMessage": {"role": "user", "parts": [{"text": "2 + 3?"}]},
        }
        transport = httpx.ASGITransport(app=api)
        async with httpx.AsyncClient(transport=transport, base_url="http://localhost") as client:
            yield client, body, services, workers
    finally:
        workers.stop()
        queue.close()
        await services.close()
