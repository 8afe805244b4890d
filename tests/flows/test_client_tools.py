"""``RunConfig.client_tools``: tools the caller declares for one invocation and runs itself."""

from __future__ import annotations

from eventide import InMemoryRunner, LlmAgent, types
from eventide.run_config import RunConfig
from eventide.testing import ScriptedModel, tool_call_response
from tests.event_summary import summarize


def own_tool(city: str) -> dict[str, str]:
    """The agent's own lookup."""
    return {"city": city}


PICK_COLOR = types.FunctionDeclaration(
    name="pick_color",
    description="Ask the user to pick a colour in the page.",
    parameters_json_schema={"type": "object", "properties": {"hint": {"type": "string"}}},
)


async def test_a_client_tool_call_pauses_and_the_clients_answer_resumes_the_agent() -> None:
    """Spec, long-running tools: the call is listed in long_running_tool_ids, nothing runs on
    the server, the invocation ends; the client's function response goes back to the agent,
    whose model then sees the call and its answer."""
    model = ScriptedModel(
        responses=[tool_call_response(("pick_color", {"hint": "warm"})), "Red it is."]
    )
    agent = LlmAgent(name="painter", model=model, tools=[own_tool])
    runner = InMemoryRunner(agent, app_name="paint")
    session = await runner.session_service.create_session(app_name="paint", user_id="u")
    config = RunConfig(client_tools=[PICK_COLOR])
    first = [
        e
        async for e in runner.run_async(
            user_id="u", session_id=session.id, new_message="paint it", run_config=config
        )
    ]
    assert summarize(first) == [("painter", "call", (("pick_color", (("hint", "warm"),)),))]
    call = first[0].get_function_calls()[0]
    assert first[0].long_running_tool_ids == {call.id}
    declared = model.requests[0].config.tools
    assert declared is not None and declared[0].function_declarations is not None
    assert [d.name for d in declared[0].function_declarations] == ["own_tool", "pick_color"]

    answer = types.Content(
        role="user",
        parts=[
            types.Part(
                function_response=types.FunctionResponse(
                    id=call.id, name="pick_color", response={"color": "red"}
                )
            )
        ],
    )
    second = [
        e
        async for e in runner.run_async(
            user_id="u", session_id=session.id, new_message=answer, run_config=config
        )
    ]
    assert summarize(second) == [("painter", "text", "Red it is.")]
    last_contents = model.requests[1].contents
    assert last_contents[-1].parts is not None
    response = last_contents[-1].parts[0].function_response
    assert response is not None and response.response == {"color": "red"}


async def test_an_agents_own_tool_wins_over_a_client_tool_of_the_same_name() -> None:
    model = ScriptedModel(responses=["ok"])
    agent = LlmAgent(name="painter", model=model, tools=[own_tool])
    runner = InMemoryRunner(agent, app_name="paint")
    session = await runner.session_service.create_session(app_name="paint", user_id="u")
    clash = types.FunctionDeclaration(name="own_tool", description="the client's")
    config = RunConfig(client_tools=[clash, PICK_COLOR])
    async for _ in runner.run_async(
        user_id="u", session_id=session.id, new_message="hi", run_config=config
    ):
        pass
    tools = model.requests[0].config.tools
    assert tools is not None and tools[0].function_declarations is not None
    declarations = tools[0].function_declarations
    assert [(d.name, d.description) for d in declarations] == [
        ("own_tool", "The agent's own lookup."),
        ("pick_color", "Ask the user to pick a colour in the page."),
    ]
    assert model.requests[0].history_unchanged  # declaring tools changes no contents
