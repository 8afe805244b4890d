"""``PluginManager``: a Runner's plugins behind the one ``BasePlugin`` interface.

The manager is itself a ``BasePlugin``: each hook method fans the call out to the plugins
that override that hook, in registration order, and the first non-None result wins and
stops the fan-out (the rule is :func:`eventide._callbacks.call_chain`, written once). Which
plugins override which hook is worked out once, when the Runner is built, so a hook no
plugin overrides costs one empty-tuple check.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from eventide._callbacks import CallbackChain, call_chain
from eventide.errors import UsageError
from eventide.plugins.base_plugin import BasePlugin

if TYPE_CHECKING:
    from eventide import types
    from eventide.agents.base_agent import BaseAgent
    from eventide.contexts import CallbackContext, InvocationContext, ToolContext
    from eventide.events import Event
    from eventide.models.llm_request import LlmRequest
    from eventide.models.llm_response import LlmResponse
    from eventide.tools.base_tool import BaseTool

__all__ = ["PluginManager"]

_HOOKS: tuple[Callable[..., Any], ...] = (
    BasePlugin.on_user_message_callback,
    BasePlugin.before_run_callback,
    BasePlugin.on_event_callback,
    BasePlugin.after_run_callback,
    BasePlugin.before_agent_callback,
    BasePlugin.after_agent_callback,
    BasePlugin.before_model_callback,
    BasePlugin.after_model_callback,
    BasePlugin.on_model_error_callback,
    BasePlugin.before_tool_callback,
    BasePlugin.after_tool_callback,
    BasePlugin.on_tool_error_callback,
)


class PluginManager(BasePlugin):
    """Holds a Runner's plugins and calls their hooks (see the module docstring)."""

    def __init__(self, plugins: Sequence[BasePlugin] = ()) -> None:
        super().__init__("plugin_manager")
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
        """Close every plugin, in order; failures are raised once all are closed."""
        errors: list[Exception] = []
        for plugin in self.plugins:
            try:
                await plugin.close()
            except Exception as exc:
                errors.append(exc)
        if len(errors) == 1:
            raise errors[0]
        if errors:
            raise ExceptionGroup("Several plugins failed to close.", errors)

    def _build_chains(self) -> None:
        self._by_hook: dict[Callable[..., Any], CallbackChain] = {
            hook: tuple(
                getattr(p, hook.__name__)
                for p in self.plugins
                if getattr(type(p), hook.__name__) is not hook
            )
            for hook in _HOOKS
        }
        by_hook = self._by_hook
        self._on_user_message = by_hook[BasePlugin.on_user_message_callback]
        self._before_run = by_hook[BasePlugin.before_run_callback]
        self._on_event = by_hook[BasePlugin.on_event_callback]
        self._after_run = by_hook[BasePlugin.after_run_callback]
        self._before_agent = by_hook[BasePlugin.before_agent_callback]
        self._after_agent = by_hook[BasePlugin.after_agent_callback]
        self._before_model = by_hook[BasePlugin.before_model_callback]
        self._after_model = by_hook[BasePlugin.after_model_callback]
        self._on_model_error = by_hook[BasePlugin.on_model_error_callback]
        self._before_tool = by_hook[BasePlugin.before_tool_callback]
        self._after_tool = by_hook[BasePlugin.after_tool_callback]
        self._on_tool_error = by_hook[BasePlugin.on_tool_error_callback]

        # Whether resolving an LlmAgent needs to build hook chains for plugins at all.
        self.has_model_or_tool_hooks = bool(
            self._before_model
            or self._after_model
            or self._on_model_error
            or self._before_tool
            or self._after_tool
            or self._on_tool_error
        )

    def overrides(self, hook: Callable[..., Any]) -> bool:
        """True when some plugin overrides ``hook``, a ``BasePlugin`` method such as
        ``BasePlugin.on_event_callback`` (callers skip building the arguments otherwise)."""
        return bool(self._by_hook[hook])

    def get_plugin(self, name: str) -> BasePlugin | None:
        """The plugin called ``name``, if any."""
        return next((p for p in self.plugins if p.name == name), None)

    # --- the hooks, fanned out ---
    async def on_user_message_callback(
        self, *, invocation_context: InvocationContext, user_message: types.Content
    ) -> types.Content | None:
        if not self._on_user_message:  # the common case: no coroutine for an empty chain
            return None
        result: types.Content | None = await call_chain(
            self._on_user_message, invocation_context=invocation_context, user_message=user_message
        )
        return result

    async def before_run_callback(
        self, *, invocation_context: InvocationContext
    ) -> types.Content | None:
        if not self._before_run:
            return None
        result: types.Content | None = await call_chain(
            self._before_run, invocation_context=invocation_context
        )
        return result

    async def on_event_callback(
        self, *, invocation_context: InvocationContext, event: Event
    ) -> Event | None:
        result: Event | None = await call_chain(
            self._on_event, invocation_context=invocation_context, event=event
        )
        return result

    async def after_run_callback(self, *, invocation_context: InvocationContext) -> None:
        if not self._after_run:
            return
        await call_chain(self._after_run, invocation_context=invocation_context)

    async def before_agent_callback(
        self, *, agent: BaseAgent, callback_context: CallbackContext
    ) -> types.Content | None:
        result: types.Content | None = await call_chain(
            self._before_agent, agent=agent, callback_context=callback_context
        )
        return result

    async def after_agent_callback(
        self, *, agent: BaseAgent, callback_context: CallbackContext
    ) -> types.Content | None:
        result: types.Content | None = await call_chain(
            self._after_agent, agent=agent, callback_context=callback_context
        )
        return result

    async def before_model_callback(
        self, *, callback_context: CallbackContext, llm_request: LlmRequest
    ) -> LlmResponse | None:
        result: LlmResponse | None = await call_chain(
            self._before_model, callback_context=callback_context, llm_request=llm_request
        )
        return result

    async def after_model_callback(
        self, *, callback_context: CallbackContext, llm_response: LlmResponse
    ) -> LlmResponse | None:
        result: LlmResponse | None = await call_chain(
            self._after_model, callback_context=callback_context, llm_response=llm_response
        )
        return result

    async def on_model_error_callback(
        self, *, callback_context: CallbackContext, llm_request: LlmRequest, error: Exception
    ) -> LlmResponse | None:
        result: LlmResponse | None = await call_chain(
            self._on_model_error,
            callback_context=callback_context,
            llm_request=llm_request,
            error=error,
        )
        return result

    async def before_tool_callback(
        self, *, tool: BaseTool, tool_args: dict[str, Any], tool_context: ToolContext
    ) -> dict[str, Any] | None:
        result: dict[str, Any] | None = await call_chain(
            self._before_tool, tool=tool, tool_args=tool_args, tool_context=tool_context
        )
        return result

    async def after_tool_callback(
        self,
        *,
        tool: BaseTool,
        tool_args: dict[str, Any],
        tool_context: ToolContext,
        result: dict[str, Any],
    ) -> dict[str, Any] | None:
        replaced: dict[str, Any] | None = await call_chain(
            self._after_tool,
            tool=tool,
            tool_args=tool_args,
            tool_context=tool_context,
            result=result,
        )
        return replaced

    async def on_tool_error_callback(
        self,
        *,
        tool: BaseTool,
        tool_args: dict[str, Any],
        tool_context: ToolContext,
        error: Exception,
    ) -> dict[str, Any] | None:
        result: dict[str, Any] | None = await call_chain(
            self._on_tool_error,
            tool=tool,
            tool_args=tool_args,
            tool_context=tool_context,
            error=error,
        )
        return result
