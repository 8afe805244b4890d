"""``AddToMemoryPlugin``: add the session to memory after every finished invocation."""

from __future__ import annotations

from typing import TYPE_CHECKING

from eventide.errors import ConfigurationError
from eventide.plugins.base_plugin import BasePlugin

if TYPE_CHECKING:
    from eventide import types
    from eventide.contexts import InvocationContext
    from eventide.memory.base_memory_service import BaseMemoryService

__all__ = ["AddToMemoryPlugin"]


class AddToMemoryPlugin(BasePlugin):
    """After each invocation, hand the session to the Runner's memory service.

    The plugin form of ``Runner(add_sessions_to_memory=True)``, for apps that configure
    behaviour through plugins (``App(plugins=[...])``). Re-adding a session re-indexes it,
    so each invocation leaves the memory matching the whole conversation so far.

    Args:
        name: the plugin's name (unique among a Runner's plugins).
    """

    def __init__(self, name: str = "add_to_memory") -> None:
        super().__init__(name)

    async def before_run_callback(
        self, *, invocation_context: InvocationContext
    ) -> types.Content | None:
        """Fail before the agent runs, not after, when there is no memory service."""
        _memory_of(invocation_context)
        return None

    async def after_run_callback(self, *, invocation_context: InvocationContext) -> None:
        """Add the invocation's session to the memory service."""
        await _memory_of(invocation_context).add_session_to_memory(invocation_context.session)


def _memory_of(invocation_context: InvocationContext) -> BaseMemoryService:
    memory = invocation_context.memory_service
    if memory is None:
        raise ConfigurationError(
            "AddToMemoryPlugin needs a memory service: pass memory_service=... to the Runner "
            "(InMemoryMemoryService() or SqlMemoryService(url))."
        )
    return memory
