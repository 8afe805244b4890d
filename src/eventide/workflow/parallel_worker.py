"""``ParallelWorker``: a node run once per item of a list input, the runs concurrent."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator
from typing import TYPE_CHECKING, Any

from eventide.errors import WorkflowDataError
from eventide.events import Event
from eventide.workflow.base_node import BaseNode

if TYPE_CHECKING:
    from eventide.node_context import Context

__all__ = ["ParallelWorker"]


class ParallelWorker(BaseNode):
    """Runs ``node`` on each item of its list input (at most ``max_parallel_workers`` at
    a time; no limit when None) and outputs the list of their outputs, in input order.

    Each item's run is a child of this node (``<this>@<run>/<node>@<i>``), so a resumed
    workflow replays the items that had finished."""

    node: BaseNode
    max_parallel_workers: int | None = None

    def __init__(self, node: BaseNode | None = None, /, **data: Any) -> None:
        if node is not None:
            data["node"] = node
        inner: Any = data["node"]
        data.setdefault("name", inner.name)
        data.setdefault("rerun_on_resume", True)
        super().__init__(**data)

    async def _run_impl(self, *, ctx: Context, node_input: Any) -> AsyncGenerator[Any, None]:
        if node_input is None:
            items: list[Any] = []
        elif isinstance(node_input, list | tuple):
            items = list(node_input)  # pyright: ignore[reportUnknownArgumentType]
        else:
            raise WorkflowDataError(
                f"Parallel worker {self.name!r} runs once per item of a list, got "
                f"{type(node_input).__name__}: make the node before it output a list."
            )
        limit = self.max_parallel_workers
        gate = asyncio.Semaphore(limit) if limit else None

        async def one(index: int, item: Any) -> Any:
            if gate is None:
                return await ctx.run_node(self.node, item, run_id=str(index + 1))
            async with gate:
                return await ctx.run_node(self.node, item, run_id=str(index + 1))

        async with asyncio.TaskGroup() as group:
            tasks = [group.create_task(one(i, item)) for i, item in enumerate(items)]
        yield Event(output=[task.result() for task in tasks])
