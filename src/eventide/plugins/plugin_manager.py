"""``PluginManager``: runs a Runner's plugins' hooks in registration order.

The list of plugins overriding each hook is computed once, when the Runner is built, so a
hook no plugin overrides costs one empty-tuple check per call site.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from eventide._callbacks import call_chain
from eventide.errors import UsageError
from eventide.plugins.base_plugin import BasePlugin

__all__ = ["HOOKS", "PluginManager"]

HOOKS = (
    "on_user_message_callback",
    "before_run_callback",
    "on_event_callback",
    "after_run_callback",
    "before_agent_callback",
    "after_agent_callback",
    "before_model_callback",
    "after_model_callback",
    "on_model_error_callback",
    "before_tool_callback",
    "after_tool_callback",
    "on_tool_error_callback",
)


class PluginManager:
    """Holds a Runner's plugins and calls their hooks."""

    def __init__(self, plugins: Sequence[BasePlugin] = ()) -> None:
        self.plugins: tuple[BasePlugin, ...] = ()
        self._chains: dict[str, tuple[Callable[..., Any], ...]] = {}
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
            raise UsageError(f"Two plugins are named {plugin.name!r}; names must be unique.")

    def _build_chains(self) -> None:
        self._chains = {
            hook: tuple(
                getattr(p, hook)
                for p in self.plugins
                if getattr(type(p), hook) is not getattr(BasePlugin, hook)
            )
            for hook in HOOKS
        }

    def register_plugin(self, plugin: BasePlugin) -> None:
        """Add ``plugin`` after the others (its name must be new); it runs from the next
        hook call on."""
        self._check(plugin)
        self.plugins += (plugin,)
        self._build_chains()

    async def close(self) -> None:
        """Close every plugin, in order; each one's failure is raised after all are closed."""
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

    def has(self, hook: str) -> bool:
        """True when some plugin overrides ``hook``."""
        return bool(self._chains[hook])

    def chain(self, hook: str) -> tuple[Callable[..., Any], ...]:
        """The bound hook methods of the plugins that override ``hook``, in order."""
        return self._chains[hook]

    async def run(self, hook: str, /, **kwargs: Any) -> Any:
        """Call ``hook`` on each overriding plugin; the first non-None result wins."""
        chain = self._chains[hook]
        if not chain:
            return None
        return await call_chain(chain, **kwargs)

    def get_plugin(self, name: str) -> BasePlugin | None:
        """The plugin called ``name``, if any."""
        return next((p for p in self.plugins if p.name == name), None)
