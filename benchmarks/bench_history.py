"""Event compaction figures: a turn at 10 vs 5,000 stored events, and the model's request size.

Usage: python benchmarks/bench_history.py [--json] [--quick] [--pg-url URL] [--no-adk]

For each backend (in memory, SQLite file, PostgreSQL private database; PostgreSQL is skipped
when the server is unreachable), one Runner on an app with
``EventsCompactionConfig(compaction_interval=10, overlap_size=2)`` serves two sessions:

- ``small``: 10 stored events (5 turns);
- ``big``: 5,000 stored events or more (2,500 turns and their compaction events), built by
  running the turns for real (``--quick``: 1,000).

Then turns alternate between the two sessions (the order flips each round) and each turn is
timed from the ``run_async`` call to its last event, compaction included when it is due (the
summarizer is a scripted model with a fixed cost of zero, so the figure is the runtime's).
For contrast, the same big session in memory with compaction off, and google-adk's side by
side: the same scenario on google-adk's in-memory service (``bench_history_adk.py``, run with
``$EVENTIDE_ADK_PYTHON``, else ``/work/adk-venv/bin/python``; skipped when neither exists).
Reported: median and p90 per session, the ratio big / small of the medians, and the size of
the request the agent's model received last in each session (contents and characters), which
must stay bounded however long the session is.

Prints a table, or one JSON object with ``--json`` (the benchmark suite folds it in).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from eventide import App, LlmAgent, Runner  # noqa: E402
from eventide.history.compaction import EventsCompactionConfig, LlmEventSummarizer  # noqa: E402
from eventide.models.llm_request import LlmRequest  # noqa: E402
from eventide.sessions.base_session_service import BaseSessionService  # noqa: E402
from eventide.sessions.in_memory_session_service import InMemorySessionService  # noqa: E402
from eventide.testing import FunctionModel  # noqa: E402

PG_URL = os.environ.get("EVENTIDE_PG_URL", "postgresql+asyncpg://postgres@127.0.0.1:5432/test")
INTERVAL = 10
OVERLAP = 2


def _reply(request: LlmRequest) -> str:
    return "Noted: " + (request.contents[-1].parts or [])[-1].text[:40]  # type: ignore[index]


def _summary(request: LlmRequest) -> str:
    return "The user has been sending numbered notes; the agent acknowledged each one."


async def _turn(runner: Runner, session_id: str, text: str) -> float:
    start = time.perf_counter()
    async for _ in runner.run_async(user_id="u", session_id=session_id, new_message=text):
        pass
    return time.perf_counter() - start


def _request_size(model: FunctionModel) -> dict[str, int]:
    request = model.requests[-1]
    chars = sum(len(p.text or "") for c in request.contents for p in c.parts or ())
    return {"contents": len(request.contents), "characters": chars}


async def bench_backend(
    service: BaseSessionService, *, big_events: int, rounds: int
) -> dict[str, Any]:
    model = FunctionModel(function=_reply)
    summarizer = FunctionModel(function=_summary)
    config = EventsCompactionConfig(
        compaction_interval=INTERVAL,
        overlap_size=OVERLAP,
        summarizer=LlmEventSummarizer(llm=summarizer),
    )
    app_name = f"bench_{uuid.uuid4().hex[:8]}"
    app = App(
        name=app_name,
        root_agent=LlmAgent(name="notes", model=model),
        events_compaction_config=config,
    )
    runner = Runner(app=app, session_service=service)
    for sid in ("small", "big"):
        await service.create_session(app_name=app_name, user_id="u", session_id=sid)
    for i in range(5):
        await _turn(runner, "small", f"note {i}")
    seeded = 0
    while True:
        session = await service.get_session(app_name=app_name, user_id="u", session_id="big")
        assert session is not None
        if len(session.events) >= big_events:
            break
        for _ in range(200):
            await _turn(runner, "big", f"note {seeded}")
            seeded += 1
    stored = {"small": 10, "big": len(session.events)}
    samples: dict[str, list[float]] = {"small": [], "big": []}
    sizes: dict[str, dict[str, int]] = {}
    for round_ in range(rounds):
        order = ("small", "big") if round_ % 2 == 0 else ("big", "small")
        for sid in order:
            samples[sid].append(await _turn(runner, sid, f"round {round_}"))
            sizes[sid] = _request_size(model)
    await runner.close()
    result: dict[str, Any] = {"stored_events_before": stored}
    for sid, times in samples.items():
        ordered = sorted(times)
        result[sid] = {
            "turn_median_us": round(statistics.median(times) * 1e6, 1),
            "turn_p90_us": round(ordered[int(len(ordered) * 0.9) - 1] * 1e6, 1),
            "last_request": sizes[sid],
        }
    result["ratio_big_over_small"] = round(
        result["big"]["turn_median_us"] / result["small"]["turn_median_us"], 3
    )
    result["summarizer_calls"] = len(summarizer.requests)
    return result


async def bench_uncompacted(big_events: int, rounds: int) -> dict[str, Any]:
    """The same big session in memory with compaction off: what compaction saves."""
    service = InMemorySessionService()
    model = FunctionModel(function=_reply)
    runner = Runner(
        app_name="plain", agent=LlmAgent(name="notes", model=model), session_service=service
    )
    await service.create_session(app_name="plain", user_id="u", session_id="big")
    for i in range(big_events // 2):
        await _turn(runner, "big", f"note {i}")
    times = [await _turn(runner, "big", f"round {r}") for r in range(rounds)]
    await runner.close()
    return {
        "turn_median_us": round(statistics.median(times) * 1e6, 1),
        "last_request": _request_size(model),
    }


async def main_async(args: argparse.Namespace) -> dict[str, Any]:
    big = 1000 if args.quick else 5000
    rounds = 40 if args.quick else 200
    results: dict[str, Any] = {"big_events_target": big, "rounds": rounds}
    results["memory"] = await bench_backend(InMemorySessionService(), big_events=big, rounds=rounds)
    results["memory_without_compaction"] = await bench_uncompacted(big, rounds)
    from eventide.sessions.sql_session_service import SqlSessionService

    with tempfile.TemporaryDirectory() as folder:
        sqlite = SqlSessionService(f"sqlite:///{Path(folder) / 'bench.db'}")
        try:
            results["sqlite"] = await bench_backend(sqlite, big_events=big, rounds=rounds)
        finally:
            await sqlite.close()
    results["postgres"] = await _bench_postgres(args.pg_url, big, rounds)
    if not args.no_adk:
        results["adk_memory"] = _bench_adk(big, rounds)
    return results


def _bench_adk(big: int, rounds: int) -> dict[str, Any]:
    """google-adk's figures for the same scenario, from its own interpreter."""
    python = os.environ.get("EVENTIDE_ADK_PYTHON", "/work/adk-venv/bin/python")
    if not Path(python).exists():
        return {"skipped": f"no google-adk interpreter at {python} (set EVENTIDE_ADK_PYTHON)"}
    worker = Path(__file__).with_name("bench_history_adk.py")
    done = subprocess.run(
        [python, str(worker), "--big-events", str(big), "--rounds", str(rounds)],
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        return {"skipped": f"google-adk run failed: {done.stderr.strip()[-300:]}"}
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


async def _bench_postgres(url: str, big: int, rounds: int) -> dict[str, Any]:
    from sqlalchemy.engine import make_url

    try:
        import asyncpg
    except ImportError:
        return {"skipped": "asyncpg is not installed"}
    parsed = make_url(url)
    name = f"eventide_bench_history_{uuid.uuid4().hex[:8]}"

    async def admin(statement: str) -> None:
        conn = await asyncpg.connect(
            host=parsed.host,
            port=parsed.port or 5432,
            user=parsed.username,
            password=parsed.password,
            database=parsed.database,
            timeout=5,
        )
        try:
            await conn.execute(statement)
        finally:
            await conn.close()

    try:
        await admin(f'CREATE DATABASE "{name}"')
    except (OSError, TimeoutError) as exc:
        return {"skipped": f"PostgreSQL unreachable: {exc}"}
    from eventide.sessions.sql_session_service import SqlSessionService

    service = SqlSessionService(parsed.set(database=name).render_as_string(hide_password=False))
    try:
        return await bench_backend(service, big_events=big, rounds=rounds)
    finally:
        await service.close()
        await admin(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def _table(results: dict[str, Any]) -> str:
    lines = [
        f"Turn with compaction on (interval {INTERVAL}, overlap {OVERLAP}); "
        f"{results['rounds']} turns per session",
        "| backend | stored events | median turn (µs) | p90 (µs) | ratio | request contents | "
        "request chars |",
        "| --- | --- | --- | --- | --- | --- | --- |",
    ]
    for backend in ("memory", "sqlite", "postgres", "adk_memory"):
        if backend not in results:
            continue
        entry = results[backend]
        label = "google-adk memory" if backend == "adk_memory" else backend
        if "skipped" in entry:
            lines.append(f"| {label} | skipped: {entry['skipped']} | | | | | |")
            continue
        for sid in ("small", "big"):
            row = entry[sid]
            ratio = entry["ratio_big_over_small"] if sid == "big" else ""
            lines.append(
                f"| {label} | {entry['stored_events_before'][sid]} | {row['turn_median_us']} "
                f"| {row['turn_p90_us']} | {ratio} | {row['last_request']['contents']} "
                f"| {row['last_request']['characters']} |"
            )
    plain = results["memory_without_compaction"]
    lines.append(
        f"| memory, compaction off | {results['big_events_target']}+ | "
        f"{plain['turn_median_us']} | | | {plain['last_request']['contents']} "
        f"| {plain['last_request']['characters']} |"
    )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--quick", action="store_true", help="1,000 events, 40 rounds")
    parser.add_argument("--pg-url", default=PG_URL)
    parser.add_argument("--no-adk", action="store_true", help="skip google-adk's side")
    args = parser.parse_args()
    results = asyncio.run(main_async(args))
    print(json.dumps(results) if args.json else _table(results))


if __name__ == "__main__":
    main()
