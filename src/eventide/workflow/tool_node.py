"""``ToolNode``: a tool (any ``BaseTool``) as a workflow node.

The node's input is the tool's arguments (a dict; anything else is passed as
``{"node_input": value}``); the tool's result is the node's output.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator
from typing import TYPE_CHECKING, Any

from eventide.events import Event
from eventide.tools.base_tool import BaseTool
from eventide.workflow.base_node import BaseNode
from eventide.workflow.node_data import to_plain

if TYPE_CHECKING:
    from eventide.node_context import Context

__all__ = ["ToolNode"]


class ToolNode(BaseNode):
    """Calls ``tool`` with the node's input as its arguments."""

    tool: BaseTool

    def __init__(self, tool: BaseTool | None = None, /, **data: Any) -> None:
        if tool is not None:
            data["tool"] = tool
        found: Any = data.get("tool")
        data.setdefault("name", found.name)
        data.setdefault("description", found.description)
        super().__init__(**data)

    async def _run_impl(self, *, ctx: Context, node_input: Any) -> AsyncGenerator[Any, None]:
        if isinstance(node_input, dict):
            args: dict[str, Any] = dict(node_input)  # pyright: ignore[reportUnknownArgumentType]
        elif node_input is None:
            args = {}
        else:
            args = {"node_input": node_input}
        result = await self.tool.run_async(args=args, tool_context=ctx)
        if not ctx.actions.is_empty() and result is None:
            yield Event()
        if result is not None:
            yield Event(output=to_plain(result))
