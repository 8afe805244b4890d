"""The scenarios, written once against a framework namespace (:class:`benchmarks.frameworks.Api`).

Each ``run_*`` coroutine runs inside a worker subprocess for one framework and returns raw
samples: ``{"metrics": {name: [sample, ...]}, "info": {...}, "skipped": {what: reason}}``.
Warm-up runs come first and are discarded; every turn is checked to produce the expected
events (the same on both sides), so a side that silently does less work cannot look faster.
Scenario 1 (cold import) runs in fresh interpreters and lives in :mod:`benchmarks.cold_import`.
"""

from __future__ import annotations

import asyncio
import gc
import os
import resource
import tempfile
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from time import perf_counter
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from benchmarks.fake_model import get_weather, get_weather_async, make_fake_llm_class
from benchmarks.frameworks import Api

__all__ = ["SCENARIOS", "Metric", "Scenario", "ScenarioMismatch"]

APP = "bench"
USER = "bench_user"
STATE_EVENTS = 1000  # scenario 5
WARMUP_STATE_EVENTS = 50  # scenario 5's warm-up turns
STREAM_CHUNKS = 200  # scenario 4
DEFAULT_PG_URL = "postgresql+asyncpg://postgres@127.0.0.1:5432/test"

Samples = dict[str, Any]


class ScenarioMismatch(RuntimeError):
    """A framework's turn did not produce the events the scenario expects."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Metric:
    """One reported figure: lower is better for every metric of the suite."""

    name: str
    unit: str
    title: str
    goal: float | None = None  # Eventide's goal from the issues, in ``unit``
    adk_reference: float | None = None  # google-adk 2.13 as measured in issue 8, in ``unit``


@dataclass(frozen=True, slots=True, kw_only=True)
class Scenario:
    """A scenario: its metrics, its parameters (full and quick), and its worker coroutine."""

    number: int
    title: str
    metrics: tuple[Metric, ...]
    full: dict[str, int]
    quick: dict[str, int]
    run: Callable[[Api, dict[str, int]], Awaitable[Samples]] | None = field(default=None)


# --- helpers shared by the scenarios ---


def _message(api: Api, text: str) -> Any:
    types = api.types
    return types.Content(role="user", parts=[types.Part(text=text)])


def _llm_agent(api: Api, model: str, *, tools: list[Any] | None = None) -> Any:
    if api.LlmAgent is None:
        raise ScenarioMismatch(f"{api.name} has no LlmAgent yet")
    llm = make_fake_llm_class(api)(model=model)
    return api.LlmAgent(
        name="bench_agent",
        model=llm,
        instruction="You are a benchmark agent. Answer briefly.",
        tools=tools or [],
    )


def _runner(api: Api, agent: Any, session_service: Any) -> Any:
    return api.Runner(app_name=APP, agent=agent, session_service=session_service)


def _kind(event: Any) -> str:
    """A compact name for an event, to check both sides produce the same sequence."""
    if event.partial:
        return "partial"
    if event.get_function_calls():
        return "call"
    if event.get_function_responses():
        return "response"
    content = event.content
    if content is not None and content.parts and content.parts[0].text is not None:
        return "text"
    if event.actions.state_delta:
        return "state"
    return "other"


async def _collect(runner: Any, session_id: str, message: Any, run_config: Any = None) -> list[Any]:
    return [
        event
        async for event in runner.run_async(
            user_id=USER, session_id=session_id, new_message=message, run_config=run_config
        )
    ]


async def _check(
    runner: Any, svc: Any, api: Api, expected: list[str], run_config: Any = None
) -> None:
    session = await svc.create_session(app_name=APP, user_id=USER)
    events = await _collect(runner, session.id, _message(api, "check"), run_config)
    kinds = [_kind(e) for e in events]
    if kinds != expected:
        shown = kinds if len(kinds) < 12 else [*kinds[:5], "...", *kinds[-5:]]
        raise ScenarioMismatch(
            f"{api.name}: expected {len(expected)} events ending in {expected[-3:]}, got "
            f"{len(kinds)}: {shown}"
        )


async def _timed_turn(
    runner: Any, session_id: str, message: Any, run_config: Any = None
) -> tuple[float, int]:
    """One turn's wall time in microseconds, and its event count."""
    count = 0
    start = perf_counter()
    async for _ in runner.run_async(
        user_id=USER, session_id=session_id, new_message=message, run_config=run_config
    ):
        count += 1
    return (perf_counter() - start) * 1e6, count


