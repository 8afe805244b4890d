"""``EventPrinter``: how a turn's events look in the terminal."""

from __future__ import annotations

import io

from rich.console import Console

from eventide import Event, EventActions, types
from eventide.cli.event_printer import EventPrinter


def printer() -> tuple[EventPrinter, io.StringIO]:
    out = io.StringIO()
    console = Console(file=out, color_system=None, width=200, soft_wrap=True)
    return EventPrinter(console), out


def text_event(author: str, text: str, *, partial: bool | None = None) -> Event:
    return Event(
        author=author,
        partial=partial,
        content=types.Content(role="model", parts=[types.Part(text=text)]),
    )


def test_streamed_text_is_printed_as_it_arrives_and_not_repeated() -> None:
    """Streaming: partial chunks are shown at once; the complete event only ends the line."""
    p, out = printer()
    p.start_turn()
    p.print_event(text_event("bot", "Hel", partial=True))
    assert out.getvalue() == "bot › Hel"
    p.print_event(text_event("bot", "lo!", partial=True))
    assert out.getvalue() == "bot › Hello!"
    p.print_event(text_event("bot", "Hello!"))
    p.finish_turn()
    assert out.getvalue() == "bot › Hello!\n"


def test_tool_calls_results_transfers_state_artifacts_and_errors_are_one_line_each() -> None:
    """Event kinds: function call, function response with actions (state_delta,
    artifact_delta, transfer_to_agent, escalate) and error events each get a line; the
    synthetic transfer call and response are shown as the transfer only."""
    p, out = printer()
    p.start_turn()
    call = types.FunctionCall(id="c1", name="lookup", args={"q": "x", "n": 2})
    p.print_event(
        Event(
            author="bot",
            content=types.Content(role="model", parts=[types.Part(function_call=call)]),
        )
    )
    response = types.FunctionResponse(id="c1", name="lookup", response={"result": "found"})
    p.print_event(
        Event(
            author="bot",
            content=types.Content(role="user", parts=[types.Part(function_response=response)]),
            actions=EventActions(state_delta={"hits": 1}, artifact_delta={"r.txt": 0}),
        )
    )
    transfer = types.FunctionCall(id="c2", name="transfer_to_agent", args={"agent_name": "x"})
    p.print_event(
        Event(
            author="bot",
            content=types.Content(role="model", parts=[types.Part(function_call=transfer)]),
        )
    )
    p.print_event(Event(author="bot", actions=EventActions(transfer_to_agent="x", escalate=True)))
    p.print_event(Event(author="x", error_code="SAFETY", error_message="blocked"))
    assert p.had_error
    assert out.getvalue().splitlines() == [
        '  → lookup(q="x", n=2)',
        "  ← lookup: found",
        "  · state hits = 1",
        "  · artifact r.txt v0",
        "  ⇢ transfer to x",
        "  ⇡ escalate",
        "  ✗ x: SAFETY: blocked",
    ]


def test_user_events_and_thoughts_are_not_printed_and_long_values_are_clipped() -> None:
    p, out = printer()
    p.print_event(text_event("user", "hi"))
    thought = Event(
        author="bot",
        content=types.Content(role="model", parts=[types.Part(text="hmm", thought=True)]),
    )
    p.print_event(thought)
    p.print_event(Event(author="bot", actions=EventActions(state_delta={"big": "y" * 500})))
    line = out.getvalue().splitlines()[0]
    assert line.startswith("  · state big = yyy")
    assert line.endswith("…") and len(line) < 200
    assert len(out.getvalue().splitlines()) == 1
