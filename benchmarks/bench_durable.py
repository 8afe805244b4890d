"""The cost of resumability per turn (issue 17): the same turn with
``ResumabilityConfig(is_resumable=True)`` and without, in memory and on SQLite.

The turn: a ``SequentialAgent`` of two ``LlmAgent``s; each calls one tool, then answers
(4 model calls, 2 tool calls). Resumability adds its markers (a step marker per step, the
pipeline's end marker; each ``LlmAgent``'s end-of-agent marker rides on its final answer) to
the committed events; the script reports both event counts.
Each round runs ``--turns`` turns per setting, each in a fresh session (created before the
clock starts), the settings alternating, and the figures are medians over rounds of the
per-turn mean. Also reported: the time to resume an invocation whose process stopped before
its last model call (plan + continuing from the log + that one model call), next to the
time of a whole uninterrupted turn.

Run: ``python -m benchmarks.bench_durable [--turns N] [--rounds N] [--quick] [--json]``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from eventide import (
    App,
    BaseSessionService,
    InMemorySessionService,
    LlmAgent,
    ResumabilityConfig,
    Runner,
    SequentialAgent,
)
from eventide.models.llm_request import LlmRequest
from eventide.models.llm_response import LlmResponse
from eventide.sessions import SqlSessionService
from eventide.testing import FunctionModel, text_response, tool_call_response


class _Stop(Exception):
    """Raised by the model to stop a turn before its last model call (the resume figure)."""


def _model(stop_at_summary: list[bool]) -> FunctionModel:
    def answer(request: LlmRequest) -> LlmResponse:
        last = request.contents[-1].parts or []
        if last and last[-1].function_response is not None:
            if stop_at_summary and stop_at_summary[0]:
                stop_at_summary[0] = False
                raise _Stop
            return text_response("done")
        return tool_call_response(("lookup", {"key": "k"}))

    return FunctionModel(function=answer)


def lookup(key: str) -> dict[str, str]:
    """Look a key up."""
    return {"value": key.upper()}


def _app(resumable: bool, stop: list[bool]) -> App:
    model = _model(stop)
    steps = [LlmAgent(name=f"step{i}", model=model, tools=[lookup]) for i in range(2)]
    return App(
        name="bench_durable",
        root_agent=SequentialAgent(name="pipeline", sub_agents=steps),
        resumability_config=ResumabilityConfig(is_resumable=resumable),
    )


async def _turns(runner: Runner, service: BaseSessionService, turns: int) -> tuple[float, int]:
    sessions = [
        (await service.create_session(app_name="bench_durable", user_id="u")).id
        for _ in range(turns)
    ]
    events = 0
    start = time.perf_counter()
    for session_id in sessions:
        async for _ in runner.run_async(user_id="u", session_id=session_id, new_message="go"):
            events += 1
    return (time.perf_counter() - start) / turns, events // turns


async def _resume_cost(service: BaseSessionService, turns: int) -> float:
    """Mean time to resume a turn stopped before its last model call."""
    total = 0.0
    for _ in range(turns):
        stop = [False]
        runner = Runner(app=_app(True, stop), session_service=service)
        session = await service.create_session(app_name="bench_durable", user_id="u")
        # Stop at step1's summary call: everything before it is committed.
        calls = 0
        try:
            async for event in runner.run_async(
                user_id="u", session_id=session.id, new_message="go"
            ):
                if event.author == "step1" and event.get_function_responses():
                    calls += 1
                    stop[0] = True
        except _Stop:
            pass
        assert calls == 1
        start = time.perf_counter()
        async for _ in runner.resume_async(user_id="u", session_id=session.id):
            pass
        total += time.perf_counter() - start
    return total / turns


async def _backend(name: str, folder: Path) -> BaseSessionService:
    if name == "memory":
        return InMemorySessionService()
    return SqlSessionService(f"sqlite:///{folder / 'sessions.db'}")


async def run(turns: int, rounds: int) -> dict[str, Any]:
    results: dict[str, Any] = {}
    for backend in ("memory", "sqlite"):
        off_times: list[float] = []
        on_times: list[float] = []
        resume_times: list[float] = []
        events: dict[str, int] = {}
        with tempfile.TemporaryDirectory() as folder:
            service = await _backend(backend, Path(folder))
            runners = {
                setting: Runner(app=_app(setting == "on", []), session_service=service)
                for setting in ("off", "on")
            }
            await _turns(runners["off"], service, 3)  # warm-up (imports, first commits)
            await _turns(runners["on"], service, 3)
            for index in range(rounds):
                order = ("off", "on") if index % 2 == 0 else ("on", "off")
                for setting in order:
                    seconds, per_turn = await _turns(runners[setting], service, turns)
                    (on_times if setting == "on" else off_times).append(seconds)
                    events[setting] = per_turn
                resume_times.append(await _resume_cost(service, max(turns // 4, 3)))
            if isinstance(service, SqlSessionService):
                await service.close()
        off, on = statistics.median(off_times), statistics.median(on_times)
        results[backend] = {
            "turn_ms_resumability_off": round(off * 1000, 3),
            "turn_ms_resumability_on": round(on * 1000, 3),
            "ratio_on_over_off": round(on / off, 3),
            "events_per_turn_off": events["off"],
            "events_per_turn_on": events["on"],
            "resume_ms_last_model_call": round(statistics.median(resume_times) * 1000, 3),
        }
    return {"scenario": "resumability_cost", "turns": turns, "rounds": rounds, **results}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--quick", action="store_true", help="20 turns, 3 rounds")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    args = parser.parse_args(argv)
    turns, rounds = (20, 3) if args.quick else (args.turns, args.rounds)
    result = asyncio.run(run(turns, rounds))
    if args.json:
        print(json.dumps(result))
    else:
        for backend in ("memory", "sqlite"):
            row = result[backend]
            print(
                f"{backend:7} off {row['turn_ms_resumability_off']:8.3f} ms  "
                f"on {row['turn_ms_resumability_on']:8.3f} ms  "
                f"ratio {row['ratio_on_over_off']:.3f}  "
                f"events {row['events_per_turn_off']} -> {row['events_per_turn_on']}  "
                f"resume (last model call) {row['resume_ms_last_model_call']:.3f} ms"
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
