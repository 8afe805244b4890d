"""``BaseAgent.run_async`` adds a generator around the agent's body only when it has
something to do there (agent callbacks, its own or a plugin's, or a resumable run): every
event of an agent without them comes straight from its body's generator."""

from __future__ import annotations

from collections.abc import AsyncGenerator
from typing import Any

from eventide import Event, InMemorySessionService, types
from eventide.agents.base_agent import BaseAgent
from eventide.contexts import InvocationContext


class Echo(BaseAgent):
    async def _run_async_impl(self, ctx: InvocationContext) -> AsyncGenerator[Event, None]:
        yield Event(author=self.name, content=types.Content(role="model", parts=[]))


_BODY = vars(Echo)["_run_async_impl"].__code__


def _body(events: Any) -> Any:
    """The code object of the generator ``events`` runs."""
    return events.ag_code


async def _context(agent: BaseAgent) -> InvocationContext:
    service = InMemorySessionService()
    session = await service.create_session(app_name="app", user_id="u")
    return InvocationContext(
        invocation_id="inv", agent=agent, session=session, session_service=service
    )


async def _authors(events: AsyncGenerator[Event, None]) -> list[str]:
    return [event.author async for event in events]


async def test_an_agent_without_callbacks_yields_from_its_body_directly() -> None:
    agent = Echo(name="echo")
    events = agent.run_async(await _context(agent))
    assert _body(events) is _BODY
    assert await _authors(events) == ["echo"]


async def test_agent_callbacks_still_run_around_the_body() -> None:
    seen: list[str] = []

    def before(callback_context: Any) -> Any:
        seen.append("before")

    def after(callback_context: Any) -> Any:
        seen.append("after")

    for agent in (
        Echo(name="echo", before_agent_callback=before),
        Echo(name="echo", after_agent_callback=after),
    ):
        events = agent.run_async(await _context(agent))
        assert _body(events) is not _BODY
        assert await _authors(events) == ["echo"]
    assert seen == ["before", "after"]
