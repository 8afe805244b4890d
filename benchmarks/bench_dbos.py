"""Invocations per second through the DBOS queue with 1, 2 and 4 worker processes (issue 17).

Each run gets a private PostgreSQL database (``EVENTIDE_PG_URL``'s server; DBOS's tables and
the sessions), starts the workers (``python -m benchmarks.bench_dbos --worker ...``) and waits
until each says it is ready, creates the sessions, then enqueues ``--invocations``
invocations at once and times from the first enqueue until every workflow is ``SUCCESS``. The
invocation: an ``LlmAgent`` calling one tool, then answering (2 model calls, 3 events, run
resumably). Figures: invocations/second per worker count (median over ``--rounds``), and a
check that each invocation committed exactly one finished turn.

Run: ``python -m benchmarks.bench_dbos [--invocations N] [--rounds N] [--workers 1,2,4]
[--quick] [--json]`` (needs the ``dbos`` extra and PostgreSQL).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import signal
import statistics
import subprocess
import sys
import threading
import time
import uuid
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
PG_URL = os.environ.get("EVENTIDE_PG_URL", "postgresql://postgres@127.0.0.1:5432/test")


def _app() -> Any:
    from eventide import App, LlmAgent, ResumabilityConfig
    from eventide.models.llm_request import LlmRequest
    from eventide.models.llm_response import LlmResponse
    from eventide.testing import FunctionModel, text_response, tool_call_response

    def answer(request: LlmRequest) -> LlmResponse:
        last = request.contents[-1].parts or []
        if last and last[-1].function_response is not None:
            return text_response("done")
        return tool_call_response(("add", {"a": 2, "b": 3}))

    def add(a: int, b: int) -> dict[str, int]:
        """Add two numbers."""
        return {"sum": a + b}

    return App(
        name="bench",
        root_agent=LlmAgent(name="adder", model=FunctionModel(function=answer), tools=[add]),
        resumability_config=ResumabilityConfig(is_resumable=True),
    )


def worker_main(executor_id: str, database: str) -> None:
    """A worker process: run the bench app until SIGTERM."""
    from eventide import Runner
    from eventide.durable.dbos_workers import DbosWorker
    from eventide.sessions import SqlSessionService

    worker = DbosWorker(
        runner_factory=lambda _: Runner(
            app=_app(),
            session_service=SqlSessionService(
                database, engine_kwargs={"pool_size": 2, "max_overflow": 2}
            ),
        ),
        system_database_url=database,
        executor_id=executor_id,
    )
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    worker.start()
    print("ready", flush=True)
    stop.wait()
    worker.stop()


async def _admin(statement: str) -> None:
    import asyncpg
    from sqlalchemy.engine import make_url

    url = make_url(PG_URL)
    conn = await asyncpg.connect(
        host=url.host, port=url.port or 5432, user=url.username, database=url.database
    )
    try:
        await conn.execute(statement)
    finally:
        await conn.close()


def _start_worker(executor_id: str, database: str) -> subprocess.Popen[str]:
    command = [sys.executable, "-m", "benchmarks.bench_dbos", "--worker", executor_id, database]
    # This checkout's sources first (the venv's editable install may point elsewhere).
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), str(ROOT)])}
    return subprocess.Popen(command, cwd=ROOT, env=env, stdout=subprocess.PIPE, text=True)


async def one_round(workers: int, invocations: int) -> float:
    """Seconds for ``invocations`` invocations through ``workers`` worker processes."""
    from sqlalchemy.engine import make_url

    from eventide.durable.dbos_workers import InvocationQueue
    from eventide.runtime.markers import FINISHED, invocation_mark
    from eventide.sessions import SqlSessionService

    name = f"eventide_bench_dbos_{uuid.uuid4().hex[:10]}"
    await _admin(f'CREATE DATABASE "{name}"')
    database = make_url(PG_URL).set(database=name).render_as_string(hide_password=False)
    processes: list[subprocess.Popen[str]] = []
    sessions = SqlSessionService(database)
    try:
        queue = InvocationQueue(database)
        session_ids = [
            (await sessions.create_session(app_name="bench", user_id="u")).id
            for _ in range(invocations)
        ]
        processes.extend(_start_worker(f"w{n}", database) for n in range(workers))
        for process in processes:
            assert process.stdout is not None and process.stdout.readline().strip() == "ready"
        start = time.perf_counter()
        ids = [
            queue.enqueue(app_name="bench", user_id="u", session_id=s, new_message="2 + 3?")
            for s in session_ids
        ]
        deadline = time.monotonic() + 600
        while True:
            listed = queue._client.list_workflows(
                workflow_ids=ids, load_input=False, load_output=False
            )
            statuses = [w.status for w in listed]
            if statuses.count("SUCCESS") == invocations:
                break
            if "ERROR" in statuses or time.monotonic() > deadline:
                raise RuntimeError(f"invocations did not all succeed: {statuses}")
            await asyncio.sleep(0.05)
        elapsed = time.perf_counter() - start
        for session_id in session_ids:
            stored = await sessions.get_session(
                app_name="bench", user_id="u", session_id=session_id
            )
            assert stored is not None
            assert [invocation_mark(e) for e in stored.events].count(FINISHED) == 1
        queue.close()
        return elapsed
    finally:
        for process in processes:
            process.send_signal(signal.SIGTERM)
        for process in processes:
            try:
                process.communicate(timeout=60)
            except subprocess.TimeoutExpired:
                process.kill()
                process.communicate()
        await sessions.close()
        await _admin(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--invocations", type=int, default=300)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--workers", default="1,2,4")
    parser.add_argument("--quick", action="store_true", help="60 invocations, 1 round")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--worker", nargs=2, metavar=("EXECUTOR_ID", "DATABASE"))
    args = parser.parse_args(argv)
    if args.worker:
        worker_main(*args.worker)
        return 0
    invocations, rounds = (60, 1) if args.quick else (args.invocations, args.rounds)
    result: dict[str, Any] = {"scenario": "dbos_queue", "invocations": invocations}
    for count in (int(n) for n in args.workers.split(",")):
        seconds = statistics.median(
            asyncio.run(one_round(count, invocations)) for _ in range(rounds)
        )
        result[f"workers_{count}"] = {
            "median_seconds": round(seconds, 3),
            "invocations_per_second": round(invocations / seconds, 1),
        }
        if not args.json:
            print(f"{count} worker(s): {invocations / seconds:7.1f} invocations/s")
    if args.json:
        print(json.dumps(result))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
