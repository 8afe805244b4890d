"""Shared helpers for LLM agent tests."""

from __future__ import annotations

from typing import Any

from eventide import BaseAgent, Event, InMemoryRunner, Runner


async def start(agent: BaseAgent, **kwargs: Any) -> tuple[Runner, str]:
    runner = InMemoryRunner(agent, app_name="app", **kwargs)
    session = await runner.session_service.create_session(app_name="app", user_id="u")
    return runner, session.id


async def turn(runner: Runner, session_id: str, message: Any = "hi", **kwargs: Any) -> list[Event]:
    return [
        e
        async for e in runner.run_async(
            user_id="u", session_id=session_id, new_message=message, **kwargs
        )
    ]


async def stored_events(runner: Runner, session_id: str) -> list[Event]:
    session = await runner.session_service.get_session(
        app_name="app", user_id="u", session_id=session_id
    )
    assert session is not None
    return session.events
