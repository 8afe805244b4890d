"""A DBOS worker process for the tests: ``python -m tests.durable.dbos_worker EXECUTOR_ID
DATABASE_URL [WORKER_CONCURRENCY [CONCURRENCY]]`` (per worker, and across all workers).

It runs six apps from one PostgreSQL database (DBOS's tables and the sessions): ``durable_app``
(``tests/durable/durable_app.py``, with the kill point of ``DURABLE_KILL_AT``), ``paused_app``
(``tests/durable/paused_app.py``, the same kill points), ``quick`` (one tool call, then an
answer; every tool call logged to the ledger), ``wf_kill`` (the graph workflow of
``tests/durable/workflow_kill_app.py``), ``slow`` (one tool call that takes 0.3 s, its
start and end logged with the time) and ``relay`` (one tool call that a test can hold running
with a gate file, see :func:`relay_app`). It prints ``ready`` once it dequeues, and stops
cleanly on SIGTERM.

``DURABLE_LIVENESS_INTERVAL`` sets the seconds between its looks for dead workers' invocations
(0.5 by default). With ``DURABLE_HOLD_START`` set, it prints ``loaded`` once imported and
starts only when a line arrives on its stdin (a spare a test starts at once). With
``DURABLE_RECOVERY_GATE`` set to a path, the worker looks for dead workers'
invocations only once that file exists: a test decides when recovery may happen.
"""

from __future__ import annotations

import asyncio
import os
import signal
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from eventide import App, LlmAgent, ResumabilityConfig, Runner, ToolContext
from eventide.durable.dbos_workers import DbosWorker
from eventide.models.llm_request import LlmRequest
from eventide.models.llm_response import LlmResponse
from eventide.sessions import SqlSessionService
from eventide.testing import FunctionModel, text_response, tool_call_response
from tests.durable.durable_app import Probe, build_app
from tests.durable.paused_app import build_app as build_paused_app
from tests.durable.workflow_kill_app import APP_NAME as WORKFLOW_APP
from tests.durable.workflow_kill_app import build_app as build_workflow_app


def quick_app(probe: Probe) -> App:
    """One tool call (logged with its call id), then an answer."""

    def answer(request: LlmRequest) -> LlmResponse:
        last = request.contents[-1].parts or []
        if last and last[-1].function_response is not None:
            return text_response(f"done: {last[-1].function_response.response}")
        return tool_call_response(("add", {"a": 2, "b": 3}))

    def add(a: int, b: int, tool_context: ToolContext) -> dict[str, Any]:
        """Add two numbers."""
        probe.log(f"start add {tool_context.function_call_id}")
        return {"sum": a + b}

    return App(
        name="quick",
        root_agent=LlmAgent(
            name="adder", model=FunctionModel(function=answer, stream_chunk_size=4), tools=[add]
        ),
        resumability_config=ResumabilityConfig(is_resumable=True),
    )


def slow_app(probe: Probe) -> App:
    """One tool call that takes a while (its start and end logged with the wall-clock time,
    to check how many invocations ran at once), then an answer."""

    def answer(request: LlmRequest) -> LlmResponse:
        last = request.contents[-1].parts or []
        if last and last[-1].function_response is not None:
            return text_response("slept")
        return tool_call_response(("nap", {}))

    async def nap(tool_context: ToolContext) -> dict[str, Any]:
        """Sleep a little."""
        probe.log(f"start nap {tool_context.function_call_id} {time.time()}")
        tool_context.state["napped"] = True
        await asyncio.sleep(0.3)
        probe.log(f"end nap {tool_context.function_call_id} {time.time()}")
        return {"slept": True}

    return App(
        name="slow",
        root_agent=LlmAgent(name="sleeper", model=FunctionModel(function=answer), tools=[nap]),
        resumability_config=ResumabilityConfig(is_resumable=True),
    )


