"""Tools of other frameworks as Eventide tools: ``LangchainTool`` and ``CrewaiTool``.

Each wraps one tool object of LangChain (``langchain_core.tools.BaseTool``, the
``eventide[langchain]`` extra) or CrewAI (``crewai.tools.BaseTool``, the ``eventide[crewai]``
extra): the model sees the wrapped tool's name, description and argument schema, and a call
runs the tool (off the event loop when it is synchronous).
"""

from __future__ import annotations

import asyncio
import importlib.util
import inspect
from typing import TYPE_CHECKING, Any, cast

from eventide import types
from eventide.errors import ConfigurationError, UsageError
from eventide.tools.base_tool import BaseTool
from eventide.tools.function_tool import strip_titles

if TYPE_CHECKING:
    from eventide.contexts import ToolContext

__all__ = ["CrewaiTool", "LangchainTool"]


def _require(module: str, extra: str, what: str) -> None:
    if importlib.util.find_spec(module) is None:
        raise ConfigurationError(
            f"{what} needs the {module.split('.')[0]!r} package, which is not installed. "
            f"Install it with `pip install 'eventide[{extra}]'`."
        )


def _args_schema(schema: Any) -> dict[str, Any]:
    """A JSON Schema of a tool's arguments from a pydantic model class or a dict."""
    if schema is None:
        return {"type": "object", "properties": {}}
    if isinstance(schema, dict):
        return cast("dict[str, Any]", schema)
    json_schema = getattr(schema, "model_json_schema", None)
    if callable(json_schema):
        result = json_schema()
        assert isinstance(result, dict)
        schema_dict = cast("dict[str, Any]", result)
        strip_titles(schema_dict)
        return schema_dict
    raise UsageError(
        f"The wrapped tool's args_schema must be a pydantic model or a dict; got {schema!r}."
    )


class LangchainTool(BaseTool):
    """A LangChain tool (``langchain_core.tools.BaseTool``, e.g. from ``@tool``) as a tool.

    Args:
        tool: the LangChain tool.
        name: the name the model calls it by (default: the tool's own).
        description: what it does, for the model (default: the tool's own).
    """

    def __init__(self, tool: Any, name: str | None = None, description: str | None = None) -> None:
        _require("langchain_core", "langchain", "LangchainTool")
        from langchain_core.tools import BaseTool as LangchainBaseTool

        if not isinstance(tool, LangchainBaseTool):
            raise UsageError(
                "LangchainTool wraps a langchain_core.tools.BaseTool (e.g. a function "
                f"decorated with @tool); got {type(tool).__name__}."
            )
        super().__init__(name=name or tool.name, description=description or tool.description or "")
        self.tool = tool

    def get_declaration(self) -> types.FunctionDeclaration:
        return types.FunctionDeclaration(
            name=self.name,
            description=self.description or None,
            parameters_json_schema=_args_schema(self.tool.args_schema),
        )

    async def run_async(self, *, args: dict[str, Any], tool_context: ToolContext) -> Any:
        return await self.tool.ainvoke(args)


class CrewaiTool(BaseTool):
    """A CrewAI tool (``crewai.tools.BaseTool``) as a tool.

    Args:
        tool: the CrewAI tool (anything with ``name``, ``description``, ``args_schema`` and
            ``run(**kwargs)``).
        name: the name the model calls it by (default: the tool's own, spaces as ``_``).
        description: what it does, for the model (default: the tool's own).
    """

    def __init__(self, tool: Any, *, name: str = "", description: str = "") -> None:
        if not callable(getattr(tool, "run", None)):
            _require("crewai", "crewai", "CrewaiTool")
            raise UsageError(
                f"CrewaiTool wraps a crewai.tools.BaseTool; got {type(tool).__name__}."
            )
        tool_name = name or str(getattr(tool, "name", "") or type(tool).__name__)
        super().__init__(
            name=tool_name.replace(" ", "_").lower() if not name else tool_name,
            description=description or str(getattr(tool, "description", "") or ""),
        )
        self.tool = tool

    def get_declaration(self) -> types.FunctionDeclaration:
        return types.FunctionDeclaration(
            name=self.name,
            description=self.description or None,
            parameters_json_schema=_args_schema(getattr(self.tool, "args_schema", None)),
        )

    async def run_async(self, *, args: dict[str, Any], tool_context: ToolContext) -> Any:
        result = await asyncio.to_thread(self.tool.run, **args)
        if inspect.isawaitable(result):
            result = await result
        return result
