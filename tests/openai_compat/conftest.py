"""The apps the OpenAI-endpoint tests talk to, behind a real server."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from eventide import LlmAgent, ToolContext, types
from eventide.apps import App
from eventide.models.llm_request import LlmRequest
from eventide.models.llm_response import LlmResponse
from eventide.server import create_app
from eventide.testing import FunctionModel
from tests.server.fixture_agents import FailingAgent, GatedAgent
from tests.server.harness import ThreadedServer


def user_texts(request: LlmRequest) -> list[str]:
    """The user's texts the model was sent, in order."""
    return [
        part.text
        for content in request.contents
        if content.role == "user"
        for part in content.parts or ()
        if part.text
    ]


def counting_reply(request: LlmRequest) -> LlmResponse:
    """'<last user text> (#n)': n is how many user texts the model saw, so a test sees
    whether the conversation was kept; reports usage (10 tokens a content, 3 out)."""
    texts = user_texts(request)
    return LlmResponse(
        content=types.Content(
            role="model", parts=[types.Part(text=f"{texts[-1]} (#{len(texts)})")]
        ),
        usage_metadata=types.UsageMetadata(
            prompt_token_count=10 * len(request.contents),
            candidates_token_count=3,
            total_token_count=10 * len(request.contents) + 3,
        ),
    )


def get_weather(city: str, tool_context: ToolContext) -> dict[str, str]:
    """The weather in a city."""
    tool_context.state["last_city"] = city
    return {"city": city, "forecast": "sunny"}


def weather_reply(request: LlmRequest) -> LlmResponse | str:
    """Calls get_weather for the user's city, or the client's own tool when the user asks
    for 'units', then answers with what the tool said."""
    last = request.contents[-1]
    response = next((p.function_response for p in last.parts or () if p.function_response), None)
    if response is not None:
        return f"{response.name} said {response.response}"
    text = user_texts(request)[-1]
    name, args = (
        ("pick_units", {"hint": text}) if "units" in text else ("get_weather", {"city": text})
    )
    return LlmResponse(
        content=types.Content(
            role="model",
            parts=[types.Part(function_call=types.FunctionCall(name=name, args=args))],
        )
    )


def openai_apps() -> dict[str, App]:
    chat = LlmAgent(
        name="chatter", model=FunctionModel(function=counting_reply, stream_chunk_size=4)
    )
    weather = LlmAgent(
        name="forecaster",
        model=FunctionModel(function=weather_reply, stream_chunk_size=5),
        tools=[get_weather],
    )
    assistant = LlmAgent(
        name="assistant", model=FunctionModel(function=assistant_reply, stream_chunk_size=6)
    )
    return {
        "assistant": App(name="assistant", root_agent=assistant),
        "chat": App(name="chat", root_agent=chat),
        "weather": App(name="weather", root_agent=weather),
        "failing": App(name="failing", root_agent=FailingAgent(name="failing_agent")),
        "gated": App(name="gated", root_agent=GatedAgent(name="gated_agent")),
    }


@pytest.fixture(scope="module")
def openai_server() -> Iterator[ThreadedServer]:
    """One real server per module with the OpenAI endpoints on."""
    with ThreadedServer(create_app(apps=openai_apps(), openai=True)) as running:
        yield running


def assistant_reply(request: LlmRequest) -> LlmResponse | str:
    """A general assistant for the Open Responses cases: calls the client's first tool when
    the request declares one and has not had its answer yet, else says what it was sent."""
    from eventide.tools.client_tool import ClientTool

    answered = any(p.function_response for c in request.contents for p in c.parts or ())
    client_tools = [t for t in request.tools_dict.values() if isinstance(t, ClientTool)]
    if client_tools and not answered:
        call = types.FunctionCall(name=client_tools[0].name, args={"location": "San Francisco, CA"})
        return LlmResponse(
            content=types.Content(role="model", parts=[types.Part(function_call=call)]),
            usage_metadata=types.UsageMetadata(prompt_token_count=12, candidates_token_count=7),
        )
    parts = request.contents[-1].parts or []
    images = sum(1 for p in parts if p.inline_data is not None or p.file_data is not None)
    return LlmResponse(
        content=types.Content(
            role="model",
            parts=[
                types.Part(
                    text=f"Hello! I read {len(user_texts(request))} texts, {images} image(s)."
                )
            ],
        ),
        usage_metadata=types.UsageMetadata(prompt_token_count=12, candidates_token_count=9),
    )
