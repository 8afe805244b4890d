"""The top workflow's generator mode (workflow/top_drive.py): the graph loop runs in the task
that reads the Runner's events, a lone node's events are yielded from there, and only node
tasks (a fan-out) go through the commit channel."""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

from eventide import InMemoryRunner
from eventide.workflow import Workflow
from tests.workflow.helpers import outputs


async def test_a_chain_runs_in_the_task_reading_the_runner() -> None:
    """No task of the workflow's own: a lone plain-function node runs in the reader's task."""
    tasks: list[asyncio.Task[Any] | None] = []

    def first(node_input: Any) -> int:
        tasks.append(asyncio.current_task())
        return 1

    def second(node_input: int) -> int:
        tasks.append(asyncio.current_task())
        return node_input + 1

    runner = InMemoryRunner(Workflow(name="wf", edges=[("START", first, second)]), app_name="app")
    session = await runner.session_service.create_session(app_name="app", user_id="u")
    events = [
        e async for e in runner.run_async(user_id="u", session_id=session.id, new_message="go")
    ]
    assert outputs(events) == [("wf@1/first@1", 1), ("wf@1/second@1", 2)]
    assert tasks == [asyncio.current_task(), asyncio.current_task()]


async def test_a_lone_node_resumes_after_its_event_is_committed() -> None:
    """The next node sees the previous node's output event in the session."""
    seen: list[int] = []

    def first(node_input: Any) -> int:
        return 7

    def second(ctx: Any, node_input: int) -> int:
        seen.append(sum(1 for e in ctx.session.events if e.output == 7))
        return node_input

    runner = InMemoryRunner(Workflow(name="wf", edges=[("START", first, second)]), app_name="app")
    session = await runner.session_service.create_session(app_name="app", user_id="u")
    async for _ in runner.run_async(user_id="u", session_id=session.id, new_message="go"):
        pass
    assert seen == [1]


async def test_fan_out_nodes_run_in_tasks_of_their_own_and_are_cancelled_with_the_run() -> None:
    """Concurrent nodes still get tasks (their events come through the channel); cancelling
    the reader cancels them and waits for them to unwind."""
    started = asyncio.Event()
    unwound: list[str] = []
    tasks: set[asyncio.Task[Any] | None] = set()

    async def slow(node_input: Any) -> None:
        tasks.add(asyncio.current_task())
        started.set()
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            unwound.append("slow")
            raise

    async def quick(node_input: Any) -> int:
        tasks.add(asyncio.current_task())
        return 1

    runner = InMemoryRunner(Workflow(name="wf", edges=[("START", (slow, quick))]), app_name="app")
    session = await runner.session_service.create_session(app_name="app", user_id="u")
    events: list[Any] = []
    quick_done = asyncio.Event()

    async def consume() -> None:
        async for event in runner.run_async(user_id="u", session_id=session.id, new_message="go"):
            events.append(event)
            if event.output is not None:
                quick_done.set()

    reader = asyncio.create_task(consume())
    await asyncio.wait_for(started.wait(), 5)
    await asyncio.wait_for(quick_done.wait(), 5)
    reader.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await reader
    assert unwound == ["slow"]
    assert outputs(events) == [("wf@1/quick@1", 1)]
    assert len(tasks) == 2 and reader not in tasks
