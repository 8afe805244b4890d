"""The server's small parts on their own: body parsing, camelCase output, the recorder."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from eventide import LlmAgent, Runner, types
from eventide._json import JsonValue
from eventide.errors import AppLoadError
from eventide.server import create_app
from eventide.server.model_request_recorder import ModelRequestRecorder
from eventide.server.request_models import RunAgentRequest, parse_create_session_body
from eventide.sessions.in_memory_session_service import InMemorySessionService
from eventide.testing import ScriptedModel
from eventide.types import camel_case_keys


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        (None, (None, None)),
        ({}, (None, None)),
        ({"state": {"a": 1}}, ({"a": 1}, None)),
        ({"state": {"a": 1}, "session_id": "s"}, ({"a": 1}, "s")),
        ({"sessionId": "s"}, (None, "s")),
        ({"state": None}, (None, None)),
        # No wrapper key: the whole object is the state.
        ({"plan": "gold", "step": 2}, ({"plan": "gold", "step": 2}, None)),
    ],
)
def test_create_session_body_shapes(body: JsonValue, expected: tuple[object, object]) -> None:
    parsed = parse_create_session_body(body)
    assert (parsed.state, parsed.session_id, parsed.events) == (*expected, [])


@pytest.mark.parametrize(
    "body", [[1], "state", {"session_id": 5}, {"state": "notadict"}, {"state": [1]}]
)
def test_create_session_body_rejects_non_objects(body: JsonValue) -> None:
    with pytest.raises(TypeError):
        parse_create_session_body(body)


@pytest.mark.parametrize(
    ("body", "message"),
    [
        # Issue 33: a typo beside a wrapper key was stored as state with a 200.
        (
            {"state": {"a": 1}, "sesionId": "x"},
            "Unknown key 'sesionId' (did you mean 'sessionId'?)",
        ),
        ({"state": "draft", "step": 2}, "Unknown key 'step'"),
        ({"sessionId": "a/b"}, "contains '/'"),
        ({"sessionId": "s" * 129}, "129 characters long, over the limit of 128"),
        ({"state": {f"k{i}": i for i in range(10_001)}}, "10001 keys, over the limit of 10000"),
        ({f"k{i}": i for i in range(10_001)}, "10001 keys, over the limit of 10000"),
    ],
)
def test_create_session_body_refuses_typos_bad_ids_and_too_many_keys(
    body: JsonValue, message: str
) -> None:
    with pytest.raises(ValueError, match=re.escape(message)):
        parse_create_session_body(body)


def test_run_request_accepts_camel_case_content_parts() -> None:
    request = RunAgentRequest.model_validate(
        {
            "appName": "a",
            "userId": "u",
            "sessionId": "s",
            "newMessage": {
                "role": "user",
                "parts": [{"functionResponse": {"name": "t", "response": {"someKey": 1}}}],
            },
        }
    )
    part = request.new_message.parts[0] if request.new_message.parts else None
    assert part is not None and part.function_response is not None
    assert part.function_response.response == {"someKey": 1}


def test_camel_case_keys_leaves_data_keys_alone() -> None:
    event: JsonValue = {
        "invocation_id": "e-1",
        "content": {"parts": [{"function_call": {"name": "f", "args": {"snake_arg": 1}}}]},
        "actions": {"state_delta": {"user:first_name": "Ann"}, "transfer_to_agent": "b"},
    }
    assert camel_case_keys(event) == {
        "invocationId": "e-1",
        "content": {"parts": [{"functionCall": {"name": "f", "args": {"snake_arg": 1}}}]},
        "actions": {"stateDelta": {"user:first_name": "Ann"}, "transferToAgent": "b"},
    }


async def test_recorder_keeps_only_the_most_recent_links() -> None:
    recorder = ModelRequestRecorder(max_requests=2)
    model = ScriptedModel(responses=["one", "two", "three"])
    runner = Runner(
        app_name="app",
        agent=LlmAgent(name="agent", model=model),
        session_service=InMemorySessionService(),
        plugins=[recorder],
        auto_create_session=True,
    )
    ids = []
    for text in ("a", "b", "c"):
        async for event in runner.run_async(
            user_id="u",
            session_id="s",
            new_message=types.Content(role="user", parts=[types.Part(text=text)]),
        ):
            ids.append(event.id)
    assert recorder.request_for_event(ids[0]) is None
    assert recorder.request_for_event(ids[1]) is model.requests[1]
    assert recorder.request_for_event(ids[2]) is model.requests[2]
    with pytest.raises(ValueError, match="max_requests must be at least 1"):
        ModelRequestRecorder(max_requests=0)


def test_create_app_needs_apps_and_an_existing_apps_folder(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="needs apps_dir"):
        create_app()
    with pytest.raises(AppLoadError, match="does not exist"):
        create_app(apps_dir=tmp_path / "missing")