def relay_app(probe: Probe, gates: Path | None) -> App:
    """The model calls ``work(text=<the user's text>)``, then answers ``did <text>``.

    ``work`` logs ``start work <call id> <text>``; while the file ``hold-<text>`` exists in
    ``gates`` it stays running: it writes ``at-<text>`` (holding its process id) and waits
    for the test to delete the hold file (or to kill the process).
    """

    def answer(request: LlmRequest) -> LlmResponse:
        last = request.contents[-1].parts or []
        if last and last[-1].function_response is not None:
            return text_response(f"did {(last[-1].function_response.response or {})['done']}")
        return tool_call_response(("work", {"text": last[-1].text if last else ""}))

    def work(text: str, tool_context: ToolContext) -> dict[str, Any]:
        """Do some work."""
        probe.log(f"start work {tool_context.function_call_id} {text}")
        hold = gates / f"hold-{text}" if gates is not None else None
        if hold is not None and hold.exists():
            at = hold.with_name(f"at-{text}")
            partial = at.with_name(at.name + ".tmp")
            partial.write_text(str(os.getpid()))
            partial.rename(at)  # atomic: a reader never sees it half written
            deadline = time.monotonic() + 60
            while hold.exists():
                if time.monotonic() > deadline:
                    raise AssertionError(f"the test never released {hold}")
                time.sleep(0.02)
        probe.log(f"end work {tool_context.function_call_id} {text}")
        return {"done": text}

    return App(
        name="relay",
        root_agent=LlmAgent(name="relayer", model=FunctionModel(function=answer), tools=[work]),
        resumability_config=ResumabilityConfig(is_resumable=True),
    )


@dataclass(slots=True, kw_only=True)
class GatedRecoveryWorker(DbosWorker):
    """A worker that recovers dead workers' invocations only once ``gate`` exists."""

    gate: Path | None = None

    def recover_dead_workers(self) -> list[str]:
        if self.gate is not None and not self.gate.exists():
            return []
        return DbosWorker.recover_dead_workers(self)


def main(
    executor_id: str,
    database_url: str,
    worker_concurrency: str | None = None,
    concurrency: str | None = None,
) -> None:
    signal_path = os.environ.get("DURABLE_SIGNAL")
    probe = Probe(
        Path(os.environ["DURABLE_LEDGER"]),
        kill_at=os.environ.get("DURABLE_KILL_AT") or None,
        signal=Path(signal_path) if signal_path else None,
    )

    gates = os.environ.get("DURABLE_GATES")
    recovery_gate = os.environ.get("DURABLE_RECOVERY_GATE")

    def runner_for(app_name: str) -> Runner:
        apps = {"durable_app": build_app, "paused_app": build_paused_app, "slow": slow_app}
        if app_name == "relay":
            app = relay_app(probe, Path(gates) if gates else None)
        elif app_name == WORKFLOW_APP:
            app = build_workflow_app(probe.ledger)
        else:
            app = apps.get(app_name, quick_app)(probe)
        sessions = SqlSessionService(
            database_url, engine_kwargs={"pool_size": 2, "max_overflow": 2}
        )
        return Runner(app=app, session_service=sessions)

    worker = GatedRecoveryWorker(
        gate=Path(recovery_gate) if recovery_gate else None,
        runner_factory=runner_for,
        system_database_url=database_url,
        executor_id=executor_id,
        worker_concurrency=int(worker_concurrency) if worker_concurrency else None,
        concurrency=int(concurrency) if concurrency else None,
        liveness_interval=float(os.environ.get("DURABLE_LIVENESS_INTERVAL") or 0.5),
    )
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    if os.environ.get("DURABLE_HOLD_START"):
        print("loaded", flush=True)
        sys.stdin.readline()  # a spare: imported, it starts when the test says so
    worker.start()
    print("ready", flush=True)
    stop.wait()
    if worker.stop():
        sys.stdout.flush()
        os._exit(0)  # invocations still running: do not wait for their threads


if __name__ == "__main__":
    main(*sys.argv[1:5])
