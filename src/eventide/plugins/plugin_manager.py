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
        seen: set[str] = set()
        for plugin in plugins:
            if not isinstance(plugin, BasePlugin):
                raise UsageError(
                    f"Plugins must subclass eventide.BasePlugin; got {type(plugin).__name__}."
                )
            if plugin.name in seen:
                raise UsageError(f"Two plugins are named {plugin.name!r}; names must be unique.")
            seen.add(plugin.name)
        self.plugins: tuple[BasePlugin, ...] = tuple(plugins)
        self._chains: dict[str, tuple[Callable[..., Any], ...]] = {
            hook: tuple(
                getattr(p, hook)
                for p in self.plugins
                if getattr(type(p), hook) is not getattr(BasePlugin, hook)
            )
            for hook in HOOKS
        }

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
