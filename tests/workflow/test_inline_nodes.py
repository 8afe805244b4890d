"""A lone plain-function node runs in the graph loop's task (no task of its own): what a task
gave it must hold all the same, and its context builds its actions only when it uses them."""

from __future__ import annotations

import asyncio
import contextvars
from typing import Any

from eventide import Context
from eventide.workflow import Workflow
from tests.workflow.helpers import outputs, play

_seen: contextvars.ContextVar[str] = contextvars.ContextVar("seen", default="unset")


async def test_a_plain_function_node_keeps_its_context_variables_to_itself() -> None:
    """A chain's plain functions run one after another in the workflow's task; a variable one
    sets is not seen by the next, as when each ran in a task of its own."""

    def first(node_input: Any) -> str:
        before = _seen.get()
        _seen.set("first")
        return before

    def second(node_input: str) -> list[str]:
        return [node_input, _seen.get()]

    workflow = Workflow(name="wf", edges=[("START", first, second)])
    events, _ = await play(workflow, "go")
    assert outputs(events) == [("wf@1/first@1", "unset"), ("wf@1/second@1", ["unset", "unset"])]
    assert _seen.get() == "unset"


async def test_a_plain_function_returning_an_awaitable_awaits_it_in_its_own_context() -> None:
    def later(node_input: Any) -> Any:
        async def value() -> str:
            _seen.set("inner")
            await asyncio.sleep(0)
            return _seen.get()

        return value()

    def after(node_input: str) -> list[str]:
        return [node_input, _seen.get()]

    workflow = Workflow(name="wf", edges=[("START", later, after)])
    events, _ = await play(workflow, "go")
    assert outputs(events)[-1] == ("wf@1/after@1", ["inner", "unset"])


async def test_node_contexts_make_their_actions_on_first_use() -> None:
    """A node that writes no state leaves its context without actions; one that writes state
    gets them, and its output event carries the delta."""
    seen: dict[str, Any] = {}

    def reader(ctx: Context, node_input: Any) -> int:
        seen["reader"] = ctx.actions_if_any
        return 1

    def writer(ctx: Context, node_input: int) -> int:
        ctx.state["count"] = node_input + 1
        seen["writer"] = ctx.actions_if_any
        return node_input + 1

    workflow = Workflow(name="wf", edges=[("START", reader, writer)])
    events, state = await play(workflow, "go")
    assert seen["reader"] is None
    assert seen["writer"] is not None
    assert state["count"] == 2
    written = [e for e in events if e.node_info.path == "wf@1/writer@1"]
    assert [e.actions.state_delta for e in written] == [{"count": 2}]
