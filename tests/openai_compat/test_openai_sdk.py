"""The official ``openai`` Python SDK against ``--openai``: Chat Completions and Responses,
streamed and not, conversations kept in sessions, usage, tool calls, the client's tools."""

from __future__ import annotations

import json
import uuid
from typing import Any

import httpx
import openai
import pytest

from tests.server.harness import ThreadedServer


def client_for(server: ThreadedServer, **kwargs: Any) -> openai.OpenAI:
    return openai.OpenAI(base_url=f"{server.url}/v1", api_key="unused", max_retries=0, **kwargs)


def session_events(server: ThreadedServer, app: str, user: str, session_id: str) -> list[Any]:
    with httpx.Client(base_url=server.url) as http:
        response = http.get(f"/apps/{app}/users/{user}/sessions/{session_id}")
        response.raise_for_status()
        events: list[Any] = response.json()["events"]
        return events


def test_models_are_the_apps(openai_server: ThreadedServer) -> None:
    client = client_for(openai_server)
    assert [m.id for m in client.models.list()] == [
        "assistant",
        "chat",
        "failing",
        "gated",
        "weather",
    ]
    assert client.models.retrieve("chat").owned_by == "eventide"
    with pytest.raises(openai.NotFoundError, match="model 'nope' does not exist"):
        client.models.retrieve("nope")


def test_chat_completions_streams_a_conversation_kept_in_the_named_session(
    openai_server: ThreadedServer,
) -> None:
    """The session header names the conversation: each turn sends only the new message,
    the model sees the whole conversation (the count grows), text arrives in chunks."""
    client = client_for(openai_server)
    session_id = f"s-{uuid.uuid4().hex[:8]}"
    answers = []
    for text in ("one", "two", "three"):
        stream = client.chat.completions.create(
            model="chat",
            messages=[{"role": "user", "content": text}],
            stream=True,
            stream_options={"include_usage": True},
            extra_headers={"X-Eventide-Session-Id": session_id},
        )
        chunks = list(stream)
        deltas = [c.choices[0].delta.content for c in chunks if c.choices]
        assert chunks[0].choices[0].delta.role == "assistant"
        assert len([d for d in deltas if d]) > 1  # streamed, not one piece
        assert chunks[-2].choices[0].finish_reason == "stop"
        usage = chunks[-1].usage
        assert usage is not None and usage.completion_tokens == 3
        answers.append("".join(d or "" for d in deltas))
    assert answers == ["one (#1)", "two (#2)", "three (#3)"]
    events = session_events(openai_server, "chat", "openai", session_id)
    assert [(e["author"], e["content"]["parts"][0]["text"]) for e in events] == [
        ("user", "one"),
        ("chatter", "one (#1)"),
        ("user", "two"),
        ("chatter", "two (#2)"),
        ("user", "three"),
        ("chatter", "three (#3)"),
    ]


def test_chat_without_a_session_imports_the_messages_into_a_new_one(
    openai_server: ThreadedServer,
) -> None:
    """A request without a session is a new session holding the messages before the new
    input (system messages read and not used); the response names it in its header; the
    user comes from ``user``; ``metadata.session_id`` names a session like the header."""
    client = client_for(openai_server)
    raw = client.chat.completions.with_raw_response.create(
        model="chat",
        user="ada",
        messages=[
            {"role": "system", "content": "You are terse."},
            {"role": "user", "content": "my name is Ada"},
            {"role": "assistant", "content": "Hello Ada"},
            {"role": "user", "content": "who am I?"},
        ],
    )
    completion = raw.parse()
    assert completion.choices[0].message.content == "who am I? (#2)"
    assert completion.choices[0].finish_reason == "stop"
    assert completion.usage is not None
    assert (completion.usage.prompt_tokens, completion.usage.completion_tokens) == (30, 3)
    session_id = raw.headers["x-eventide-session-id"]
    events = session_events(openai_server, "chat", "ada", session_id)
    assert [(e["author"], e["content"]["parts"][0]["text"]) for e in events] == [
        ("user", "my name is Ada"),
        ("chatter", "Hello Ada"),
        ("user", "who am I?"),
        ("chatter", "who am I? (#2)"),
    ]
    again = client.chat.completions.create(
        model="chat",
        user="ada",
        metadata={"session_id": session_id},
        messages=[{"role": "user", "content": "and now?"}],
    )
    assert again.choices[0].message.content == "and now? (#3)"