async def _fresh_session_turns(
    runner: Any, svc: Any, api: Api, warmup: int, reps: int, run_config: Any = None
) -> list[float]:
    """Time ``reps`` turns, each in a fresh session (created outside the timing)."""
    samples: list[float] = []
    for i in range(warmup + reps):
        if i == warmup:
            gc.collect()
        session = await svc.create_session(app_name=APP, user_id=USER)
        message = _message(api, "What is the weather in Paris?")
        elapsed, _ = await _timed_turn(runner, session.id, message, run_config)
        if i >= warmup:
            samples.append(elapsed)
    return samples


async def _model_cost(api: Api, model: str, stream: bool, warmup: int, reps: int) -> list[float]:
    """The fake model's own cost per call (same on both sides; not runtime overhead)."""
    llm = make_fake_llm_class(api)(model=model)
    request = _bare_request(api)
    samples: list[float] = []
    for i in range(warmup + reps):
        start = perf_counter()
        async for _ in llm.generate_content_async(request, stream=stream):
            pass
        if i >= warmup:
            samples.append((perf_counter() - start) * 1e6)
    return samples


def _bare_request(api: Api) -> Any:
    if api.name == "adk":
        from google.adk.models import LlmRequest
    else:
        from eventide import LlmRequest
    return LlmRequest(contents=[_message(api, "hi")])


# --- scenario 2: plain LLM turn ---


async def run_plain_turn(api: Api, p: dict[str, int]) -> Samples:
    svc = api.InMemorySessionService()
    runner = _runner(api, _llm_agent(api, "bench-text"), svc)
    await _check(runner, svc, api, ["text"])
    turns = await _fresh_session_turns(runner, svc, api, p["warmup"], p["reps"])
    model = await _model_cost(api, "bench-text", False, p["warmup"], p["reps"])
    return {"metrics": {"turn_us": turns, "fake_model_us": model}}


# --- scenario 3: tool-call turn ---


async def run_tool_turn(api: Api, p: dict[str, int]) -> Samples:
    metrics: dict[str, list[float]] = {}
    for metric, tool in (
        ("turn_async_tool_us", get_weather_async),
        ("turn_sync_tool_us", get_weather),
    ):
        svc = api.InMemorySessionService()
        runner = _runner(api, _llm_agent(api, "bench-tool", tools=[tool]), svc)
        await _check(runner, svc, api, ["call", "response", "text"])
        metrics[metric] = await _fresh_session_turns(runner, svc, api, p["warmup"], p["reps"])
    return {"metrics": metrics}


# --- scenario 4: streaming ---


async def run_streaming(api: Api, p: dict[str, int]) -> Samples:
    svc = api.InMemorySessionService()
    sse = api.RunConfig(streaming_mode=api.StreamingMode.SSE)
    runner_n = _runner(api, _llm_agent(api, f"bench-stream-{STREAM_CHUNKS}"), svc)
    runner_0 = _runner(api, _llm_agent(api, "bench-stream-0"), svc)
    await _check(runner_n, svc, api, ["partial"] * STREAM_CHUNKS + ["text"], sse)
    await _check(runner_0, svc, api, ["text"], sse)
    turns: list[float] = []
    per_partial: list[float] = []
    for i in range(p["warmup"] + p["reps"]):
        if i == p["warmup"]:
            gc.collect()
        times = {}
        # Alternate which turn goes first so drift does not favour one of the pair.
        order = (runner_n, runner_0) if i % 2 else (runner_0, runner_n)
        for runner in order:
            session = await svc.create_session(app_name=APP, user_id=USER)
            times[id(runner)], _ = await _timed_turn(runner, session.id, _message(api, "go"), sse)
        if i >= p["warmup"]:
            turns.append(times[id(runner_n)])
            per_partial.append((times[id(runner_n)] - times[id(runner_0)]) / STREAM_CHUNKS)
    model = await _model_cost(api, f"bench-stream-{STREAM_CHUNKS}", True, p["warmup"], p["reps"])
    per_chunk = [sample / STREAM_CHUNKS for sample in model]
    return {
        "metrics": {
            "stream_turn_us": turns,
            "per_partial_us": per_partial,
            "fake_model_per_chunk_us": per_chunk,
        }
    }


# --- scenario 5: a custom agent committing 1,000 state events ---


def _counter_agent(api: Api, n_events: int) -> Any:
    event_cls = api.Event
    actions_cls = api.EventActions

    class CounterAgent(api.BaseAgent):  # type: ignore[misc, name-defined]
        """Yields ``n_events`` events, each setting one state key."""

        n_events: int = 1000

        async def _run_async_impl(self, ctx: Any) -> Any:
            for i in range(self.n_events):
                yield event_cls(
                    author=self.name,
                    invocation_id=ctx.invocation_id,
                    actions=actions_cls(state_delta={"counter": i}),
                )

    return CounterAgent(name="counter", n_events=n_events)


