"""The Open Responses compliance cases against ``/v1/responses``, checked offline.

The Open Responses compliance suite is a Bun script in the openresponses repository,
published neither on npm nor on PyPI, so it cannot run here. These tests send the same
requests its cases send (basic, streaming, system prompt, tool calling, streamed tool
calling, image input, multi-turn) and apply the same checks: every answer, and every
streamed event, must validate against the Open Responses schema (``openresponses-types``,
the specification's models from PyPI), plus each case's own checks (output present,
status ``completed``, the function-call events of a streamed call).
"""

from __future__ import annotations

import json
from typing import Any

import httpx
import openresponses_types as spec
import pytest
from pydantic import BaseModel

from tests.server.harness import ThreadedServer

WEATHER_TOOL = {
    "type": "function",
    "name": "get_weather",
    "description": "Get the current weather for a location",
    "parameters": {
        "type": "object",
        "properties": {
            "location": {
                "type": "string",
                "description": "The city and state, e.g. San Francisco, CA",
            }
        },
        "required": ["location"],
    },
}
# A 1x1 PNG.
IMAGE = (
    "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQ"
    "DwAEhQGAhKmMIQAAAABJRU5ErkJggg=="
)

CASES: dict[str, tuple[dict[str, Any], bool]] = {
    "basic-response": (
        {
            "input": [
                {"type": "message", "role": "user", "content": "Say hello in exactly 3 words."}
            ]
        },
        False,
    ),
    "streaming-response": (
        {"input": [{"type": "message", "role": "user", "content": "Count from 1 to 5."}]},
        True,
    ),
    "system-prompt": (
        {
            "input": [
                {"type": "message", "role": "system", "content": "You are a pirate."},
                {"type": "message", "role": "user", "content": "Say hello."},
            ]
        },
        False,
    ),
    "tool-calling": (
        {
            "input": [{"type": "message", "role": "user", "content": "What's the weather in SF?"}],
            "tools": [WEATHER_TOOL],
        },
        False,
    ),
    "tool-calling-streaming": (
        {
            "input": [{"type": "message", "role": "user", "content": "What's the weather in SF?"}],
            "tools": [WEATHER_TOOL],
        },
        True,
    ),
    "image-input": (
        {
            "input": [
                {
                    "type": "message",
                    "role": "user",
                    "content": [
                        {"type": "input_text", "text": "What do you see in this image?"},
                        {"type": "input_image", "image_url": IMAGE},
                    ],
                }
            ]
        },
        False,
    ),
    "multi-turn": (
        {
            "input": [
                {"type": "message", "role": "user", "content": "My name is Alice."},
                {"type": "message", "role": "assistant", "content": "Hello Alice!"},
                {"type": "message", "role": "user", "content": "What is my name?"},
            ]
        },
        False,
    ),
}

STREAM_EVENTS: dict[str, type[BaseModel]] = {
    "response.created": spec.ResponseCreatedStreamingEvent,
    "response.in_progress": spec.ResponseInProgressStreamingEvent,
    "response.completed": spec.ResponseCompletedStreamingEvent,
    "response.failed": spec.ResponseFailedStreamingEvent,
    "response.output_item.added": spec.ResponseOutputItemAddedStreamingEvent,
    "response.output_item.done": spec.ResponseOutputItemDoneStreamingEvent,
    "response.content_part.added": spec.ResponseContentPartAddedStreamingEvent,
    "response.content_part.done": spec.ResponseContentPartDoneStreamingEvent,
    "response.output_text.delta": spec.ResponseOutputTextDeltaStreamingEvent,
    "response.output_text.done": spec.ResponseOutputTextDoneStreamingEvent,
    "response.function_call_arguments.delta": spec.ResponseFunctionCallArgumentsDeltaStreamingEvent,
    "response.function_call_arguments.done": spec.ResponseFunctionCallArgumentsDoneStreamingEvent,
}


def streamed_events(response: httpx.Response) -> list[dict[str, Any]]:
    """The JSON of each ``data:`` frame (the ``event:`` line must name the same type)."""
    events: list[dict[str, Any]] = []
    name = ""
    for line in response.iter_lines():
        if line.startswith("event:"):
            name = line[6:].strip()
        elif line.startswith("data:"):
            data = json.loads(line[5:])
            assert data["type"] == name
            events.append(data)
    return events


@pytest.mark.parametrize("case", list(CASES))
def test_open_responses_case(openai_server: ThreadedServer, case: str) -> None:
    """Spec (Open Responses): the answer is a valid ResponseResource, status completed,
    with output; a streamed answer is valid event by event, numbered in order."""
    body, streaming = CASES[case]
    request = {"model": "assistant", **body, "stream": streaming}
    with httpx.Client(base_url=openai_server.url, timeout=30) as http:
        if streaming:
            with http.stream("POST", "/v1/responses", json=request) as answer:
                assert answer.status_code == 200
                events = streamed_events(answer)
            for event in events:
                STREAM_EVENTS[event["type"]].model_validate(event)
            assert [e["sequence_number"] for e in events] == list(range(len(events)))
            assert events[0]["type"] == "response.created"
            final = events[-1]["response"]
            kinds = [e["type"] for e in events]
        else:
            answer = http.post("/v1/responses", json=request)
            assert answer.status_code == 200, answer.text
            final = answer.json()
            kinds = []
    resource = spec.ResponseResource.model_validate(final)
    assert resource.status == "completed"
    assert resource.output
    if case.startswith("tool-calling"):
        assert [item.type for item in resource.output] == ["function_call"]
    if case == "tool-calling-streaming":
        added = [e["item"]["type"] for e in events if e["type"] == "response.output_item.added"]
        done = [e["item"]["type"] for e in events if e["type"] == "response.output_item.done"]
        assert added == done == ["function_call"]
        assert "response.function_call_arguments.delta" in kinds
        assert "response.function_call_arguments.done" in kinds
    if case == "image-input":
        assert "1 image(s)" in final["output"][0]["content"][0]["text"]
    if case == "multi-turn":
        assert "2 texts" in final["output"][0]["content"][0]["text"]
