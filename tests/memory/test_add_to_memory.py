"""Opt-in memory updates after each invocation: ``AddToMemoryPlugin`` and
``Runner(add_sessions_to_memory=True)``, with the SQLite memory service."""

from __future__ import annotations

from collections.abc import AsyncGenerator, AsyncIterator
from pathlib import Path

import pytest

from eventide import types
from eventide.agents.base_agent import BaseAgent
from eventide.contexts import CallbackContext, InvocationContext
from eventide.errors import ConfigurationError
from eventide.events import Event
from eventide.memory.base_memory_service import BaseMemoryService
from eventide.memory.sql_memory_service import SqlMemoryService
from eventide.plugins.memory_plugin import AddToMemoryPlugin
from eventide.runner import Runner
from eventide.sessions.in_memory_session_service import InMemorySessionService

APP, USER = "concierge", "alice"


class EchoAgent(BaseAgent):
    """Answers every message with 'Noted: <message>'."""

    runs: int = 0

    async def _run_async_impl(self, ctx: InvocationContext) -> AsyncGenerator[Event, None]:
        self.runs += 1
        said = ctx.user_content.text if ctx.user_content is not None else ""
        yield Event(
            author=self.name,
            content=types.Content(role="model", parts=[types.Part(text=f"Noted: {said}")]),
        )


@pytest.fixture
async def memory(tmp_path: Path) -> AsyncIterator[SqlMemoryService]:
    service = SqlMemoryService(f"sqlite+aiosqlite:///{tmp_path / 'memory.db'}")
    yield service
    await service.close()


async def say(runner: Runner, session_id: str, message: str) -> list[Event]:
    return [
        e async for e in runner.run_async(user_id=USER, session_id=session_id, new_message=message)
    ]


async def remembered(memory: BaseMemoryService, query: str) -> list[tuple[str | None, str | None]]:
    response = await memory.search_memory(app_name=APP, user_id=USER, query=query)
    return sorted((m.session_id, m.content.text) for m in response.memories)


def runner_with(memory: SqlMemoryService | None, *, plugin: bool) -> Runner:
    return Runner(
        app_name=APP,
        agent=EchoAgent(name="echo"),
        session_service=InMemorySessionService(),
        memory_service=memory,
        plugins=[AddToMemoryPlugin()] if plugin else [],
        add_sessions_to_memory=not plugin,
        auto_create_session=True,
    )


@pytest.mark.parametrize("plugin", [True, False], ids=["plugin", "runner_setting"])
async def test_each_finished_invocation_is_added_to_memory(
    memory: SqlMemoryService, plugin: bool
) -> None:
    """Spec (Runtime, runner loop: memory updated as events are processed), as an opt-in:
    after every invocation the whole session so far is searchable, each event once."""
    runner = runner_with(memory, plugin=plugin)
    await say(runner, "trip", "my passport number ends in 42")
    assert await remembered(memory, "passport") == [
        ("trip", "Noted: my passport number ends in 42"),
        ("trip", "my passport number ends in 42"),
    ]
    await say(runner, "trip", "and my seat preference is aisle")
    assert await remembered(memory, "passport aisle") == [
        ("trip", "Noted: and my seat preference is aisle"),
        ("trip", "Noted: my passport number ends in 42"),
        ("trip", "and my seat preference is aisle"),
        ("trip", "my passport number ends in 42"),
    ]
    await say(runner, "other-trip", "aisle again please")
    assert [s for s, _ in await remembered(memory, "aisle")] == ["other-trip"] * 2 + ["trip"] * 2


async def test_memory_is_searchable_from_a_later_session_through_the_context(
    memory: SqlMemoryService,
) -> None:
    """What one session remembered, an agent in another session finds via search_memory."""
    runner = runner_with(memory, plugin=True)
    await say(runner, "s1", "the wifi password is swordfish")
    found: list[str | None] = []

    class Recall(BaseAgent):
        async def _run_async_impl(self, ctx: InvocationContext) -> AsyncGenerator[Event, None]:
            response = await CallbackContext(ctx).search_memory("wifi password")
            found.extend(m.content.text for m in response.memories)
            yield Event(
                author=self.name, content=types.Content(role="model", parts=[types.Part(text="ok")])
            )

    recall = Runner(
        app_name=APP,
        agent=Recall(name="recall"),
        session_service=InMemorySessionService(),
        memory_service=memory,
        auto_create_session=True,
    )
    await say(recall, "s2", "what was the wifi password?")
    assert sorted(found, key=str) == [
        "Noted: the wifi password is swordfish",
        "the wifi password is swordfish",
    ]


async def test_plugin_without_a_memory_service_fails_before_the_agent_runs() -> None:
    runner = runner_with(None, plugin=True)
    agent = runner.agent
    assert isinstance(agent, EchoAgent)
    with pytest.raises(ConfigurationError, match="memory_service"):
        await say(runner, "s1", "hello")
    assert agent.runs == 0
