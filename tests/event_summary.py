"""Compact, comparable forms of event sequences for assertions.

``summarize(events)`` turns each event into a tuple ``(author, kind, detail)`` so a test can
assert a whole sequence in one comparison.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from eventide import Event


def kind_of(event: Event) -> tuple[str, Any]:
    """The event's kind and its essential detail."""
    if event.error_code:
        return "error", event.error_code
    calls = event.get_function_calls()
    if calls:
        return "call", tuple((c.name, tuple(sorted((c.args or {}).items()))) for c in calls)
    responses = event.get_function_responses()
    if responses:
        return "response", tuple((r.name, _freeze(r.response)) for r in responses)
    if event.content is not None and event.text is not None:
        return ("partial" if event.partial else "text"), event.text
    if event.actions.transfer_to_agent:
        return "transfer", event.actions.transfer_to_agent
    if event.actions.state_delta:
        return "state", _freeze(event.actions.state_delta)
    return "other", None


def summarize(events: Iterable[Event]) -> list[tuple[str, str, Any]]:
    """``[(author, kind, detail), ...]``."""
    return [(e.author, *kind_of(e)) for e in events]


def _freeze(value: Any) -> Any:
    if isinstance(value, dict):
        return tuple(sorted((k, _freeze(v)) for k, v in value.items()))
    if isinstance(value, list):
        return tuple(_freeze(v) for v in value)
    return value
