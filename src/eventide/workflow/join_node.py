"""``JoinNode``: the fan-in of a workflow: runs once all its predecessors have finished."""

from __future__ import annotations

from collections.abc import AsyncGenerator
from typing import TYPE_CHECKING, Any

from eventide._fastpath import construct_trusted
from eventide.events import Event
from eventide.workflow.base_node import BaseNode
from eventide.workflow.node_data import validate_node_data

if TYPE_CHECKING:
    from eventide.node_context import Context

__all__ = ["JoinNode"]


class JoinNode(BaseNode):
    """Waits for every predecessor, then outputs ``{predecessor name: its output}``.

    With an ``input_schema``, each predecessor's output is validated against it.
    """

    @property
    def requires_all_predecessors(self) -> bool:
        return True

    @property
    def runs_inline(self) -> bool:
        return self.timeout is None  # no user code to keep apart

    async def run(self, *, ctx: Context, node_input: Any) -> AsyncGenerator[Event, None]:
        if self.input_schema is not None and isinstance(node_input, dict):
            inputs: dict[str, Any] = node_input  # pyright: ignore[reportUnknownVariableType]
            node_input = {k: validate_node_data(self.input_schema, v) for k, v in inputs.items()}
        async for event in super().run(ctx=ctx, node_input=node_input):
            yield event

    async def _run_impl(self, *, ctx: Context, node_input: Any) -> AsyncGenerator[Any, None]:
        yield construct_trusted(Event, {"output": node_input})  # output is Any