async def _state_events(api: Api, svc: Any, warmup: int, reps: int) -> list[float]:
    # Warm-up turns exercise the same code paths with fewer events: on google-adk's SQL
    # services a 1,000-event warm-up alone takes ~10 s and would dominate the run time.
    warm_runner = _runner(api, _counter_agent(api, WARMUP_STATE_EVENTS), svc)
    for _ in range(warmup):
        session = await svc.create_session(app_name=APP, user_id=USER)
        await _timed_turn(warm_runner, session.id, _message(api, "count"))
    runner = _runner(api, _counter_agent(api, STATE_EVENTS), svc)
    samples: list[float] = []
    gc.collect()
    for i in range(reps):
        session = await svc.create_session(app_name=APP, user_id=USER)
        elapsed, count = await _timed_turn(runner, session.id, _message(api, "count"))
        if count != STATE_EVENTS:
            raise ScenarioMismatch(f"{api.name}: {count} events yielded, expected {STATE_EVENTS}")
        if i == 0:
            stored = await svc.get_session(app_name=APP, user_id=USER, session_id=session.id)
            if stored.state.get("counter") != STATE_EVENTS - 1 or len(stored.events) != count + 1:
                raise ScenarioMismatch(
                    f"{api.name}: stored session has state {stored.state!r} and "
                    f"{len(stored.events)} events; expected counter={STATE_EVENTS - 1} and "
                    f"{count + 1} events"
                )
        samples.append(elapsed / STATE_EVENTS)
    return samples


def _agent_code_per_event(api: Api, warmup: int, reps: int) -> list[float]:
    """What the agent's own code costs per event (building Event and EventActions), with no
    runtime around it: subtract it from the per-event figures to get the runtime's share."""
    event_cls, actions_cls = api.Event, api.EventActions
    samples: list[float] = []
    for i in range(warmup + reps):
        start = perf_counter()
        for n in range(STATE_EVENTS):
            event_cls(
                author="counter",
                invocation_id="e-1",
                actions=actions_cls(state_delta={"counter": n}),
            )
        if i >= warmup:
            samples.append((perf_counter() - start) * 1e6 / STATE_EVENTS)
    return samples


async def run_state_events(api: Api, p: dict[str, int]) -> Samples:
    metrics: dict[str, list[float]] = {}
    skipped: dict[str, str] = {}
    metrics["agent_code_per_event_us"] = _agent_code_per_event(api, p["warmup"], p["reps"])
    metrics["memory_per_event_us"] = await _state_events(
        api, api.InMemorySessionService(), p["warmup"], p["reps"]
    )
    for backend in ("sqlite", "sqlite_full", "postgres"):
        async with _sql_service(api, backend) as (svc, reason):
            if svc is None:
                skipped[f"{backend}_per_event_us"] = reason
                continue
            metrics[f"{backend}_per_event_us"] = await _state_events(
                api, svc, p["sql_warmup"], p["sql_reps"]
            )
    return {"metrics": metrics, "skipped": skipped}


class _sql_service:  # lower-case: used as `async with _sql_service(...)`, like a function
    """A fresh SQL session service on SQLite (a new file) or PostgreSQL (a new database).

    Yields ``(service, "")`` or ``(None, reason)`` when the backend is unavailable.
    """

    def __init__(self, api: Api, backend: str) -> None:
        self.api = api
        self.backend = backend
        self.svc: Any = None
        self.tmp: tempfile.TemporaryDirectory[str] | None = None
        self.pg_admin_url = ""
        self.pg_db = ""

    async def __aenter__(self) -> tuple[Any, str]:
        api = self.api
        if api.sql_session_service is None:
            return None, f"no SQL session service: {api.sql_unavailable_reason}"
        options: dict[str, Any] = {}
        if self.backend == "sqlite_full":
            if api.name != "eventide":
                return None, (
                    "no such setting; google-adk's SQLite runs with SQLite's defaults "
                    "(rollback journal, synchronous=FULL): compare with its SQLite row"
                )
            options["synchronous"] = "FULL"
        if self.backend.startswith("sqlite"):
            self.tmp = tempfile.TemporaryDirectory(prefix="eventide-bench-")
            url = f"sqlite+aiosqlite:///{self.tmp.name}/sessions.db"
        else:
            try:
                url = await self._create_pg_database()
            except (OSError, ImportError) as exc:
                return None, f"PostgreSQL unavailable: {exc}"
            except Exception as exc:  # asyncpg's errors have no common importable base here
                return None, f"PostgreSQL unavailable: {type(exc).__name__}: {exc}"
        self.svc = api.sql_session_service(url, **options)
        return self.svc, ""

    async def __aexit__(self, *exc_info: object) -> None:
        if self.svc is not None:
            await self.svc.close()
        if self.pg_db:
            import asyncpg

            conn = await asyncpg.connect(self.pg_admin_url)
            try:
                await conn.execute(f'DROP DATABASE IF EXISTS "{self.pg_db}" WITH (FORCE)')
            finally:
                await conn.close()
        if self.tmp is not None:
            self.tmp.cleanup()

    async def _create_pg_database(self) -> str:
        import asyncpg

        base = os.environ.get("EVENTIDE_PG_URL", DEFAULT_PG_URL)
        parts = urlsplit(base)
        self.pg_admin_url = urlunsplit(parts._replace(scheme="postgresql"))
        name = f"eventide_bench_{self.api.name}_{os.getpid()}"
        conn = await asyncio.wait_for(asyncpg.connect(self.pg_admin_url), timeout=5)
        try:
            await conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
            await conn.execute(f'CREATE DATABASE "{name}"')
        finally:
            await conn.close()
        self.pg_db = name
        return urlunsplit(parts._replace(scheme="postgresql+asyncpg", path=f"/{name}"))


