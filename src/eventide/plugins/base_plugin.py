"""``BasePlugin``: hooks applied to every agent, model call and tool call of a Runner.

Override only the hooks you need; the Runner calls a hook only on plugins that override it.
Every hook may be ``async def`` or plain ``def``. A non-None result short-circuits exactly
like the agent-level callback of the same name, and plugins run before agents' own callbacks.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from eventide import types
    from eventide.agents.base_agent import BaseAgent
    from eventide.contexts import CallbackContext, InvocationContext, ToolContext
    from eventide.events import Event
    from eventide.models.llm_request import LlmRequest
    from eventide.models.llm_response import LlmResponse
    from eventide.tools.base_tool import BaseTool

__all__ = ["BasePlugin"]


class BasePlugin:
    """Base of plugins. ``name`` must be unique among a Runner's plugins."""

    def __init__(self, name: str) -> None:
        self.name = name

    # --- invocation hooks ---
    async def on_user_message_callback(
        self, *, invocation_context: InvocationContext, user_message: types.Content
    ) -> types.Content | None:
        """Before the user's message is stored; return Content to replace it."""
        return None

    async def before_run_callback(
        self, *, invocation_context: InvocationContext
    ) -> types.Content | None:
        """Before the root agent runs; return Content to answer with it and skip the run."""
        return None

    async def on_event_callback(
        self, *, invocation_context: InvocationContext, event: Event
    ) -> Event | None:
        """After an event is committed, before it goes upstream; return an Event to replace
        what the caller sees (the stored event is unchanged)."""
        return None

    async def after_run_callback(self, *, invocation_context: InvocationContext) -> None:
        """After the invocation's last event."""
        return None

    # --- agent hooks ---
    async def before_agent_callback(
        self, *, agent: BaseAgent, callback_context: CallbackContext
    ) -> types.Content | None:
        """Before an agent runs; return Content to skip the agent and answer with it."""
        return None

    async def after_agent_callback(
        self, *, agent: BaseAgent, callback_context: CallbackContext
    ) -> types.Content | None:
        """After an agent ran; return Content to add it as the agent's last word."""
        return None

    # --- model hooks ---
    async def before_model_callback(
        self, *, callback_context: CallbackContext, llm_request: LlmRequest
    ) -> LlmResponse | None:
        """Before a model call; return an LlmResponse to skip the call and use it."""
        return None

    async def after_model_callback(
        self, *, callback_context: CallbackContext, llm_response: LlmResponse
    ) -> LlmResponse | None:
        """After a model call; return an LlmResponse to replace the model's."""
        return None

    async def on_model_error_callback(
        self, *, callback_context: CallbackContext, llm_request: LlmRequest, error: Exception
    ) -> LlmResponse | None:
        """When a model call raised; return an LlmResponse to recover with it."""
        return None

    # --- tool hooks ---
    async def before_tool_callback(
        self, *, tool: BaseTool, tool_args: dict[str, Any], tool_context: ToolContext
    ) -> dict[str, Any] | None:
        """Before a tool runs; return a dict to skip the tool and use it as the result."""
        return None

    async def after_tool_callback(
        self,
        *,
        tool: BaseTool,
        tool_args: dict[str, Any],
        tool_context: ToolContext,
        result: dict[str, Any],
    ) -> dict[str, Any] | None:
        """After a tool ran; return a dict to replace its result."""
        return None

    async def on_tool_error_callback(
        self,
        *,
        tool: BaseTool,
        tool_args: dict[str, Any],
        tool_context: ToolContext,
        error: Exception,
    ) -> dict[str, Any] | None:
        """When a tool raised; return a dict to recover with it as the result."""
        return None

    async def close(self) -> None:
        """Release the plugin's resources; called once by ``Runner.close()``."""
        return None
