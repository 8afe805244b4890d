"""google-adk 2.x's UI widgets: ``Context.render_ui_widget`` puts a ``UiWidget`` on the
event the context produces (``actions.render_ui_widgets``), for the UI to render (an MCP
App's iframe, for one). Before, Eventide had neither the class nor the method."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from eventide import LlmAgent, Runner, SqliteSessionService, ToolContext
from eventide.events import EventActions, UiWidget
from eventide.server.camel_json import event_json
from eventide.testing import ScriptedModel, tool_call_response
from tests.agents.llm_helpers import start, turn


def show_map(city: str, tool_context: ToolContext) -> str:
    """Show a map of a city."""
    tool_context.render_ui_widget(
        UiWidget(id=f"map-{city}", provider="mcp", payload={"resource_uri": f"ui://maps/{city}"})
    )
    return "shown"


async def test_a_tools_widget_is_on_its_response_event_stored_and_sent(tmp_path: Path) -> None:
    model = ScriptedModel(
        responses=[
            tool_call_response(("show_map", {"city": "oslo"}), ("show_map", {"city": "rome"})),
            "Here.",
        ]
    )
    service = SqliteSessionService(str(tmp_path / "s.db"))
    runner = Runner(
        app_name="app",
        agent=LlmAgent(name="a", model=model, tools=[show_map]),
        session_service=service,
    )
    session = await service.create_session(app_name="app", user_id="u")
    events = [
        e async for e in runner.run_async(user_id="u", session_id=session.id, new_message="hi")
    ]
    response = next(e for e in events if e.get_function_responses())
    widgets = response.actions.render_ui_widgets
    assert widgets is not None
    assert [(w.id, w.provider, w.payload) for w in widgets] == [
        ("map-oslo", "mcp", {"resource_uri": "ui://maps/oslo"}),
        ("map-rome", "mcp", {"resource_uri": "ui://maps/rome"}),
    ]
    reloaded = await SqliteSessionService(str(tmp_path / "s.db")).get_session(
        app_name="app", user_id="u", session_id=session.id
    )
    assert reloaded is not None
    stored = next(e for e in reloaded.events if e.id == response.id)
    assert stored.actions.render_ui_widgets == widgets
    sent = json.loads(event_json(response))
    assert sent["actions"]["renderUiWidgets"][0] == {
        "id": "map-oslo",
        "provider": "mcp",
        "payload": {"resource_uri": "ui://maps/oslo"},
    }
    await runner.close()


def test_merged_actions_keep_every_widget() -> None:
    actions = EventActions()
    assert actions.is_empty()
    actions.merge(EventActions(render_ui_widgets=[UiWidget(id="w1", provider="mcp")]))
    assert not actions.is_empty()
    assert [w.id for w in actions.render_ui_widgets or ()] == ["w1"]


async def test_a_second_widget_with_the_same_id_is_refused() -> None:
    def twice(tool_context: ToolContext) -> str:
        """Render twice."""
        tool_context.render_ui_widget(UiWidget(id="w", provider="mcp"))
        with pytest.raises(ValueError, match="UI widget with ID 'w' already exists"):
            tool_context.render_ui_widget(UiWidget(id="w", provider="mcp", payload={"x": 1}))
        return "ok"

    model = ScriptedModel(responses=[tool_call_response(("twice", {})), "done"])
    runner, sid = await start(LlmAgent(name="a", model=model, tools=[twice]))
    events = await turn(runner, sid)
    response = next(e for e in events if e.get_function_responses())
    assert response.get_function_responses()[0].response == {"result": "ok"}
    assert [w.payload for w in response.actions.render_ui_widgets or ()] == [{}]