# --- scenario 6: 1,000 concurrent tool-call turns ---


async def run_concurrent(api: Api, p: dict[str, int]) -> Samples:
    svc = api.InMemorySessionService()
    runner = _runner(api, _llm_agent(api, "bench-tool", tools=[get_weather_async]), svc)
    await _check(runner, svc, api, ["call", "response", "text"])
    sessions = [await svc.create_session(app_name=APP, user_id=USER) for _ in range(p["sessions"])]
    message = _message(api, "What is the weather in Paris?")

    async def turn(session_id: str) -> int:
        return len(await _collect(runner, session_id, message))

    gc.collect()
    rss_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    start = perf_counter()
    counts = await asyncio.gather(*(turn(s.id) for s in sessions))
    wall_ms = (perf_counter() - start) * 1e3
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    if set(counts) != {3}:
        raise ScenarioMismatch(f"{api.name}: concurrent turns yielded {sorted(set(counts))} events")
    return {
        "metrics": {
            "wall_ms": [wall_ms],
            "peak_rss_mb": [peak],
            "rss_growth_mb": [max(peak - rss_before, 0.0)],
        },
        "info": {"sessions": p["sessions"]},
    }


# --- scenario 7: history growth ---


async def _history(api: Api, svc: Any, turns: int) -> tuple[list[float], list[float], float]:
    runner = _runner(api, _llm_agent(api, "bench-text"), svc)
    warm = await svc.create_session(app_name=APP, user_id=USER)
    for _ in range(3):
        await _timed_turn(runner, warm.id, _message(api, "warm up"))
    session = await svc.create_session(app_name=APP, user_id=USER)
    gc.collect()
    latencies = []
    for i in range(turns):
        elapsed, count = await _timed_turn(runner, session.id, _message(api, f"turn {i}"))
        if count != 1:
            raise ScenarioMismatch(f"{api.name}: turn {i} yielded {count} events, expected 1")
        latencies.append(elapsed)
    first, last = latencies[:10], latencies[-10:]
    return first, last, _median(last) / _median(first)


async def run_history(api: Api, p: dict[str, int]) -> Samples:
    metrics: dict[str, list[float]] = {}
    skipped: dict[str, str] = {}
    first, last, growth = await _history(api, api.InMemorySessionService(), p["turns"])
    metrics.update(memory_first10_us=first, memory_last10_us=last, memory_growth_x=[growth])
    async with _sql_service(api, "sqlite") as (svc, reason):
        if svc is None:
            for name in ("sqlite_first10_us", "sqlite_last10_us", "sqlite_growth_x"):
                skipped[name] = reason
        else:
            first, last, growth = await _history(api, svc, p["turns"])
            metrics.update(sqlite_first10_us=first, sqlite_last10_us=last, sqlite_growth_x=[growth])
    return {"metrics": metrics, "skipped": skipped, "info": {"turns": p["turns"]}}


def _median(values: list[float]) -> float:
    ordered = sorted(values)
    mid = len(ordered) // 2
    return ordered[mid] if len(ordered) % 2 else (ordered[mid - 1] + ordered[mid]) / 2


# --- the catalogue ---

