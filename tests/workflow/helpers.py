"""Running a workflow with an in-memory Runner and reading back what it did."""

from __future__ import annotations

from typing import Any

from eventide import Event, InMemoryRunner, types
from eventide.agents.base_agent import BaseAgent


async def play(agent: BaseAgent, *turns: str | types.Content) -> tuple[list[Event], dict[str, Any]]:
    """Run each turn in one session; every event yielded, and the final state."""
    runner = InMemoryRunner(agent, app_name="app")
    session = await runner.session_service.create_session(app_name="app", user_id="u")
    events: list[Event] = []
    for turn in turns:
        async for event in runner.run_async(user_id="u", session_id=session.id, new_message=turn):
            events.append(event)
    stored = await runner.session_service.get_session(
        app_name="app", user_id="u", session_id=session.id
    )
    assert stored is not None
    return events, dict(stored.state)


def outputs(events: list[Event]) -> list[tuple[str, Any]]:
    """(node path, output) of each event that has an output."""
    return [(e.node_info.path, e.output) for e in events if e.output is not None]


def answer(call_id: str, value: Any, name: str = "adk_request_input") -> types.Content:
    """The user's answer to a request (a function response)."""
    response = types.FunctionResponse(id=call_id, name=name, response={"result": value})
    return types.Content(role="user", parts=[types.Part(function_response=response)])
