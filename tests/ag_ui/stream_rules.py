"""Checks an AG-UI event stream against ``ag-ui-protocol``'s models and the spec's
ordering rules (the ones the official client enforces as it reads a stream)."""

from __future__ import annotations

import json
from typing import Any

from ag_ui.core import Event
from ag_ui.encoder import EventEncoder
from pydantic import TypeAdapter

_EVENT: TypeAdapter[Any] = TypeAdapter(Event)


def encoded_frames(body: str) -> list[dict[str, Any]]:
    """The frames of a stream's whole body, each checked to be, byte for byte, what the
    package's ``EventEncoder`` writes for the event it holds (Eventide writes most frames
    from their fields, without the models)."""
    encoder = EventEncoder()
    frames: list[dict[str, Any]] = []
    for chunk in body.split("\n\n")[:-1]:
        assert chunk.startswith("data: "), chunk
        event = _EVENT.validate_json(chunk[6:])
        assert encoder.encode(event) == chunk + "\n\n", (chunk, encoder.encode(event))
        frames.append(json.loads(chunk[6:]))
    assert body.endswith("\n\n") or not body, body[-200:]
    return frames


def check_stream(frames: list[dict[str, Any]]) -> list[Any]:
    """Validate every frame as an AG-UI event and check the ordering rules; the events.

    Rules: a run opens with RUN_STARTED (or is a lone RUN_ERROR) and nothing follows its
    RUN_FINISHED or RUN_ERROR but a new RUN_STARTED; text messages, tool calls and steps
    open once and close before they are used again; content and args only inside an
    open message or call; RUN_FINISHED only when none is left open.
    """
    events = [_EVENT.validate_python(frame) for frame in frames]
    messages: set[str] = set()
    calls: set[str] = set()
    steps: set[str] = set()
    state = "before"
    for index, frame in enumerate(frames):
        kind = frame["type"]
        where = f"event {index} ({kind})"
        if state == "before":
            assert kind in ("RUN_STARTED", "RUN_ERROR"), f"{where}: a run must start first"
        if state == "ended":
            assert kind == "RUN_STARTED", f"{where}: the run is over"
        if kind == "RUN_STARTED":
            assert state in ("before", "ended"), f"{where}: a run is already active"
            state = "running"
        elif kind == "RUN_ERROR":
            state = "ended"
        elif kind == "RUN_FINISHED":
            assert not (messages or calls or steps), f"{where}: {messages} {calls} {steps} open"
            state = "ended"
        elif kind == "TEXT_MESSAGE_START":
            assert frame["messageId"] not in messages, f"{where}: already open"
            messages.add(frame["messageId"])
        elif kind in ("TEXT_MESSAGE_CONTENT", "TEXT_MESSAGE_END"):
            assert frame["messageId"] in messages, f"{where}: no open message"
            if kind == "TEXT_MESSAGE_END":
                messages.remove(frame["messageId"])
        elif kind == "TOOL_CALL_START":
            assert frame["toolCallId"] not in calls, f"{where}: already open"
            calls.add(frame["toolCallId"])
        elif kind in ("TOOL_CALL_ARGS", "TOOL_CALL_END"):
            assert frame["toolCallId"] in calls, f"{where}: no open call"
            if kind == "TOOL_CALL_END":
                calls.remove(frame["toolCallId"])
        elif kind == "STEP_STARTED":
            assert frame["stepName"] not in steps, f"{where}: step already active"
            steps.add(frame["stepName"])
        elif kind == "STEP_FINISHED":
            assert frame["stepName"] in steps, f"{where}: step not started"
            steps.remove(frame["stepName"])
    assert state == "ended", "the stream ended with the run still active"
    return events
