"""The credential round trip through Runner and LlmAgent: a tool asks, the invocation pauses,
the client's answer resumes it, and later turns reuse the stored credential."""

from __future__ import annotations

from typing import Any

import pytest

from eventide import InMemorySessionService, LlmAgent, Runner, ToolContext, types
from eventide.auth import (
    REQUEST_CREDENTIAL_FUNCTION,
    ApiKeyScheme,
    AuthConfig,
    InMemoryCredentialService,
)
from eventide.errors import CredentialExchangeError, UsageError
from eventide.testing import ScriptedModel, tool_call_response
from tests.agents.llm_helpers import start, turn
from tests.auth.conftest import oauth2_config
from tests.auth.fake_token_server import FakeTokenServer
from tests.event_summary import summarize

WEATHER_KEY = AuthConfig(auth_scheme=ApiKeyScheme(name="X-Weather-Key"))


def weather_agent(model: ScriptedModel, seen: list[str]) -> LlmAgent:
    async def get_weather(city: str, tool_context: ToolContext) -> dict[str, Any]:
        """The weather in a city (needs the user's weather API key)."""
        credential = await tool_context.get_auth_response(WEATHER_KEY)
        if credential is None:
            tool_context.request_credential(WEATHER_KEY)
            return {"pending": "waiting for the user's API key"}
        assert credential.api_key is not None
        seen.append(credential.api_key)
        return {"city": city, "temp_c": 18}

    return LlmAgent(name="a", model=model, tools=[get_weather])


def answer_to(request_event: Any, credential: dict[str, Any]) -> types.Content:
    """The client's answer: the requested auth config with the credential filled in."""
    call = request_event.get_function_calls()[0]
    config = dict(call.args["auth_config"])
    config["exchanged_auth_credential"] = credential
    return types.Content(
        role="user",
        parts=[
            types.Part(
                function_response=types.FunctionResponse(
                    id=call.id, name=call.name, response=config
                )
            )
        ],
    )


async def test_api_key_requested_then_given_then_reused() -> None:
    """Spec function_call_id linking: the request event's requested_auth_configs is keyed by
    the tool's function call id; the answer resumes that call; a third turn reuses the stored
    credential without asking."""
    model = ScriptedModel(
        responses=[
            tool_call_response(("get_weather", {"city": "Paris"})),
            "It is 18 degrees in Paris.",
            tool_call_response(("get_weather", {"city": "Rome"})),
            "It is 18 degrees in Rome.",
        ]
    )
    seen: list[str] = []
    runner, sid = await start(weather_agent(model, seen))

    first = await turn(runner, sid, "Weather in Paris?")
    call_id = first[0].get_function_calls()[0].id
    assert summarize(first)[:2] == [
        ("a", "call", (("get_weather", (("city", "Paris"),)),)),
        ("a", "response", (("get_weather", (("pending", "waiting for the user's API key"),)),)),
    ]
    assert list(first[1].actions.requested_auth_configs) == [call_id]
    request = first[-1]
    request_call = request.get_function_calls()[0]
    assert request_call.name == REQUEST_CREDENTIAL_FUNCTION
    assert request_call.args == {
        "function_call_id": call_id,
        "auth_config": WEATHER_KEY.model_dump(mode="json"),
    }
    assert request.is_final_response() and request.long_running_tool_ids == {request_call.id}
    assert seen == []

    second = await turn(runner, sid, answer_to(request, {"auth_type": "api_key", "api_key": "k-1"}))
    assert summarize(second) == [
        ("a", "response", (("get_weather", (("city", "Paris"), ("temp_c", 18))),)),
        ("a", "text", "It is 18 degrees in Paris."),
    ]
    assert second[0].get_function_responses()[0].id == call_id
    assert seen == ["k-1"]

    third = await turn(runner, sid, "And in Rome?")
    assert [kind for _, kind, _ in summarize(third)] == ["call", "response", "text"]
    assert third[1].actions.requested_auth_configs == {}
    assert seen == ["k-1", "k-1"]


