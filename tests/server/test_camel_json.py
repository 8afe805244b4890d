"""Records written as camelCase JSON by pydantic-core match the renaming done in Python."""

from __future__ import annotations

import json

import pytest

from eventide import types
from eventide.events import Event, EventActions, ToolConfirmation
from eventide.server.camel_json import camel_json, event_json, written_by_pydantic_core
from eventide.sessions.session import Session
from eventide.types import camel_case_keys


def _renamed(record: Event | Session) -> object:
    return camel_case_keys(record.model_dump(mode="json", exclude_none=True))


EVENTS = [
    Event(
        author="agent",
        invocation_id="e-1",
        content=types.Content(role="model", parts=[types.Part(text="héllo ✓")]),
        partial=True,
    ),
    Event(
        author="agent",
        content=types.Content(
            role="model",
            parts=[
                types.Part(
                    function_call=types.FunctionCall(
                        name="f", args={"snake_arg": {"inner_key": [1, {"x_y": None}]}}, id="c1"
                    )
                )
            ],
        ),
        long_running_tool_ids={"c1"},
    ),
    Event(
        author="agent",
        content=types.Content(
            role="user",
            parts=[
                types.Part(
                    function_response=types.FunctionResponse(
                        name="f", response={"result_value": 1}, id="c1"
                    )
                )
            ],
        ),
        actions=EventActions(
            state_delta={"user:first_name": "Ann", "a_b": {"c_d": 1}},
            artifact_delta={"file_one.txt": 2},
            transfer_to_agent="b",
            escalate=True,
            skip_summarization=True,
            requested_tool_confirmations={"c1": ToolConfirmation(hint="h", payload={"p_q": 1})},
            agent_state={"s_t": 1},
            end_of_agent=True,
        ),
    ),
    Event(
        author="agent",
        content=types.Content(
            role="model",
            parts=[types.Part(inline_data=types.Blob(mime_type="image/png", data=b"\x00\x01"))],
        ),
        error_code="E_X",
        error_message="bad",
        custom_metadata={"k_l": 1},
        turn_complete=True,
    ),
    Event.model_validate(
        {
            "author": "agent",
            "grounding_metadata": {"web_search_queries": ["q"], "retrieval_metadata": {"a_b": 1}},
            "usage_metadata": {"prompt_token_count": 3, "candidates_token_count": 4},
        }
    ),
]


@pytest.mark.parametrize("event", EVENTS)
def test_event_json_is_the_renamed_dump(event: Event) -> None:
    written = event_json(event)
    assert json.loads(written) == _renamed(event)
    assert ", " not in written and '": ' not in written  # compact, as frames were
    assert written_by_pydantic_core(Event)


def test_data_fields_keep_their_keys() -> None:
    sent = json.loads(event_json(EVENTS[2]))
    assert sent["actions"]["stateDelta"] == {"user:first_name": "Ann", "a_b": {"c_d": 1}}
    assert sent["content"]["parts"][0]["functionResponse"]["response"] == {"result_value": 1}
    grounding = json.loads(event_json(EVENTS[4]))["groundingMetadata"]
    assert grounding == {"web_search_queries": ["q"], "retrieval_metadata": {"a_b": 1}}
    assert json.loads(event_json(EVENTS[4]))["usageMetadata"]["promptTokenCount"] == 3


def test_session_json_is_the_renamed_dump() -> None:
    session = Session(
        id="s",
        app_name="app",
        user_id="u",
        state={"snake_key": {"inner_key": 1}},
        events=EVENTS[:3],
        last_update_time=12.5,
    )
    sent = json.loads(camel_json(session))
    assert sent == _renamed(session)
    assert sent["appName"] == "app" and sent["lastUpdateTime"] == 12.5
    assert sent["state"] == {"snake_key": {"inner_key": 1}}
    assert written_by_pydantic_core(Session)
