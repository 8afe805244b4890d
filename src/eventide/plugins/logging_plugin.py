"""``LoggingPlugin``: one readable log line per step of every invocation."""

from __future__ import annotations

import logging
from typing import Any

from eventide.plugins.base_plugin import BasePlugin

__all__ = ["LoggingPlugin"]


def _short(value: Any, limit: int = 200) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


class LoggingPlugin(BasePlugin):
    """Logs invocations, agent runs, model calls, tool calls and events through ``logging``.

    Args:
        name: the plugin's name.
        logger: where to log (default: the ``eventide`` logger).
        level: the level of the lines (default INFO).
    """

    def __init__(
        self,
        name: str = "logging",
        *,
        logger: logging.Logger | None = None,
        level: int = logging.INFO,
    ) -> None:
        super().__init__(name)
        self.logger = logger or logging.getLogger("eventide")
        self.level = level

    def _log(self, message: str, *args: Any) -> None:
        if self.logger.isEnabledFor(self.level):
            self.logger.log(self.level, message, *args)

    async def before_run_callback(self, *, invocation_context: Any) -> None:
        self._log(
            "invocation %s started: app=%s user=%s session=%s",
            invocation_context.invocation_id,
            invocation_context.app_name,
            invocation_context.user_id,
            invocation_context.session.id,
        )

    async def on_event_callback(self, *, invocation_context: Any, event: Any) -> None:
        if event.partial:
            return
        calls = [c.name for c in event.get_function_calls()]
        responses = [r.name for r in event.get_function_responses()]
        self._log(
            "event %s by %s: text=%s calls=%s responses=%s state_delta=%s final=%s",
            event.id,
            event.author,
            _short(event.text),
            calls,
            responses,
            _short(event.actions.state_delta),
            event.is_final_response(),
        )

    async def after_run_callback(self, *, invocation_context: Any) -> None:
        self._log("invocation %s finished", invocation_context.invocation_id)

    async def before_agent_callback(self, *, agent: Any, callback_context: Any) -> None:
        self._log("agent %s starts", agent.name)

    async def after_agent_callback(self, *, agent: Any, callback_context: Any) -> None:
        self._log("agent %s finished", agent.name)

    async def before_model_callback(self, *, callback_context: Any, llm_request: Any) -> None:
        self._log(
            "model call by %s: model=%s contents=%d tools=%s",
            callback_context.agent_name,
            llm_request.model,
            len(llm_request.contents),
            sorted(llm_request.tools_dict),
        )

    async def on_model_error_callback(
        self, *, callback_context: Any, llm_request: Any, error: Exception
    ) -> None:
        self.logger.warning("model call by %s failed: %r", callback_context.agent_name, error)

    async def before_tool_callback(
        self, *, tool: Any, tool_args: dict[str, Any], tool_context: Any
    ) -> None:
        self._log(
            "tool %s called (id %s) with %s",
            tool.name,
            tool_context.function_call_id,
            _short(tool_args),
        )

    async def after_tool_callback(
        self, *, tool: Any, tool_args: dict[str, Any], tool_context: Any, result: dict[str, Any]
    ) -> None:
        self._log("tool %s returned %s", tool.name, _short(result))

    async def on_tool_error_callback(
        self, *, tool: Any, tool_args: dict[str, Any], tool_context: Any, error: Exception
    ) -> None:
        self.logger.warning("tool %s raised %r", tool.name, error)
