"""McpToolset inside an LlmAgent, driven through Runner by a ScriptedModel."""

from __future__ import annotations

import os

import pytest

from eventide import Event, LlmAgent, types
from eventide.auth import REQUEST_CREDENTIAL_FUNCTION, ApiKeyScheme, AuthConfig
from eventide.errors import ConfigurationError
from eventide.testing import ScriptedModel, tool_call_response
from eventide.tools.mcp_toolset import McpToolset, StreamableHTTPConnectionParams
from tests.agents.llm_helpers import start, turn
from tests.event_summary import summarize
from tests.tools.mcp.conftest import HttpMcpServer, stdio_params


@pytest.mark.slow
async def test_agent_calls_an_mcp_tool_and_runner_close_stops_the_server() -> None:
    """Spec event loop with an MCP tool: call event, response event carrying the server's
    structured result, final text; the model saw the server's schema; Runner.close() closes
    the toolset, which ends the stdio server process."""
    toolset = McpToolset(
        connection_params=stdio_params(),
        tool_filter=["forecast", "whoami"],
        tool_name_prefix="weather",
    )
    model = ScriptedModel(
        responses=[
            tool_call_response(("weather_forecast", {"city": "Nice"}), ("weather_whoami", {})),
            "Sunny in Nice.",
        ]
    )
    runner, sid = await start(LlmAgent(name="a", model=model, tools=[toolset]))
    events = await turn(runner, sid, "Weather in Nice?")
    pid = events[1].get_function_responses()[1].response["result"]  # type: ignore[index]
    assert summarize(events) == [
        ("a", "call", (("weather_forecast", (("city", "Nice"),)), ("weather_whoami", ()))),
        (
            "a",
            "response",
            (
                (
                    "weather_forecast",
                    (("city", "Nice"), ("conditions", ("sunny",)), ("temp_c", 22.5)),
                ),
                ("weather_whoami", (("result", pid),)),
            ),
        ),
        ("a", "text", "Sunny in Nice."),
    ]
    declarations = {
        d.name: d.parameters_json_schema
        for tool in model.requests[0].config.tools or []
        for d in tool.function_declarations or []
    }
    assert declarations["weather_forecast"] == {
        "type": "object",
        "title": "forecastArguments",
        "properties": {
            "city": {"title": "City", "type": "string"},
            "days": {"default": 1, "title": "Days", "type": "integer"},
        },
        "required": ["city"],
    }
    await runner.close()
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)


async def test_mcp_over_http_asks_for_a_credential_and_sends_it_as_a_header(
    http_server: HttpMcpServer,
) -> None:
    """Tool authentication over MCP: the first call asks the user for the API key (the
    invocation pauses); after the answer the MCP request carries it in the configured
    header; a later turn reuses it without asking."""
    config = AuthConfig(auth_scheme=ApiKeyScheme(name="X-Api-Key"))
    toolset = McpToolset(
        connection_params=StreamableHTTPConnectionParams(url=http_server.url),
        tool_filter=["header"],
        auth_config=config,
    )
    model = ScriptedModel(
        responses=[
            tool_call_response(("header", {"name": "X-Api-Key"})),
            "Your key works.",
            tool_call_response(("header", {"name": "X-Api-Key"})),
            "Still works.",
        ]
    )
    runner, sid = await start(LlmAgent(name="a", model=model, tools=[toolset]))
    try:
        first = await turn(runner, sid)
        request = first[-1].get_function_calls()[0]
        assert request.name == REQUEST_CREDENTIAL_FUNCTION and request.args is not None
        assert request.args["function_call_id"] == first[0].get_function_calls()[0].id
        answer = dict(request.args["auth_config"])
        answer["exchanged_auth_credential"] = {"auth_type": "api_key", "api_key": "k-777"}
        part = types.Part(
            function_response=types.FunctionResponse(
                id=request.id, name=request.name, response=answer
            )
        )
        second = await turn(runner, sid, types.Content(role="user", parts=[part]))
        assert summarize(second) == [
            ("a", "response", (("header", (("result", "k-777"),)),)),
            ("a", "text", "Your key works."),
        ]
        third = await turn(runner, sid, "again")
        assert summarize(third)[1] == ("a", "response", (("header", (("result", "k-777"),)),))
    finally:
        await runner.close()


def test_auth_config_needs_http() -> None:
    """Credentials travel as HTTP headers, so auth_config over stdio is a usage error."""
    config = AuthConfig(auth_scheme=ApiKeyScheme(name="X-Api-Key"))
    with pytest.raises(ConfigurationError, match="StreamableHTTPConnectionParams"):
        McpToolset(connection_params=stdio_params(), auth_config=config)


def credential_answer(request_event: Event, api_key: str) -> types.Content:
    """The client's answer to an eventide_request_credential call, with ``api_key``."""
    request = request_event.get_function_calls()[0]
    assert request.name == REQUEST_CREDENTIAL_FUNCTION and request.args is not None
    answer = dict(request.args["auth_config"])
    answer["exchanged_auth_credential"] = {"auth_type": "api_key", "api_key": api_key}
    part = types.Part(
        function_response=types.FunctionResponse(id=request.id, name=request.name, response=answer)
    )
    return types.Content(role="user", parts=[part])


@pytest.mark.slow
async def test_a_refused_credential_is_forgotten_and_asked_again() -> None:
    """A server that answers 401 to a tool call with the user's key: the tool forgets the key
    and asks again (the invocation pauses a second time); the right key then works."""
    server = HttpMcpServer(api_key="right-key")
    server.start()
    config = AuthConfig(auth_scheme=ApiKeyScheme(name="X-Api-Key"))
    toolset = McpToolset(
        connection_params=StreamableHTTPConnectionParams(url=server.url),
        auth_config=config,
        tool_filter=["add"],
    )
    try:
        model = ScriptedModel(responses=[tool_call_response(("add", {"a": 2, "b": 3})), "5."])
        runner, sid = await start(LlmAgent(name="a", model=model, tools=[toolset]))
        first = await turn(runner, sid)
        assert first[-1].get_function_calls()[0].name == REQUEST_CREDENTIAL_FUNCTION
        second = await turn(runner, sid, credential_answer(first[-1], "wrong-key"))
        assert summarize(second)[0] == ("a", "response", (("add", (("error", REFUSED),)),))
        assert second[-1].get_function_calls()[0].name == REQUEST_CREDENTIAL_FUNCTION
        third = await turn(runner, sid, credential_answer(second[-1], "right-key"))
        assert summarize(third) == [
            ("a", "response", (("add", (("result", 5),)),)),
            ("a", "text", "5."),
        ]
        await runner.close()
    finally:
        await toolset.close()
        server.kill()


REFUSED = (
    "The MCP server refused the user's credential (HTTP 401); a new one was requested. Wait "
    "for the user to provide it."
)
