"""Spec state prefixes: a ``temp:`` value is visible to the whole invocation and stored
nowhere. google-adk puts it on the invocation's session object, where code written for it
reads ``ctx.session.state["temp:..."]``; Eventide does the same on the invocation's own copy,
with every session service, and never writes it back."""

from __future__ import annotations

from collections.abc import AsyncGenerator
from pathlib import Path
from typing import Any

import pytest

from eventide import (
    BaseAgent,
    Event,
    EventActions,
    InMemorySessionService,
    InvocationContext,
    Runner,
    SequentialAgent,
    SqliteSessionService,
    types,
)
from eventide.sessions.base_session_service import BaseSessionService


class Writer(BaseAgent):
    async def _run_async_impl(self, ctx: InvocationContext) -> AsyncGenerator[Event, None]:
        yield Event(
            author=self.name,
            actions=EventActions(state_delta={"temp:scratch": "draft-1", "kept": "yes"}),
        )


class Reader(BaseAgent):
    seen: list[Any] = []

    async def _run_async_impl(self, ctx: InvocationContext) -> AsyncGenerator[Event, None]:
        self.seen.append((ctx.session.state.get("temp:scratch"), ctx.session.state.get("kept")))
        yield Event(
            author=self.name,
            content=types.Content(role="model", parts=[types.Part(text="read")]),
        )


@pytest.mark.parametrize("backend", ["memory", "sqlite"])
async def test_a_later_agent_reads_the_temp_value_on_ctx_session_state(
    backend: str, tmp_path: Path
) -> None:
    service: BaseSessionService = (
        InMemorySessionService()
        if backend == "memory"
        else SqliteSessionService(str(tmp_path / "sessions.db"))
    )
    reader = Reader(name="reader", seen=[])
    root = SequentialAgent(name="root", sub_agents=[Writer(name="writer"), reader])
    runner = Runner(app_name="app", agent=root, session_service=service)
    session = await service.create_session(app_name="app", user_id="u")
    yielded: list[Event] = []
    for _ in range(2):
        async for event in runner.run_async(user_id="u", session_id=session.id, new_message="go"):
            yielded.append(event)
    # Each invocation's writer runs before its reader, so both readers see the value.
    assert reader.seen == [("draft-1", "yes"), ("draft-1", "yes")]
    stored = await service.get_session(app_name="app", user_id="u", session_id=session.id)
    assert stored is not None and stored.state == {"kept": "yes"}
    assert [dict(e.actions.state_delta) for e in stored.events if e.author == "writer"] == [
        {"kept": "yes"},
        {"kept": "yes"},
    ]
    assert all("temp:scratch" not in e.actions.state_delta for e in yielded)
    await runner.close()


class ReadThenWrite(BaseAgent):
    seen: list[Any] = []

    async def _run_async_impl(self, ctx: InvocationContext) -> AsyncGenerator[Event, None]:
        self.seen.append(ctx.session.state.get("temp:scratch"))
        yield Event(author=self.name, actions=EventActions(state_delta={"temp:scratch": "draft"}))


@pytest.mark.parametrize("backend", ["memory", "sqlite"])
async def test_the_next_invocation_starts_without_the_temp_value(
    backend: str, tmp_path: Path
) -> None:
    service: BaseSessionService = (
        InMemorySessionService()
        if backend == "memory"
        else SqliteSessionService(str(tmp_path / "sessions.db"))
    )
    agent = ReadThenWrite(name="agent", seen=[])
    runner = Runner(app_name="app", agent=agent, session_service=service)
    session = await service.create_session(app_name="app", user_id="u")
    for _ in range(2):  # the same Runner, the same session, two invocations
        async for _event in runner.run_async(user_id="u", session_id=session.id, new_message="x"):
            pass
    assert agent.seen == [None, None]
    await runner.close()
