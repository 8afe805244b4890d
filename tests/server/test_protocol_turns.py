"""``server/protocol_turns``: what the protocol adapters share."""

from __future__ import annotations

import pytest

from eventide import Event, types
from eventide.server.protocol_turns import event_text


def _event(*parts: types.Part) -> Event:
    return Event(author="a", content=types.Content(role="model", parts=list(parts)))


@pytest.mark.parametrize(
    "event",
    [
        Event(author="a"),
        Event(author="a", content=types.Content(role="model")),
        _event(),
        _event(types.Part(text="one")),
        _event(types.Part(text="")),
        _event(types.Part(text="hidden", thought=True)),
        _event(types.Part(function_call=types.FunctionCall(name="f", args={}))),
        _event(types.Part(text="a"), types.Part(text="b")),
        _event(types.Part(text="a"), types.Part(text="t", thought=True), types.Part(text="b")),
        _event(types.Part(text="t", thought=True), types.Part(function_call=types.FunctionCall())),
    ],
    ids=lambda e: repr(e.content.parts if e.content else None)[:60],
)
def test_event_text_is_event_text(event: Event) -> None:
    """The adapters' fast reading of an event's text says what ``Event.text`` says: thoughts
    left out, None when there is no text, an empty text kept."""
    assert event_text(event) == event.text
    assert (event_text(event) is None) == (event.text is None)