SCENARIOS: dict[int, Scenario] = {
    1: Scenario(
        number=1,
        title="cold import of the core API (fresh interpreter)",
        metrics=(
            Metric(name="import_ms", unit="ms", title="import", goal=200, adk_reference=957),
            Metric(name="process_ms", unit="ms", title="interpreter + import, wall"),
            Metric(name="peak_rss_mb", unit="MB", title="peak RSS after import", adk_reference=64),
        ),
        full={"rounds": 8},
        quick={"rounds": 3},
    ),
    2: Scenario(
        number=2,
        title="plain LLM turn (fresh session each time)",
        metrics=(
            Metric(name="turn_us", unit="us", title="turn", goal=150, adk_reference=2800),
            Metric(name="fake_model_us", unit="us", title="fake model alone (not runtime)"),
        ),
        full={"rounds": 3, "warmup": 20, "reps": 200},
        quick={"rounds": 1, "warmup": 3, "reps": 20},
        run=run_plain_turn,
    ),
    3: Scenario(
        number=3,
        title="tool-call turn (call, tool, answer)",
        metrics=(
            Metric(
                name="turn_async_tool_us",
                unit="us",
                title="turn, async tool",
                goal=300,
                adk_reference=4900,
            ),
            Metric(
                name="turn_sync_tool_us",
                unit="us",
                title="turn, sync tool",
                goal=300,
                adk_reference=4900,
            ),
        ),
        full={"rounds": 3, "warmup": 20, "reps": 150},
        quick={"rounds": 1, "warmup": 3, "reps": 20},
        run=run_tool_turn,
    ),
    4: Scenario(
        number=4,
        title=f"streaming (SSE): {STREAM_CHUNKS} partial chunks then the final",
        metrics=(
            Metric(name="stream_turn_us", unit="us", title="streamed turn"),
            Metric(
                name="per_partial_us",
                unit="us",
                title="per partial event",
                goal=10,
                adk_reference=249,
            ),
            Metric(
                name="fake_model_per_chunk_us",
                unit="us",
                title="fake model alone per chunk (inside the figure above, not runtime)",
            ),
        ),
        full={"rounds": 3, "warmup": 3, "reps": 20},
        quick={"rounds": 1, "warmup": 1, "reps": 4},
        run=run_streaming,
    ),
    5: Scenario(
        number=5,
        title=f"custom agent: {STATE_EVENTS} events with a one-key state_delta",
        metrics=(
            Metric(
                name="memory_per_event_us",
                unit="us",
                title="per event, in memory",
                goal=5,
                adk_reference=88,
            ),
            Metric(
                name="sqlite_per_event_us",
                unit="us",
                title="per event, SQLite",
                goal=100,
                adk_reference=2700,
            ),
            Metric(
                name="sqlite_full_per_event_us",
                unit="us",
                title="per event, SQLite synchronous=FULL",
            ),
            Metric(name="postgres_per_event_us", unit="us", title="per event, PostgreSQL"),
            Metric(
                name="agent_code_per_event_us",
                unit="us",
                title="agent's own code per event (Event + EventActions), no runtime",
            ),
        ),
        full={"rounds": 3, "warmup": 3, "reps": 8, "sql_warmup": 2, "sql_reps": 1},
        quick={"rounds": 1, "warmup": 1, "reps": 3, "sql_warmup": 1, "sql_reps": 1},
        run=run_state_events,
    ),
    6: Scenario(
        number=6,
        title="concurrent sessions, each a tool-call turn (asyncio.gather)",
        metrics=(
            Metric(name="wall_ms", unit="ms", title="wall time", goal=500, adk_reference=7800),
            Metric(name="peak_rss_mb", unit="MB", title="peak RSS", goal=100, adk_reference=223),
            Metric(name="rss_growth_mb", unit="MB", title="RSS growth during the run"),
        ),
        full={"rounds": 3, "sessions": 1000},
        quick={"rounds": 1, "sessions": 100},
        run=run_concurrent,
    ),
    7: Scenario(
        number=7,
        title="history growth: turns in one session, last 10 vs first 10",
        metrics=(
            Metric(name="memory_first10_us", unit="us", title="memory, turns 1-10"),
            Metric(name="memory_last10_us", unit="us", title="memory, last 10 turns"),
            Metric(
                name="memory_growth_x",
                unit="x",
                title="memory, last/first",
                goal=1.5,
                adk_reference=18.8,
            ),
            Metric(name="sqlite_first10_us", unit="us", title="SQLite, turns 1-10"),
            Metric(name="sqlite_last10_us", unit="us", title="SQLite, last 10 turns"),
            Metric(name="sqlite_growth_x", unit="x", title="SQLite, last/first", goal=1.5),
        ),
        full={"rounds": 1, "turns": 500},
        quick={"rounds": 1, "turns": 60},
        run=run_history,
    ),
}
