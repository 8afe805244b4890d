"""An agent with ``output_schema`` leaves ``None`` fields out of its structured answer, as
google-adk 2.13 does (checked side by side): in the ``output_key`` state value, in what an
``AgentTool`` returns to the calling model (and so its state), and in ``set_model_response``'s
result."""

from __future__ import annotations

import pydantic

from eventide import AgentTool, InMemoryRunner, LlmAgent, ToolContext
from eventide.testing import ScriptedModel, tool_call_response
from eventide.tools.set_model_response_tool import SetModelResponseTool


class Out(pydantic.BaseModel):
    a: str
    b: str | None = None
    c: int | None = None


async def _run(runner: InMemoryRunner) -> tuple[list[object], dict[str, object]]:
    session = await runner.session_service.create_session(app_name=runner.app_name, user_id="u")
    events = [
        e async for e in runner.run_async(user_id="u", session_id=session.id, new_message="hi")
    ]
    stored = await runner.session_service.get_session(
        app_name=runner.app_name, user_id="u", session_id=session.id
    )
    assert stored is not None
    responses: list[object] = [r.response for e in events for r in e.get_function_responses()]
    await runner.close()
    return responses, dict(stored.state)


async def test_output_key_keeps_only_the_fields_that_are_set() -> None:
    agent = LlmAgent(
        name="sub",
        model=ScriptedModel(responses=['{"a": "x", "c": null}']),
        output_schema=Out,
        output_key="res",
    )
    _, state = await _run(InMemoryRunner(agent, app_name="app"))
    assert state == {"res": {"a": "x"}}


async def test_agent_tool_returns_and_stores_the_answer_without_none_fields() -> None:
    sub = LlmAgent(
        name="sub",
        description="answers in Out",
        model=ScriptedModel(responses=['{"a": "x", "c": null}']),
        output_schema=Out,
        output_key="res",
    )
    root = LlmAgent(
        name="root",
        model=ScriptedModel(responses=[tool_call_response(("sub", {"request": "go"})), "done"]),
        tools=[AgentTool(agent=sub)],
    )
    responses, state = await _run(InMemoryRunner(root, app_name="app"))
    assert responses == [{"a": "x"}]
    assert state == {"res": {"a": "x"}}


async def test_set_model_response_answers_without_none_fields() -> None:
    tool = SetModelResponseTool(Out)
    context: ToolContext = None  # type: ignore[assignment]  # the tool does not read it
    assert await tool.run_async(args={"a": "x", "b": None}, tool_context=context) == {"a": "x"}


def test_set_model_response_describes_itself_as_google_adk_does() -> None:
    """The model reads google-adk 2.13's words ("Set your final response using the required
    output schema"), which apps and google-adk's tests look for in the description."""
    tool = SetModelResponseTool(Out)
    assert tool.description.startswith("Set your final response using the required output schema")
    declaration = tool.get_declaration()
    assert declaration is not None
    assert declaration.description == tool.description
