"""The AG-UI frames Eventide writes from fields are the official encoder's bytes, for every
kind of event a run sends (``eventide.ag_ui.frames``), values of every JSON type included."""

from __future__ import annotations

from typing import Any

import pytest

from eventide import Event, EventActions, types
from eventide.ag_ui.event_stream import AgUiEvents
from eventide.ag_ui.frames import content_frame
from eventide.protocol import REQUEST_CONFIRMATION_FUNCTION
from tests.ag_ui.stream_rules import check_stream, encoded_frames

# Values whose JSON spelling differs between serializers (small exponents, non-ASCII,
# escapes, big integers), none of which may change a frame's bytes.
ODD_VALUES: dict[str, Any] = {
    "small": 1e-7,
    "big": 1e20,
    "int": 2**70,
    "text": 'é 漢字 🙂 "q" \\ \n \u0001',
    "nested": {"list": [1, 2.5, None, True], "empty": {}},
    "a/b~c": "a key a JSON Pointer escapes",
}


def _model(event_id: str, *, partial: bool = False, **content: Any) -> Event:
    return Event(
        id=event_id,
        author="helper",
        invocation_id="inv",
        partial=partial,
        content=types.Content(role="model", parts=[types.Part(**content)]),
    )


def _run(events: list[Event], *, client_tools: set[str] | None = None) -> list[dict[str, Any]]:
    writer = AgUiEvents(
        thread_id="t-1",
        run_id="r-1",
        state=ODD_VALUES,
        messages=[],
        client_tools=client_tools or set(),
    )
    frames: list[bytes] = []
    writer.start(frames.append)
    for event in events:
        writer.event(event, frames.append)
    writer.end(None, frames.append)
    written = encoded_frames(b"".join(frames).decode())
    check_stream(written)
    return written


def test_a_full_run_writes_the_encoders_bytes() -> None:
    """Run start, state snapshot and delta, steps, streamed text, tool call and result,
    usage on RUN_FINISHED: each frame is the package's encoding of its event."""
    answer = _model("e-2", text="Hello there")
    answer.usage_metadata = types.UsageMetadata(prompt_token_count=7, candidates_token_count=3)
    call = _model("e-3", function_call=types.FunctionCall(id="c-1", name="look", args=ODD_VALUES))
    result = Event(
        id="e-4",
        author="helper",
        invocation_id="inv",
        content=types.Content(
            role="user",
            parts=[
                types.Part(
                    function_response=types.FunctionResponse(
                        id="c-1", name="look", response=ODD_VALUES
                    )
                )
            ],
        ),
        actions=EventActions(state_delta={**ODD_VALUES, "temp:hidden": 1}),
    )
    frames = _run([_model("e-2", partial=True, text="Hello "), answer, call, result])
    assert [f["type"] for f in frames] == [
        "RUN_STARTED",
        "STATE_SNAPSHOT",
        "STEP_STARTED",
        "TEXT_MESSAGE_START",
        "TEXT_MESSAGE_CONTENT",
        "TEXT_MESSAGE_CONTENT",
        "TEXT_MESSAGE_END",
        "TOOL_CALL_START",
        "TOOL_CALL_ARGS",
        "TOOL_CALL_END",
        "TOOL_CALL_RESULT",
        "STATE_DELTA",
        "STEP_FINISHED",
        "RUN_FINISHED",
    ]
    assert frames[1]["snapshot"] == ODD_VALUES
    assert "temp:hidden" not in {op["path"] for op in frames[-3]["delta"]}
    assert frames[-1]["usage"] == [{"inputTokens": 7, "outputTokens": 3, "totalTokens": 10}]


def test_client_tool_calls_and_interrupts_end_the_run_as_the_encoder_writes_it() -> None:
    """A client tool's call is ``pendingToolCallIds``; a confirmation makes the run end with
    an interrupt outcome after the state and messages snapshots."""
    pick = _model("e-1", function_call=types.FunctionCall(id="c-1", name="pick", args={}))
    pick.long_running_tool_ids = {"c-1"}
    frames = _run([pick], client_tools={"pick"})
    assert frames[-1]["outcome"] == {"type": "success", "pendingToolCallIds": ["c-1"]}

    confirm = _model(
        "e-2",
        function_call=types.FunctionCall(
            id="c-2",
            name=REQUEST_CONFIRMATION_FUNCTION,
            args={
                "originalFunctionCall": {"id": "c-0", "name": "pay", "args": {"amount": 1e-7}},
                "toolConfirmation": {"hint": "Pay é?"},
            },
        ),
    )
    confirm.long_running_tool_ids = {"c-2"}
    said = _model("e-1", text="Paying.")
    call = _model("e-2", function_call=types.FunctionCall(id="c-0", name="pay", args={"a": 1}))
    frames = _run([said, call, confirm])
    assert [f["type"] for f in frames[-3:]] == [
        "STATE_SNAPSHOT",
        "MESSAGES_SNAPSHOT",
        "RUN_FINISHED",
    ]
    # The run's messages, as a client's list holds them: the text, then the call shown
    # under the same message (the confirmation is an interrupt, not a call).
    assert frames[-2]["messages"] == [
        {"id": "e-1", "role": "assistant", "content": "Paying."},
        {
            "id": "e-2",
            "role": "assistant",
            "toolCalls": [
                {
                    "id": "c-0",
                    "type": "function",
                    "function": {"name": "pay", "arguments": '{"a": 1}'},
                }
            ],
        },
    ]
    assert frames[-1]["outcome"]["type"] == "interrupt"
    assert frames[-1]["outcome"]["interrupts"][0]["id"] == "c-2"


@pytest.mark.parametrize(
    "delta",
    ["plain", 'quotes " and \\ backslash', "line\nbreak\ttab", "é ü 漢字 🙂", "\u0001\u001f", ""],
)
def test_content_frames_are_the_packages_encoding(delta: str) -> None:
    from ag_ui.core import TextMessageContentEvent
    from ag_ui.encoder import EventEncoder

    expected = EventEncoder().encode(TextMessageContentEvent(message_id="m-1", delta=delta))
    assert content_frame("m-1", delta) == expected.encode()
