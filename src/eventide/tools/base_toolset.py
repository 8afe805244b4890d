"""``BaseToolset``: a set of tools resolved per invocation (e.g. from an MCP server)."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from eventide.contexts import ReadonlyContext, ToolContext
    from eventide.models.llm_request import LlmRequest
    from eventide.tools.base_tool import BaseTool

__all__ = ["BaseToolset", "ToolPredicate"]

ToolPredicate = Callable[["BaseTool", "ReadonlyContext | None"], bool]


class BaseToolset(ABC):
    """A provider of tools, asked for its tools at each model call.

    Args:
        tool_filter: the tool names to offer, or a predicate ``(tool, context) -> bool``.
        tool_name_prefix: prepended (with ``_``) to every tool name, to avoid clashes.
    """

    def __init__(
        self,
        *,
        tool_filter: Sequence[str] | ToolPredicate | None = None,
        tool_name_prefix: str | None = None,
    ) -> None:
        self.tool_filter = tool_filter
        self.tool_name_prefix = tool_name_prefix

    @abstractmethod
    async def get_tools(self, readonly_context: ReadonlyContext | None = None) -> list[BaseTool]:
        """The tools to offer now, after filtering, under their own names."""

    async def get_tools_with_prefix(
        self, readonly_context: ReadonlyContext | None = None
    ) -> list[BaseTool]:
        """The tools of :meth:`get_tools` as the model sees them: with ``tool_name_prefix``,
        copies named ``<prefix>_<name>`` (the toolset's own tools keep their names)."""
        tools = await self.get_tools(readonly_context)
        prefix = self.tool_name_prefix
        if not prefix:
            return tools
        return [tool.with_name(f"{prefix}_{tool.name}") for tool in tools]

    async def process_llm_request(  # noqa: B027 - optional hook
        self, *, tool_context: ToolContext, llm_request: LlmRequest
    ) -> None:
        """Change each model request of an agent that has this toolset, before its tools
        declare themselves (e.g. add instructions about the toolset as a whole). Does
        nothing by default."""

    async def close(self) -> None:  # noqa: B027 - optional hook
        """Release the toolset's resources (connections, processes)."""

    def is_tool_selected(self, tool: BaseTool, context: ReadonlyContext | None) -> bool:
        """Whether ``tool`` passes ``tool_filter``."""
        selected = self.tool_filter
        if selected is None:
            return True
        if callable(selected):
            return selected(tool, context)
        return tool.name in selected
