"""``InvocationContext(resumability_config=...)`` built by hand, as google-adk's unit tests of
custom and workflow agents build it: accepted, readable as ``is_resumable`` (google-adk's
name), kept by the per-agent copies, and ``is_resumable=True`` makes the invocation resumable
as ``Runner(resumable=True)`` does."""

from __future__ import annotations

from collections.abc import AsyncGenerator

import pytest

from eventide import (
    BaseAgent,
    Event,
    InMemorySessionService,
    ResumabilityConfig,
    SequentialAgent,
    types,
)
from eventide.contexts import InvocationContext


class Hello(BaseAgent):
    async def _run_async_impl(self, ctx: InvocationContext) -> AsyncGenerator[Event, None]:
        yield Event(
            author=self.name,
            content=types.Content(role="model", parts=[types.Part(text=f"hi {self.name}")]),
        )


async def _context(agent: BaseAgent, config: ResumabilityConfig | None) -> InvocationContext:
    service = InMemorySessionService()
    session = await service.create_session(app_name="app", user_id="u")
    return InvocationContext(
        invocation_id="inv",
        agent=agent,
        session=session,
        session_service=service,
        resumability_config=config,
    )


@pytest.mark.parametrize("config", [None, ResumabilityConfig(is_resumable=False)])
async def test_a_context_that_is_not_resumable_runs_the_agents_plainly(
    config: ResumabilityConfig | None,
) -> None:
    root = SequentialAgent(name="root", sub_agents=[Hello(name="a"), Hello(name="b")])
    ctx = await _context(root, config)
    assert ctx.is_resumable is False and ctx.resumable is False
    events = [e async for e in root.run_async(ctx)]
    assert [(e.author, e.text) for e in events] == [("a", "hi a"), ("b", "hi b")]


async def test_is_resumable_true_makes_the_invocation_record_where_it_is() -> None:
    root = SequentialAgent(name="root", sub_agents=[Hello(name="a"), Hello(name="b")])
    ctx = await _context(root, ResumabilityConfig(is_resumable=True))
    assert ctx.is_resumable and ctx.resumable
    copy = ctx.for_agent(root.sub_agents[0])
    assert copy.resumability_config == ctx.resumability_config and copy.is_resumable
    events = [e async for e in root.run_async(ctx)]
    answers = [(e.author, e.text) for e in events if e.text]
    assert answers == [("a", "hi a"), ("b", "hi b")]
    # The resumable run also yields the workflow's own progress records (no text).
    assert any(e.author == "root" and not e.text for e in events)


async def test_a_copy_for_an_agent_copies_every_field() -> None:
    """``for_agent`` copies each field by hand: a field added to the class and not copied
    would leave the copy without it (or with a stale default)."""
    import dataclasses

    root = SequentialAgent(name="root", sub_agents=[Hello(name="a")])
    ctx = await _context(root, ResumabilityConfig(is_resumable=True))
    ctx.branch = "b"
    ctx.user_content = types.Content(role="user", parts=[types.Part(text="x")])
    child = root.sub_agents[0]
    for copy, branch in ((ctx.for_agent(child), "b"), (ctx.for_agent(child, branch="c"), "c")):
        for field in dataclasses.fields(InvocationContext):
            expected = {"agent": child, "branch": branch}.get(field.name, getattr(ctx, field.name))
            assert getattr(copy, field.name) is expected, field.name
