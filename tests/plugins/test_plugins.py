"""Plugins: applied to every agent, in registration order, before the agents' callbacks."""

from __future__ import annotations

import logging
from typing import Any

import pytest

from eventide import BasePlugin, BaseTool, CallbackContext, Event, LlmAgent, LlmRequest, types
from eventide.errors import UsageError
from eventide.plugins.logging_plugin import LoggingPlugin
from eventide.plugins.plugin_manager import PluginManager
from eventide.testing import ScriptedModel, text_response, tool_call_response
from tests.agents.llm_helpers import start, turn
from tests.event_summary import summarize


def _double(x: int) -> int:
    """Double."""
    return 2 * x


class Recorder(BasePlugin):
    def __init__(self, name: str, log: list[str], *, answer: str | None = None) -> None:
        super().__init__(name)
        self.log = log
        self.answer = answer

    async def before_model_callback(self, *, callback_context: Any, llm_request: Any) -> Any:
        self.log.append(f"{self.name}.before_model")
        return text_response(self.answer) if self.answer else None

    async def before_tool_callback(self, *, tool: Any, tool_args: Any, tool_context: Any) -> Any:
        self.log.append(f"{self.name}.before_tool({tool.name})")
        return None


async def test_plugins_run_in_order_before_agent_callbacks() -> None:
    """Issue 3: plugins run in registration order, before the agent's own callbacks."""
    log: list[str] = []

    def agent_before_model(callback_context: CallbackContext, llm_request: LlmRequest) -> None:
        log.append("agent.before_model")

    def agent_before_tool(tool: BaseTool, args: dict[str, Any], tool_context: Any) -> None:
        log.append("agent.before_tool")

    model = ScriptedModel(responses=[tool_call_response(("_double", {"x": 1})), "ok"])
    agent = LlmAgent(
        name="a",
        model=model,
        tools=[_double],
        before_model_callback=agent_before_model,
        before_tool_callback=agent_before_tool,
    )
    runner, sid = await start(agent, plugins=[Recorder("p1", log), Recorder("p2", log)])
    await turn(runner, sid)
    assert log == [
        "p1.before_model",
        "p2.before_model",
        "agent.before_model",
        "p1.before_tool(_double)",
        "p2.before_tool(_double)",
        "agent.before_tool",
        "p1.before_model",
        "p2.before_model",
        "agent.before_model",
    ]


async def test_plugin_result_short_circuits() -> None:
    """Issue 3: a plugin's non-None result short-circuits later plugins, the agent's callback
    and the model."""
    log: list[str] = []

    def agent_before_model(callback_context: CallbackContext, llm_request: LlmRequest) -> None:
        log.append("agent.before_model")

    model = ScriptedModel(responses=[])
    agent = LlmAgent(name="a", model=model, before_model_callback=agent_before_model)
    runner, sid = await start(
        agent, plugins=[Recorder("p1", log, answer="from plugin"), Recorder("p2", log)]
    )
    assert summarize(await turn(runner, sid)) == [("a", "text", "from plugin")]
    assert log == ["p1.before_model"]
    assert model.calls == 0


async def test_runner_level_plugin_hooks() -> None:
    """Issue 3: on_user_message can replace the message; before_run can answer instead of the
    agent; on_event can replace what the caller sees (the stored event is unchanged)."""

    class Rewriter(BasePlugin):
        async def on_user_message_callback(
            self, *, invocation_context: Any, user_message: Any
        ) -> Any:
            return types.Content(role="user", parts=[types.Part(text=user_message.text.upper())])

        async def on_event_callback(self, *, invocation_context: Any, event: Event) -> Event:
            return event.model_copy(update={"custom_metadata": {"seen_by": self.name}})

    model = ScriptedModel(responses=["ok"])
    runner, sid = await start(LlmAgent(name="a", model=model), plugins=[Rewriter("rw")])
    events = await turn(runner, sid, "quiet please")
    assert model.requests[0].contents[0].text == "QUIET PLEASE"
    assert events[0].custom_metadata == {"seen_by": "rw"}
    session = await runner.session_service.get_session(app_name="app", user_id="u", session_id=sid)
    assert session is not None and session.events[-1].custom_metadata is None

    class Closed(BasePlugin):
        async def before_run_callback(self, *, invocation_context: Any) -> Any:
            return types.Content(role="model", parts=[types.Part(text="Maintenance.")])

    model = ScriptedModel(responses=[])
    runner, sid = await start(LlmAgent(name="a", model=model), plugins=[Closed("closed")])
    assert summarize(await turn(runner, sid)) == [("model", "text", "Maintenance.")]
    assert model.calls == 0


def test_plugin_names_must_be_unique() -> None:
    """Bad input: two plugins with one name, or a non-plugin, are clear errors."""
    with pytest.raises(UsageError, match="Plugin with name 'x' already registered"):
        PluginManager([BasePlugin("x"), BasePlugin("x")])
    with pytest.raises(UsageError, match="subclass eventide.BasePlugin"):
        PluginManager([object()])  # type: ignore[list-item]


async def test_logging_plugin_logs_each_step(caplog: pytest.LogCaptureFixture) -> None:
    """The shipped LoggingPlugin writes one line per step of the invocation."""
    model = ScriptedModel(responses=[tool_call_response(("_double", {"x": 3})), "six"])
    runner, sid = await start(
        LlmAgent(name="a", model=model, tools=[_double]), plugins=[LoggingPlugin()]
    )
    with caplog.at_level(logging.INFO, logger="eventide"):
        await turn(runner, sid)
    text = caplog.text
    for expected in (
        "invocation",
        "agent a starts",
        "model call by a",
        "tool _double called",
        "tool _double returned {'result': 6}",
        "finished",
    ):
        assert expected in text, expected
