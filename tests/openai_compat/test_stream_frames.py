"""The streamed text frames: chat's written from a template are the frames the generic code
writes; every frame is one compact JSON object whose text survives any character."""

from __future__ import annotations

import json

import pytest

from eventide import Event, types
from eventide.openai_compat.chat_completions import ChatChunks
from eventide.openai_compat.responses_api import ResponseEvents, ResponseShape
from eventide.openai_compat.turn_output import TurnOutput

DELTAS = ["plain", 'a "quote" \\ and \n newline', "é 漢字 🙂", "\u0001"]


def _partial(text: str) -> Event:
    return Event(
        id="ev-1",
        author="agent",
        partial=True,
        content=types.Content(role="model", parts=[types.Part(text=text)]),
    )


@pytest.mark.parametrize("delta", DELTAS)
def test_chat_content_frames(delta: str) -> None:
    output = TurnOutput(show_tool_calls=False, client_tools=set())
    chunks = ChatChunks(output, completion_id="chatcmpl-1", model="app", usage=False)
    frames: list[bytes] = []
    chunks.event(_partial(delta), frames.append)
    assert frames == [chunks._chunk({"content": delta})]
    data = frames[0].decode()
    assert data.startswith("data: {") and data.endswith("}\n\n")
    assert json.loads(data[6:])["choices"][0]["delta"] == {"content": delta}


@pytest.mark.parametrize("delta", DELTAS)
def test_responses_text_delta_frames(delta: str) -> None:
    shape = ResponseShape(response_id="resp_1", model="app", body={}, conversation=None)
    writer = ResponseEvents(shape, TurnOutput(show_tool_calls=False, client_tools=set()))
    frames: list[bytes] = []
    writer.event(_partial(delta), frames.append)
    frame = frames[-1].decode()
    expected = {
        "type": "response.output_text.delta",
        "item_id": "msg_ev-1",
        "output_index": 0,
        "content_index": 0,
        "delta": delta,
        "logprobs": [],
        "sequence_number": 2,
    }
    head, data = frame.split("\n", 1)
    assert head == "event: response.output_text.delta"
    assert data.startswith("data: {") and data.endswith("}\n\n")
    assert json.loads(data[6:]) == expected
    # compact, as OpenAI's own frames (and one frame per line of data)
    assert (
        data == "data: " + json.dumps(expected, ensure_ascii=False, separators=(",", ":")) + "\n\n"
    )
