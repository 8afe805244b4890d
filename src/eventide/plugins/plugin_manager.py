"""``PluginManager``: a Runner's plugins behind the one ``BasePlugin`` interface.

The manager is itself a ``BasePlugin``: each hook method fans the call out to the plugins
that override that hook, in registration order, and the first non-None result wins and
stops the fan-out (the rule is :func:`eventide._callbacks.first_result`, written once).
Which plugins override which hook is worked out once, when the Runner is built, as one
chain per hook of the hook table (:data:`eventide.plugins.base_plugin.HOOKS`); a resolved
agent's chains start with these (:meth:`PluginManager.chain`), so a hook no plugin
overrides costs one empty-tuple check.

google-adk's names for the same fan-out, ``run_before_run_callback`` and the other
``run_<hook>`` methods, are here too, for code written against google-adk's
``PluginManager``: they differ only in that a plugin's exception is raised as a
``RuntimeError`` naming the plugin and the hook (the original chained), as google-adk does.
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, Any, TypeVar, TypeVarTuple, cast

from eventide._callbacks import ObservingEntry, first_result
from eventide.errors import UsageError
from eventide.plugins.base_plugin import (
    AFTER_AGENT,
    AFTER_MODEL,
    AFTER_RUN,
    AFTER_TOOL,
    BEFORE_AGENT,
    BEFORE_MODEL,
    BEFORE_RUN,
    BEFORE_TOOL,
    HOOKS,
    LLM_HOOKS,
    ON_EVENT,
    ON_MODEL_ERROR,
    ON_TOOL_ERROR,
    ON_USER_MESSAGE,
    BasePlugin,
    HookSpec,
)

if TYPE_CHECKING:
    from eventide import types
    from eventide.agents.base_agent import BaseAgent
    from eventide.contexts import CallbackContext, InvocationContext, ToolContext
    from eventide.events import Event
    from eventide.models.llm_request import LlmRequest
    from eventide.models.llm_response import LlmResponse
    from eventide.tools.base_tool import BaseTool

__all__ = ["PluginManager"]

_Args = TypeVarTuple("_Args")
_R = TypeVar("_R")
_BY_METHOD = {spec.method: spec for spec in HOOKS}


class PluginManager(BasePlugin):
    """Holds a Runner's plugins and calls their hooks (see the module docstring)."""

    def __init__(
        self, plugins: Sequence[BasePlugin] = (), *, close_timeout: float | None = None
    ) -> None:
        super().__init__("plugin_manager")
        self.close_timeout = close_timeout
        self.plugins: tuple[BasePlugin, ...] = ()
        for plugin in plugins:
            self._check(plugin)
            self.plugins += (plugin,)
        self._build_chains()

    def _check(self, plugin: BasePlugin) -> None:
        if not isinstance(plugin, BasePlugin):
            raise UsageError(
                f"Plugins must subclass eventide.BasePlugin; got {type(plugin).__name__}."
            )
        if any(p.name == plugin.name for p in self.plugins):
            # google-adk's wording first (apps and tests match on it), then what to do.
            raise UsageError(
                f"Plugin with name '{plugin.name}' already registered. Plugin names must be "
                "unique: give the new one another name."
            )

    def register_plugin(self, plugin: BasePlugin) -> None:
        """Add ``plugin`` after the others (its name must be new); its hooks run from the
        next call on."""
        self._check(plugin)
        self.plugins += (plugin,)
        self._build_chains()

    async def close(self) -> None:
        """Close every plugin, in order (each within ``close_timeout`` seconds, when set).

        Raises:
            RuntimeError: once all were closed, when some failed or timed out; the message
                names each with its error's class (google-adk's wording), the first error
                is chained.
        """
        failures: list[tuple[str, Exception]] = []
        for plugin in self.plugins:
            try:
                await asyncio.wait_for(plugin.close(), self.close_timeout)
            except Exception as exc:  # TimeoutError included
                failures.append((plugin.name, exc))
        if failures:
            listed = "; ".join(
                f"'{name}': {type(exc).__name__}" + (f" ({exc})" if str(exc) else "")
                for name, exc in failures
            )
            raise RuntimeError(f"Failed to close plugins: {listed}") from failures[0][1]

    def _build_chains(self) -> None:
        self._chains: dict[HookSpec[*tuple[Any, ...], Any], tuple[Any, ...]] = {
            spec: tuple(
                (ObservingEntry if plugin.observes_only else functools.partial)(
                    spec.call_plugin, plugin
                )
                for plugin in self.plugins
                if getattr(type(plugin), spec.name) is not spec.method
            )
            for spec in HOOKS
        }
        # Whether resolving an LlmAgent needs to build hook chains for plugins at all.
        self.has_model_or_tool_hooks = any(self._chains[spec] for spec in LLM_HOOKS)

    def chain(
        self, spec: HookSpec[*_Args, _R]
    ) -> tuple[Callable[[*_Args], Awaitable[_R | None]], ...]:
        """The plugins' entries of a hook's chain, in registration order (empty when no
        plugin overrides it)."""
        return cast("tuple[Callable[[*_Args], Awaitable[_R | None]], ...]", self._chains[spec])

    def overrides(self, hook: Callable[..., Any]) -> bool:
        """True when some plugin overrides ``hook``, a ``BasePlugin`` method such as
        ``BasePlugin.on_event_callback`` (callers skip building the arguments otherwise)."""
        return bool(self._chains[_BY_METHOD[hook]])

    def get_plugin(self, name: str) -> BasePlugin | None:
        """The plugin called ``name``, if any."""
        return next((p for p in self.plugins if p.name == name), None)

    # --- the hooks, fanned out (BasePlugin's signatures) ---
    async def on_user_message_callback(
        self, *, invocation_context: InvocationContext, user_message: types.Content
    ) -> types.Content | None:
        chain = self.chain(ON_USER_MESSAGE)
        return await first_result(chain, invocation_context, user_message) if chain else None

    async def before_run_callback(
        self, *, invocation_context: InvocationContext
    ) -> types.Content | None:
        chain = self.chain(BEFORE_RUN)
        return await first_result(chain, invocation_context) if chain else None

    async def on_event_callback(
        self, *, invocation_context: InvocationContext, event: Event
    ) -> Event | None:
        chain = self.chain(ON_EVENT)
        return await first_result(chain, invocation_context, event)

    async def after_run_callback(self, *, invocation_context: InvocationContext) -> None:
        chain = self.chain(AFTER_RUN)
        if chain:
            await first_result(chain, invocation_context)

    async def before_agent_callback(
        self, *, agent: BaseAgent, callback_context: CallbackContext
    ) -> types.Content | None:
        chain = self.chain(BEFORE_AGENT)
        return await first_result(chain, agent, callback_context)

    async def after_agent_callback(
        self, *, agent: BaseAgent, callback_context: CallbackContext
    ) -> types.Content | None:
        chain = self.chain(AFTER_AGENT)
        return await first_result(chain, agent, callback_context)

    async def before_model_callback(
        self, *, callback_context: CallbackContext, llm_request: LlmRequest
    ) -> LlmResponse | None:
        chain = self.chain(BEFORE_MODEL)
        return await first_result(chain, callback_context, llm_request)

    async def after_model_callback(
        self, *, callback_context: CallbackContext, llm_response: LlmResponse
    ) -> LlmResponse | None:
        chain = self.chain(AFTER_MODEL)
        return await first_result(chain, callback_context, llm_response)

    async def on_model_error_callback(
        self, *, callback_context: CallbackContext, llm_request: LlmRequest, error: Exception
    ) -> LlmResponse | None:
        chain = self.chain(ON_MODEL_ERROR)
        return await first_result(chain, callback_context, llm_request, error)

    async def before_tool_callback(
        self, *, tool: BaseTool, tool_args: dict[str, Any], tool_context: ToolContext
    ) -> dict[str, Any] | None:
        chain = self.chain(BEFORE_TOOL)
        return await first_result(chain, tool, tool_args, tool_context)

    async def after_tool_callback(
        self,
        *,
        tool: BaseTool,
        tool_args: dict[str, Any],
        tool_context: ToolContext,
        result: dict[str, Any],
    ) -> dict[str, Any] | None:
        chain = self.chain(AFTER_TOOL)
        return await first_result(chain, tool, tool_args, tool_context, result)

    async def on_tool_error_callback(
        self,
        *,
        tool: BaseTool,
        tool_args: dict[str, Any],
        tool_context: ToolContext,
        error: Exception,
    ) -> dict[str, Any] | None:
        chain = self.chain(ON_TOOL_ERROR)
        return await first_result(chain, tool, tool_args, tool_context, error)

    # --- google-adk's names (see the module docstring) ---
    async def _run(self, spec: HookSpec[*_Args, _R], *args: *_Args) -> _R | None:
        for entry in self.chain(spec):
            try:
                result = await entry(*args)
            except Exception as exc:
                plugin = cast("functools.partial[Any]", entry).args[0]
                raise RuntimeError(
                    f"Error in plugin '{plugin.name}' during the '{spec.name}' callback: {exc}"
                ) from exc
            if result is not None:
                return result
        return None

    async def run_on_user_message_callback(
        self, *, user_message: types.Content, invocation_context: InvocationContext
    ) -> types.Content | None:
        return await self._run(ON_USER_MESSAGE, invocation_context, user_message)

    async def run_before_run_callback(
        self, *, invocation_context: InvocationContext
    ) -> types.Content | None:
        return await self._run(BEFORE_RUN, invocation_context)

    async def run_after_run_callback(self, *, invocation_context: InvocationContext) -> None:
        await self._run(AFTER_RUN, invocation_context)

    async def run_on_event_callback(
        self, *, invocation_context: InvocationContext, event: Event
    ) -> Event | None:
        return await self._run(ON_EVENT, invocation_context, event)

    async def run_before_agent_callback(
        self, *, agent: BaseAgent, callback_context: CallbackContext
    ) -> types.Content | None:
        return await self._run(BEFORE_AGENT, agent, callback_context)

    async def run_after_agent_callback(
        self, *, agent: BaseAgent, callback_context: CallbackContext
    ) -> types.Content | None:
        return await self._run(AFTER_AGENT, agent, callback_context)

    async def run_before_tool_callback(
        self, *, tool: BaseTool, tool_args: dict[str, Any], tool_context: ToolContext
    ) -> dict[str, Any] | None:
        return await self._run(BEFORE_TOOL, tool, tool_args, tool_context)

    async def run_after_tool_callback(
        self,
        *,
        tool: BaseTool,
        tool_args: dict[str, Any],
        tool_context: ToolContext,
        result: dict[str, Any],
    ) -> dict[str, Any] | None:
        return await self._run(AFTER_TOOL, tool, tool_args, tool_context, result)

    async def run_on_tool_error_callback(
        self,
        *,
        tool: BaseTool,
        tool_args: dict[str, Any],
        tool_context: ToolContext,
        error: Exception,
    ) -> dict[str, Any] | None:
        return await self._run(ON_TOOL_ERROR, tool, tool_args, tool_context, error)

    async def run_before_model_callback(
        self, *, callback_context: CallbackContext, llm_request: LlmRequest
    ) -> LlmResponse | None:
        return await self._run(BEFORE_MODEL, callback_context, llm_request)

    async def run_after_model_callback(
        self, *, callback_context: CallbackContext, llm_response: LlmResponse
    ) -> LlmResponse | None:
        return await self._run(AFTER_MODEL, callback_context, llm_response)

    async def run_on_model_error_callback(
        self, *, callback_context: CallbackContext, llm_request: LlmRequest, error: Exception
    ) -> LlmResponse | None:
        return await self._run(ON_MODEL_ERROR, callback_context, llm_request, error)