async def test_credentials_are_per_user_and_in_the_runners_service() -> None:
    """A credential given by one user is stored in Runner(credential_service=...) under that
    user; another user of the same app is asked again."""
    service = InMemoryCredentialService()
    model = ScriptedModel(
        responses=[
            tool_call_response(("get_weather", {"city": "Oslo"})),
            "ok",
            tool_call_response(("get_weather", {"city": "Oslo"})),
        ]
    )
    seen: list[str] = []
    runner = Runner(
        app_name="app",
        agent=weather_agent(model, seen),
        session_service=InMemorySessionService(),
        credential_service=service,
    )
    sid = (await runner.session_service.create_session(app_name="app", user_id="u")).id
    first = await turn(runner, sid)
    await turn(runner, sid, answer_to(first[-1], {"auth_type": "api_key", "api_key": "mine"}))
    stored = await service.load_credential(
        app_name="app", user_id="u", credential_key=WEATHER_KEY.credential_key
    )
    assert stored is not None and stored.api_key == "mine"

    other = await runner.session_service.create_session(app_name="app", user_id="someone-else")
    events = [
        e
        async for e in runner.run_async(
            user_id="someone-else", session_id=other.id, new_message="hi"
        )
    ]
    assert events[-1].get_function_calls()[0].name == REQUEST_CREDENTIAL_FUNCTION
    assert seen == ["mine"]


async def test_an_answer_without_the_credential_is_a_usage_error() -> None:
    """An answer that lacks the credential is refused with a message saying what to send."""
    model = ScriptedModel(responses=[tool_call_response(("get_weather", {"city": "Oslo"}))])
    runner, sid = await start(weather_agent(model, []))
    first = await turn(runner, sid)
    with pytest.raises(UsageError, match="lacks exchanged_auth_credential.api_key"):
        await turn(runner, sid, answer_to(first[-1], {"auth_type": "api_key"}))


def calendar_agent(model: ScriptedModel, config: AuthConfig, seen: list[str]) -> LlmAgent:
    async def list_events(tool_context: ToolContext) -> dict[str, Any]:
        """The user's calendar events (OAuth2)."""
        credential = await tool_context.get_auth_response(config)
        if credential is None:
            tool_context.request_credential(config)
            return {"pending": "waiting for sign-in"}
        assert credential.oauth2 is not None and credential.oauth2.access_token is not None
        seen.append(credential.oauth2.access_token)
        return {"events": ["standup"]}

    return LlmAgent(name="a", model=model, tools=[list_events])


async def test_oauth2_code_is_exchanged_at_the_token_endpoint(
    token_server: FakeTokenServer,
) -> None:
    """OAuth2: the client answers with the redirect URL holding the code; the tool's next run
    exchanges it (with the developer's client secret, never sent to the client) at the local
    token endpoint, and later turns reuse the access token."""
    config = oauth2_config(token_server.token_uri)
    token_server.valid_codes.add("code-42")
    model = ScriptedModel(
        responses=[
            tool_call_response(("list_events", {})),
            "You have a standup.",
            tool_call_response(("list_events", {})),
            "Still a standup.",
        ]
    )
    seen: list[str] = []
    runner, sid = await start(calendar_agent(model, config, seen))
    first = await turn(runner, sid, "My calendar?")
    args = first[-1].get_function_calls()[0].args
    assert args is not None and "s3cret" not in str(args)
    state = args["auth_config"]["exchanged_auth_credential"]["oauth2"]["state"]
    redirect = f"https://app.example.com/callback?code=code-42&state={state}"
    answer = answer_to(
        first[-1], {"auth_type": "oauth2", "oauth2": {"auth_response_uri": redirect}}
    )
    second = await turn(runner, sid, answer)
    assert [kind for _, kind, _ in summarize(second)] == ["response", "text"]
    third = await turn(runner, sid, "Again?")
    assert [kind for _, kind, _ in summarize(third)] == ["call", "response", "text"]
    assert seen == ["access-1", "access-1"]
    assert token_server.requests == [
        {
            "grant_type": "authorization_code",
            "code": "code-42",
            "redirect_uri": "https://app.example.com/callback",
            "client_id": "client-1",
            "client_secret": "s3cret",
        }
    ]


async def test_oauth2_refused_code_fails_the_call_and_asks_again(
    token_server: FakeTokenServer,
) -> None:
    """A code the token endpoint refuses raises CredentialExchangeError (through the tool) and
    is forgotten, so the next call asks the user to sign in again."""
    config = oauth2_config(token_server.token_uri)
    model = ScriptedModel(
        responses=[tool_call_response(("list_events", {})), tool_call_response(("list_events", {}))]
    )
    runner, sid = await start(calendar_agent(model, config, []))
    first = await turn(runner, sid)
    answer = answer_to(first[-1], {"auth_type": "oauth2", "oauth2": {"auth_code": "wrong"}})
    with pytest.raises(Exception) as caught:
        await turn(runner, sid, answer)
    assert isinstance(caught.value.__cause__, CredentialExchangeError)
    assert caught.value.__cause__.status_code == 400
    assert "bad code or token" in str(caught.value.__cause__)
    again = await turn(runner, sid, "retry")
    assert again[-1].get_function_calls()[0].name == REQUEST_CREDENTIAL_FUNCTION
