"""Profile Eventide on scenarios 2, 3, 4 and 5 with cProfile; print the hot spots.

``python -m benchmarks.profile_eventide [--scenario 2,3,5] [--top 25] [--sort tottime]``.
Each scenario runs its warm-up unprofiled, then its measured loop under the profiler; the
listing gives each function's own time, cumulative time as a share of the profiled total,
and calls per turn, so costs can be read per event.
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import pstats
from typing import Any

from benchmarks import scenarios as sc
from benchmarks.frameworks import Api, load_api

TURNS = {2: 300, 3: 200, 4: 30, 5: 20}


async def _workload(api: Api, number: int, turns: int) -> tuple[Any, int]:
    """Build the scenario's runner; return a coroutine factory for one unit of work."""
    svc = api.InMemorySessionService()
    run_config = None
    if number == 2:
        runner = sc._runner(api, sc._llm_agent(api, "bench-text"), svc)
    elif number == 3:
        agent = sc._llm_agent(api, "bench-tool", tools=[sc.get_weather_async])
        runner = sc._runner(api, agent, svc)
    elif number == 4:
        runner = sc._runner(api, sc._llm_agent(api, f"bench-stream-{sc.STREAM_CHUNKS}"), svc)
        run_config = api.RunConfig(streaming_mode=api.StreamingMode.SSE)
    else:
        runner = sc._runner(api, sc._counter_agent(api, sc.STATE_EVENTS), svc)

    async def one() -> None:
        session = await svc.create_session(app_name=sc.APP, user_id=sc.USER)
        message = sc._message(api, "What is the weather?")
        await sc._timed_turn(runner, session.id, message, run_config)

    for _ in range(5):  # warm-up, unprofiled
        await one()
    return one, turns


def profile(number: int, top: int, sort: str) -> None:
    """Profile one scenario and print its top ``top`` functions."""
    api = load_api("eventide")
    loop = asyncio.new_event_loop()
    one, turns = loop.run_until_complete(_workload(api, number, TURNS[number]))

    async def many() -> None:
        for _ in range(turns):
            await one()

    profiler = cProfile.Profile()
    profiler.enable()
    loop.run_until_complete(many())
    profiler.disable()
    loop.close()
    stats = pstats.Stats(profiler)
    total = stats.total_tt  # type: ignore[attr-defined]
    unit = {5: f"turn of {sc.STATE_EVENTS} events", 4: "streamed turn"}.get(number, "turn")
    print(
        f"\n## scenario {number}: {turns} turns profiled, {total * 1e6 / turns:,.0f} us per {unit}"
    )
    print(f"| function | own % | cumulative % | calls per {unit} |")
    print("| --- | --- | --- | --- |")
    rows = []
    for (filename, line, name), (_cc, ncalls, tottime, cumtime, _callers) in stats.stats.items():  # type: ignore[attr-defined]
        rows.append((filename, line, name, ncalls, tottime, cumtime))
    key = 4 if sort == "tottime" else 5
    rows.sort(key=lambda r: r[key], reverse=True)
    for filename, line, name, ncalls, tottime, cumtime in rows[:top]:
        where = name if filename == "~" else f"{_short(filename)}:{line}({name})"
        where = where.replace(
            "<method 'validate_python' of 'pydantic_core._pydantic_core.SchemaValidator' objects>",
            "pydantic-core validate_python",
        )
        print(
            f"| {where} | {100 * tottime / total:.1f} | "
            f"{100 * cumtime / total:.1f} | {ncalls / turns:g} |"
        )


def _short(filename: str) -> str:
    for marker in ("site-packages/", "src/", "lib/python3.11/"):
        if marker in filename:
            return filename.split(marker, 1)[1]
    return filename


def main() -> None:
    """Parse the arguments and profile each scenario asked for."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--scenario", default="2,3,5")
    parser.add_argument("--top", type=int, default=25)
    parser.add_argument("--sort", choices=("tottime", "cumtime"), default="tottime")
    args = parser.parse_args()
    for number in (int(n) for n in args.scenario.split(",")):
        profile(number, args.top, args.sort)


if __name__ == "__main__":
    main()
