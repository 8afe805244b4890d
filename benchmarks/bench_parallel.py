"""Parallel fan-out throughput: a ``ParallelAgent`` with 100 branches, each yielding 100
state events, run through ``InMemoryRunner`` (issue 4's benchmark scenario).

Prints events committed per second (median of a few rounds) and checks that every event was
committed exactly once. Run: ``python -m benchmarks.bench_parallel [--branches N]
[--events N] [--rounds N] [--json] [--adk]``. ``--adk`` also runs the same scenario once on
google-adk (its ``ParallelAgent`` and ``InMemoryRunner``, when installed) and prints the
ratio.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import time
from collections.abc import AsyncGenerator
from typing import Any

from eventide import BaseAgent, Event, EventActions, InMemoryRunner, InvocationContext, types
from eventide.agents.parallel_agent import ParallelAgent


class _StateWriter(BaseAgent):
    """Yields ``count`` events, each setting state key ``<name>`` to 0, 1, ..."""

    count: int = 100

    async def _run_async_impl(self, ctx: InvocationContext) -> AsyncGenerator[Event, None]:
        for i in range(self.count):
            yield Event(
                invocation_id=ctx.invocation_id,
                author=self.name,
                branch=ctx.branch,
                actions=EventActions(state_delta={self.name: i}),
            )


async def one_round(branches: int, events_per_branch: int) -> float:
    """Run the fan-out once; return the elapsed seconds. Raises AssertionError when an event
    is missing, duplicated or out of its branch's order."""
    fan = ParallelAgent(
        name="fan",
        sub_agents=[_StateWriter(name=f"b{n}", count=events_per_branch) for n in range(branches)],
    )
    runner = InMemoryRunner(fan, app_name="bench")
    session = await runner.session_service.create_session(app_name="bench", user_id="u")
    message = types.Content(role="user", parts=[types.Part(text="go")])
    start = time.perf_counter()
    count = 0
    async for _ in runner.run_async(user_id="u", session_id=session.id, new_message=message):
        count += 1
    elapsed = time.perf_counter() - start

    stored = await runner.session_service.get_session(
        app_name="bench", user_id="u", session_id=session.id
    )
    assert stored is not None
    committed = stored.events[1:]  # after the user's message
    expected = branches * events_per_branch
    assert count == len(committed) == expected, (count, len(committed), expected)
    assert len({e.id for e in committed}) == expected, "an event was committed twice"
    seen: dict[str, int] = {}
    for event in committed:
        value = event.actions.state_delta[event.author]
        assert value == seen.get(event.author, -1) + 1, "a branch's events out of order"
        seen[event.author] = value
    assert stored.state == {f"b{n}": events_per_branch - 1 for n in range(branches)}
    return elapsed


async def one_adk_round(branches: int, events_per_branch: int) -> float:
    """The same fan-out on google-adk; returns the elapsed seconds (same exactly-once check).

    Only ADK's public API is used, as an ADK user would write it.
    """
    from google.adk.agents import BaseAgent as AdkBaseAgent
    from google.adk.agents import ParallelAgent as AdkParallelAgent
    from google.adk.events import Event as AdkEvent
    from google.adk.events import EventActions as AdkEventActions
    from google.adk.runners import InMemoryRunner as AdkInMemoryRunner
    from google.genai import types as genai_types

    class AdkStateWriter(AdkBaseAgent):
        count: int = 100

        async def _run_async_impl(self, ctx: Any) -> AsyncGenerator[Any, None]:
            for i in range(self.count):
                yield AdkEvent(
                    invocation_id=ctx.invocation_id,
                    author=self.name,
                    branch=ctx.branch,
                    actions=AdkEventActions(state_delta={self.name: i}),
                )

    fan = AdkParallelAgent(
        name="fan",
        sub_agents=[AdkStateWriter(name=f"b{n}", count=events_per_branch) for n in range(branches)],
    )
    runner = AdkInMemoryRunner(agent=fan, app_name="bench")
    session = await runner.session_service.create_session(app_name="bench", user_id="u")
    message = genai_types.Content(role="user", parts=[genai_types.Part(text="go")])
    start = time.perf_counter()
    async for _ in runner.run_async(user_id="u", session_id=session.id, new_message=message):
        pass
    elapsed = time.perf_counter() - start
    stored = await runner.session_service.get_session(
        app_name="bench", user_id="u", session_id=session.id
    )
    assert stored is not None
    committed = stored.events[1:]
    assert len({e.id for e in committed}) == len(committed) == branches * events_per_branch
    return elapsed


def main(argv: list[str] | None = None) -> int:
    """Run the rounds and print the figure."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--branches", type=int, default=100)
    parser.add_argument("--events", type=int, default=100, help="events per branch")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--adk", action="store_true", help="also run once on google-adk")
    args = parser.parse_args(argv)
    total = args.branches * args.events
    timings = [asyncio.run(one_round(args.branches, args.events)) for _ in range(args.rounds)]
    median = statistics.median(timings)
    result = {
        "scenario": "parallel_fan_out",
        "branches": args.branches,
        "events_per_branch": args.events,
        "events": total,
        "rounds": args.rounds,
        "median_seconds": round(median, 4),
        "events_per_second": round(total / median),
        "committed_exactly_once": True,
    }
    if args.adk:
        import warnings

        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)  # ADK's ParallelAgent notice
            adk_seconds = asyncio.run(one_adk_round(args.branches, args.events))
        result["adk_seconds"] = round(adk_seconds, 4)
        result["adk_events_per_second"] = round(total / adk_seconds)
        result["adk_over_eventide_time"] = round(adk_seconds / median, 1)
    if args.json:
        print(json.dumps(result))
    else:
        print(
            f"ParallelAgent {args.branches} branches x {args.events} state events = {total} "
            f"events: median {median:.3f} s over {args.rounds} rounds, "
            f"{total / median:,.0f} events/s, every event committed exactly once"
        )
        if args.adk:
            print(
                f"google-adk, same scenario, 1 round: {result['adk_seconds']} s, "
                f"{result['adk_events_per_second']:,} events/s "
                f"(takes {result['adk_over_eventide_time']}x Eventide's time)"
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