def test_responses_streams_a_conversation_by_previous_response_id(
    openai_server: ThreadedServer,
) -> None:
    client = client_for(openai_server)
    previous: str | None = None
    answers = []
    for text in ("one", "two", "three"):
        with client.responses.stream(
            model="chat", input=text, previous_response_id=previous
        ) as stream:
            kinds = [event.type for event in stream]
            final = stream.get_final_response()
        assert kinds[:2] == ["response.created", "response.in_progress"]
        assert kinds.count("response.output_text.delta") > 1
        assert kinds[-1] == "response.completed"
        assert final.status == "completed"
        assert final.usage is not None and final.usage.output_tokens == 3
        assert final.previous_response_id == previous
        answers.append(final.output_text)
        previous = final.id
    assert answers == ["one (#1)", "two (#2)", "three (#3)"]


def test_responses_conversation_names_a_session(openai_server: ThreadedServer) -> None:
    """``conversation`` is a session id (created on first use); a new conversation gets the
    input's earlier items, later requests only add theirs."""
    client = client_for(openai_server)
    conversation = f"c-{uuid.uuid4().hex[:8]}"
    first = client.responses.create(
        model="chat",
        conversation=conversation,
        input=[
            {"role": "user", "content": "my name is Ada"},
            {"role": "assistant", "content": "Hello Ada"},
            {"role": "user", "content": "who am I?"},
        ],
    )
    assert first.output_text == "who am I? (#2)"
    assert first.conversation is not None and first.conversation.id == conversation
    second = client.responses.create(model="chat", conversation=conversation, input="and now?")
    assert second.output_text == "and now? (#3)"
    events = session_events(openai_server, "chat", "openai", conversation)
    assert len(events) == 6


def test_the_agents_tool_calls_are_hidden_unless_asked_for(
    openai_server: ThreadedServer,
) -> None:
    """Hidden by default (the answer only); with ``X-Eventide-Tool-Calls: shown`` the
    Responses output has the call and its result, Chat Completions the call (no answer
    needed, so the finish reason stays 'stop')."""
    client = client_for(openai_server)
    hidden = client.responses.create(model="weather", input="Lyon")
    assert [item.type for item in hidden.output] == ["message"]
    assert hidden.output_text == "get_weather said {'city': 'Lyon', 'forecast': 'sunny'}"

    shown = client.responses.create(
        model="weather", input="Paris", extra_headers={"X-Eventide-Tool-Calls": "shown"}
    )
    assert [item.type for item in shown.output] == [
        "function_call",
        "function_call_output",
        "message",
    ]
    call, result = shown.output[0], shown.output[1]
    assert call.type == "function_call" and result.type == "function_call_output"
    assert (call.name, json.loads(call.arguments)) == ("get_weather", {"city": "Paris"})
    assert result.call_id == call.call_id
    assert json.loads(str(result.output)) == {"city": "Paris", "forecast": "sunny"}

    chat = client.chat.completions.create(
        model="weather",
        messages=[{"role": "user", "content": "Oslo"}],
        metadata={"eventide_tool_calls": "shown"},
    )
    choice = chat.choices[0]
    assert choice.finish_reason == "stop"
    assert choice.message.tool_calls is not None
    assert [c.function.name for c in choice.message.tool_calls] == ["get_weather"]  # type: ignore[union-attr]
    assert choice.message.content == "get_weather said {'city': 'Oslo', 'forecast': 'sunny'}"


