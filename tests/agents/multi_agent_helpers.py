"""Helpers for the multi-agent tests: a compact, comparable form of event sequences.

``rows(events)`` turns each event into ``(author, branch, kind, detail)`` so a test asserts a
whole sequence in one comparison. Kinds: ``text``, ``call``, ``response``, ``state`` (an
event with only actions), ``error``. A response's detail names the function and the signal or
error it carried (``transfer_to_agent -> billing``, ``exit_loop -> escalate``,
``transfer_to_agent -> error``), or its result.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from eventide import Event, Runner, types

__all__ = [
    "Row",
    "declaration",
    "new_session",
    "request_texts",
    "row",
    "rows",
    "run_turn",
    "stored_events",
]

Row = tuple[str, str | None, str, Any]


def _args(args: dict[str, Any] | None) -> str:
    return ", ".join(f"{k}={v}" for k, v in sorted((args or {}).items()))


def row(event: Event) -> Row:
    """The event as ``(author, branch, kind, detail)``."""
    author, branch = event.author, event.branch
    if event.error_code:
        return author, branch, "error", event.error_code
    calls = event.get_function_calls()
    if calls:
        return author, branch, "call", "; ".join(f"{c.name}({_args(c.args)})" for c in calls)
    responses = event.get_function_responses()
    if responses:
        details = []
        for response in responses:
            result = response.response or {}
            if "error" in result:
                outcome = "error"
            elif event.actions.transfer_to_agent:
                outcome = event.actions.transfer_to_agent
            elif event.actions.escalate:
                outcome = "escalate"
            else:
                outcome = json.dumps(result.get("result", result), sort_keys=True)
            details.append(f"{response.name} -> {outcome}")
        return author, branch, "response", "; ".join(details)
    if event.content is not None and event.text is not None:
        return author, branch, "partial" if event.partial else "text", event.text
    delta = dict(event.actions.state_delta)
    if event.actions.escalate:
        delta["<escalate>"] = True
    return author, branch, "state", delta


def rows(events: Iterable[Event]) -> list[Row]:
    """``[row(event), ...]``."""
    return [row(e) for e in events]


async def run_turn(runner: Runner, session_id: str, text: str, user_id: str = "u") -> list[Event]:
    """Run one user turn and return the events the Runner yielded."""
    return [
        event
        async for event in runner.run_async(
            user_id=user_id,
            session_id=session_id,
            new_message=types.Content(role="user", parts=[types.Part(text=text)]),
        )
    ]


async def new_session(runner: Runner, user_id: str = "u", **state: Any) -> str:
    """Create a session (with initial ``state``) and return its id."""
    session = await runner.session_service.create_session(
        app_name=runner.app_name, user_id=user_id, state=state or None
    )
    return session.id


async def stored_events(runner: Runner, session_id: str, user_id: str = "u") -> list[Event]:
    """The session's committed events, as the session service returns them."""
    session = await runner.session_service.get_session(
        app_name=runner.app_name, user_id=user_id, session_id=session_id
    )
    assert session is not None
    return list(session.events)


def request_texts(request_contents: list[types.Content]) -> list[str]:
    """Every text of a request's contents, flattened (for history checks)."""
    return [p.text for c in request_contents for p in (c.parts or ()) if p.text]


def declaration(
    request_config: types.GenerateContentConfig, name: str
) -> types.FunctionDeclaration:
    """The function declaration named ``name`` in a request's config."""
    for tool in request_config.tools or ():
        for function in tool.function_declarations or ():
            if function.name == name:
                return function
    raise AssertionError(f"no declaration named {name!r} in the request")
