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
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, cast

from eventide import types
from eventide.errors import ConfigurationError, UsageError
from eventide.tools.base_tool import BaseTool
from eventide.tools.function_tool import FunctionTool, strip_titles

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


# Parameters of a LangChain tool's ``_run`` that LangChain itself fills, never the model.
_LANGCHAIN_PLUMBING = frozenset({"run_manager", "callbacks", "config"})


def _langchain_shaped_function(tool: Any) -> Callable[..., Any]:
    """The ``_run`` (else ``run``) method of a tool shaped like a LangChain tool but not a
    ``langchain_core`` instance, with LangChain's own parameters hidden from the model."""
    method: Callable[..., Any] = getattr(tool, "_run", None) or tool.run
    signature = inspect.signature(method)
    kept = [
        parameter
        for parameter in signature.parameters.values()
        if parameter.name not in _LANGCHAIN_PLUMBING
        and parameter.kind not in (parameter.VAR_POSITIONAL, parameter.VAR_KEYWORD)
    ]

    is_async = inspect.iscoroutinefunction(method)

    async def call(**kwargs: Any) -> Any:
        if is_async:
            return await method(**kwargs)
        result = await asyncio.to_thread(method, **kwargs)  # a sync tool may block
        return await result if inspect.isawaitable(result) else result

    call.__signature__ = signature.replace(parameters=kept)  # type: ignore[attr-defined]
    call.__doc__ = inspect.getdoc(method)
    call.__name__ = str(getattr(tool, "name", "") or type(tool).__name__)
    return call


class LangchainTool(BaseTool):
    """A LangChain tool (``langchain_core.tools.BaseTool``, e.g. from ``@tool``) as a tool.

    As on google-adk, a tool shaped like a LangChain tool without being one (any object with
    a ``_run`` or ``run`` method, and optionally ``name``, ``description``, ``args_schema``
    and ``return_direct``) is accepted too: its arguments are read from ``args_schema`` or
    else from the method's signature, and it needs no ``langchain_core`` installed.
    ``return_direct=True`` ends the agent's turn with the tool's result (no model summary).

    Args:
        tool: the LangChain tool.
        name: the name the model calls it by (default: the tool's own).
        description: what it does, for the model (default: the tool's own).
    """

    def __init__(self, tool: Any, name: str | None = None, description: str | None = None) -> None:
        self._shaped: FunctionTool | None = None
        if not _is_langchain_instance(tool):
            if not callable(getattr(tool, "_run", None)) and not callable(
                getattr(tool, "run", None)
            ):
                _require("langchain_core", "langchain", "LangchainTool")
                raise UsageError(
                    "LangchainTool wraps a langchain_core.tools.BaseTool (e.g. a function "
                    "decorated with @tool) or an object with a 'run' or '_run' method; got "
                    f"{type(tool).__name__}."
                )
            self._shaped = FunctionTool(_langchain_shaped_function(tool))
        tool_name = name or str(getattr(tool, "name", "") or type(tool).__name__)
        tool_description = description or str(getattr(tool, "description", "") or "")
        super().__init__(name=tool_name, description=tool_description)
        self.tool = tool
        self.return_direct = bool(getattr(tool, "return_direct", False))

    def get_declaration(self) -> types.FunctionDeclaration:
        schema = getattr(self.tool, "args_schema", None)
        if self._shaped is not None and not schema:
            declared = self._shaped.get_declaration()
            return declared.model_copy(
                update={"name": self.name, "description": self.description or None}
            )
        return types.FunctionDeclaration(
            name=self.name,
            description=self.description or None,
            parameters_json_schema=_args_schema(schema),
        )

    async def run_async(self, *, args: dict[str, Any], tool_context: ToolContext) -> Any:
        if self._shaped is not None and getattr(self.tool, "args_schema", None):
            # The arguments are described by args_schema, not by the method's signature
            # (often ``run(**kwargs)``): passed as the model gave them.
            result = await self._shaped.func(**args)
        elif self._shaped is not None:
            result = await self._shaped.run_async(args=args, tool_context=tool_context)
        else:
            result = await self.tool.ainvoke(args)
        if self.return_direct and not _is_error(result):
            tool_context.actions.skip_summarization = True
        return result


def _is_error(result: object) -> bool:
    return isinstance(result, dict) and bool(cast("dict[str, Any]", result).get("error"))


def _is_langchain_instance(tool: Any) -> bool:
    if importlib.util.find_spec("langchain_core") is None:
        return False
    from langchain_core.tools import BaseTool as LangchainBaseTool

    return isinstance(tool, LangchainBaseTool)


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