PICK_UNITS: Any = {
    "name": "pick_units",
    "description": "Ask the user which units they want.",
    "parameters": {"type": "object", "properties": {"hint": {"type": "string"}}},
}


def test_a_client_tool_round_trip_through_chat_completions(openai_server: ThreadedServer) -> None:
    """The client's tool: the model's call comes back as tool_calls (finish_reason
    'tool_calls'); the tool message answers it and the agent goes on."""
    client = client_for(openai_server)
    session_id = f"s-{uuid.uuid4().hex[:8]}"
    headers = {"X-Eventide-Session-Id": session_id}
    messages: list[Any] = [{"role": "user", "content": "which units?"}]
    first: Any = client.chat.completions.create(
        model="weather",
        messages=messages,
        tools=[{"type": "function", "function": PICK_UNITS}],
        stream=True,
        extra_headers=headers,
    )
    chunks = list(first)
    calls = [tc for c in chunks for tc in (c.choices[0].delta.tool_calls or [])]
    assert [(c.function.name, c.function.arguments) for c in calls if c.function] == [
        ("pick_units", '{"hint": "which units?"}')
    ]
    assert chunks[-1].choices[0].finish_reason == "tool_calls"
    answer = client.chat.completions.create(
        model="weather",
        messages=[
            *messages,
            {
                "role": "assistant",
                "tool_calls": [
                    {
                        "id": calls[0].id,
                        "type": "function",
                        "function": {"name": "pick_units", "arguments": "{}"},
                    }
                ],
            },
            {"role": "tool", "tool_call_id": calls[0].id, "content": '{"units": "metric"}'},
        ],
        tools=[{"type": "function", "function": PICK_UNITS}],
        extra_headers=headers,
    )
    assert answer.choices[0].message.content == "pick_units said {'units': 'metric'}"


def test_a_client_tool_round_trip_through_responses(openai_server: ThreadedServer) -> None:
    client = client_for(openai_server)
    tools: Any = [{"type": "function", **PICK_UNITS}]
    first = client.responses.create(model="weather", input="which units?", tools=tools)
    assert first.status == "completed"
    assert [item.type for item in first.output] == ["function_call"]
    call = first.output[0]
    assert call.type == "function_call" and call.name == "pick_units"
    second = client.responses.create(
        model="weather",
        previous_response_id=first.id,
        input=[{"type": "function_call_output", "call_id": call.call_id, "output": "imperial"}],
        tools=tools,
    )
    assert second.output_text == "pick_units said {'result': 'imperial'}"


def test_a_failing_agent_is_the_apis_server_error(openai_server: ThreadedServer) -> None:
    """A turn that raises: a 500 in the error shape (not streamed), an error frame in a
    chat stream, a 'failed' response with its error; what it committed stays."""
    client = client_for(openai_server)
    messages: Any = [{"role": "user", "content": "go"}]
    with pytest.raises(openai.InternalServerError, match="the warehouse API is down"):
        client.chat.completions.create(model="failing", messages=messages)
    with pytest.raises(openai.APIError, match="the warehouse API is down"):
        list(client.chat.completions.create(model="failing", messages=messages, stream=True))
    failed = client.responses.create(model="failing", input="go")
    assert failed.status == "failed"
    assert failed.error is not None and "the warehouse API is down" in failed.error.message
    assert failed.output_text == "working on it"
    with client.responses.stream(model="failing", input="go") as stream:
        kinds = [event.type for event in stream]
    assert kinds[-1] == "response.failed"


def test_bearer_auth_applies_to_the_openai_routes() -> None:
    from eventide.server import create_app
    from tests.openai_compat.conftest import openai_apps

    api = create_app(apps=openai_apps(), openai=True, auth_token="s3cret")
    with ThreadedServer(api) as server:
        with pytest.raises(openai.AuthenticationError):
            client_for(server).models.list()
        good = openai.OpenAI(base_url=f"{server.url}/v1", api_key="s3cret", max_retries=0)
        answer = good.responses.create(model="chat", input="hi")
        assert answer.output_text == "hi (#1)"
