"""A plain or async function node without a confirmation runs in one generator of its own
(not ``BaseNode.run`` around ``_run_impl``): what it commits must be what the two-generator
path commits, checked here against a subclass that keeps that path."""

from __future__ import annotations

from collections.abc import AsyncGenerator
from typing import Any, cast

import pytest
from pydantic import BaseModel

from eventide import Context
from eventide.workflow import FunctionNode, JoinNode, Workflow
from eventide.workflow.base_node import BaseNode
from tests.workflow.helpers import outputs, play


class Order(BaseModel):
    item: str
    count: int


class Priced(BaseModel):
    item: str
    total: float


def order(node_input: Any) -> dict[str, Any]:
    return {"item": "tea", "count": 3}


def price(node_input: Order) -> Priced:
    return Priced(item=node_input.item, total=node_input.count * 1.5)


async def price_async(node_input: Order) -> Priced:
    return Priced(item=node_input.item, total=node_input.count * 2.0)


def nothing(node_input: Order) -> None:
    return None


class Wrapped(FunctionNode):
    """The same function through ``BaseNode.run`` and ``_run_impl`` (the general path)."""

    async def _run_impl(self, *, ctx: Context, node_input: Any) -> AsyncGenerator[Any, None]:
        async for item in super()._run_impl(ctx=ctx, node_input=node_input):
            yield item


def _workflow(make: type[FunctionNode]) -> Workflow:
    nodes = (make(func=price), make(func=price_async), make(func=nothing))
    return Workflow(name="wf", edges=[("START", order, nodes, JoinNode(name="join"))])


async def test_a_plain_function_nodes_events_match_the_general_paths() -> None:
    direct, _ = await play(_workflow(FunctionNode), "go")
    general, _ = await play(_workflow(Wrapped), "go")
    got = outputs(direct)
    assert got == outputs(general)
    by_path = dict(got)
    # The input converted to the annotated model, the output checked against the return's
    # (and committed as plain data).
    assert by_path["wf@1/price@1"] == {"item": "tea", "total": 4.5}
    assert by_path["wf@1/price_async@1"] == {"item": "tea", "total": 6.0}
    assert "wf@1/nothing@1" not in by_path  # None: no output event
    shapes = [(e.author, e.node_info.path, e.output is None) for e in direct]
    assert shapes == [(e.author, e.node_info.path, e.output is None) for e in general]


async def test_only_plain_and_async_functions_without_confirmation_skip_base_run() -> None:
    ctx = cast(Any, None)
    plain = FunctionNode(func=price).run(ctx=ctx, node_input={})
    assert type(plain).__name__ == "_OneCall"
    await plain.aclose()
    confirmed = FunctionNode(func=price, require_confirmation=True, rerun_on_resume=True).run(
        ctx=ctx, node_input={}
    )
    assert cast(Any, confirmed).ag_code is vars(BaseNode)["run"].__code__
    await confirmed.aclose()


async def test_a_plain_function_nodes_run_closed_before_it_starts_never_calls() -> None:
    calls: list[Any] = []

    def record(node_input: Any) -> int:
        calls.append(node_input)
        return 1

    run = FunctionNode(func=record).run(ctx=cast(Any, None), node_input="go")
    await run.aclose()
    with pytest.raises(StopAsyncIteration):
        await run.__anext__()
    assert calls == []
