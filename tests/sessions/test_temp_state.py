"""``temp:`` state is scoped to one invocation, across the agents of that invocation."""

from __future__ import annotations

from collections.abc import AsyncGenerator
from typing import Any

from eventide import (
    BaseAgent,
    CallbackContext,
    Event,
    InMemorySessionService,
    InvocationContext,
    LlmAgent,
    Runner,
    SequentialAgent,
)
from eventide.testing import ScriptedModel


class _Steps(BaseAgent):
    """A custom agent that runs ``steps(self, ctx)``."""

    steps: Any = None

    async def _run_async_impl(self, ctx: InvocationContext) -> AsyncGenerator[Event, None]:
        async for event in self.steps(self, ctx):
            yield event


async def test_a_later_agent_of_the_invocation_reads_an_earlier_agents_temp_value() -> None:
    """Spec state prefixes: ``temp:`` keys are scoped to one invocation. The next step of a
    SequentialAgent (same invocation) reads the ``temp:`` value the previous step wrote and
    committed, on its context's state and (as on google-adk) on ``ctx.session.state``; the
    next invocation does not see it, and it is never stored."""
    seen: list[Any] = []

    async def write(self: BaseAgent, ctx: InvocationContext) -> AsyncGenerator[Event, None]:
        cc = CallbackContext(ctx)
        seen.append(("writer", cc.state.get("temp:draft")))
        cc.state["temp:draft"] = {"text": "first draft"}
        cc.state["plain"] = 1
        yield Event(author=self.name, actions=cc.actions)

    async def read(self: BaseAgent, ctx: InvocationContext) -> AsyncGenerator[Event, None]:
        cc = CallbackContext(ctx)
        seen.append(("reader", cc.state.get("temp:draft")))
        seen.append(("reader sees", "temp:draft" in ctx.session.state))
        yield Event(author=self.name)

    pipeline = SequentialAgent(
        name="pipeline",
        sub_agents=[_Steps(name="writer", steps=write), _Steps(name="reader", steps=read)],
    )
    service = InMemorySessionService()
    runner = Runner(app_name="app", agent=pipeline, session_service=service)
    session = await service.create_session(app_name="app", user_id="u")
    for _ in range(2):
        async for _event in runner.run_async(user_id="u", session_id=session.id, new_message="go"):
            pass
    assert seen == [
        ("writer", None),
        ("reader", {"text": "first draft"}),
        ("reader sees", True),
        ("writer", None),  # the second invocation starts without the first one's temp: keys
        ("reader", {"text": "first draft"}),
        ("reader sees", True),
    ]
    stored = await service.get_session(app_name="app", user_id="u", session_id=session.id)
    assert stored is not None
    assert stored.state == {"plain": 1}
    assert all("temp:draft" not in e.actions.state_delta for e in stored.events)


async def test_an_llm_agent_instruction_reads_a_temp_value_from_an_earlier_step() -> None:
    """Spec state prefixes: ``temp:`` keys are scoped to one invocation; an LlmAgent's
    instruction template ``{temp:key}`` in a later SequentialAgent step reads the value an
    earlier step's ``output_key`` wrote."""
    first = LlmAgent(
        name="first",
        model=ScriptedModel(responses=["the plan"]),
        output_key="temp:plan",
    )
    second_model = ScriptedModel(responses=["done"])
    second = LlmAgent(name="second", model=second_model, instruction="Follow: {temp:plan}")
    runner = Runner(
        app_name="app",
        agent=SequentialAgent(name="pipeline", sub_agents=[first, second]),
        session_service=InMemorySessionService(),
    )
    session = await runner.session_service.create_session(app_name="app", user_id="u")
    async for _event in runner.run_async(user_id="u", session_id=session.id, new_message="go"):
        pass
    request = second_model.requests[-1]
    assert "Follow: the plan" in str(request.config.system_instruction)
    stored = await runner.session_service.get_session(
        app_name="app", user_id="u", session_id=session.id
    )
    assert stored is not None
    assert "temp:plan" not in stored.state
