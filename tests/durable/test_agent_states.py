"""google-adk's checkpoint API on the invocation context (issue 34): ``agent_states``,
``end_of_agents``, ``set_agent_state``, ``reset_sub_agent_states``,
``populate_invocation_agent_states``, ``should_pause_invocation`` and the state classes
(checked against google-adk 2.13 run side by side)."""

from __future__ import annotations

from collections.abc import AsyncGenerator

import pytest

from eventide import (
    BaseAgent,
    Event,
    EventActions,
    InMemorySessionService,
    InvocationContext,
    ResumabilityConfig,
    types,
)
from eventide.agents.base_agent import BaseAgentState
from eventide.agents.loop_agent import LoopAgentState
from eventide.agents.sequential_agent import SequentialAgentState


class Step(BaseAgent):
    """Answers with its name."""

    async def _run_async_impl(self, ctx: InvocationContext) -> AsyncGenerator[Event, None]:
        yield Event(author=self.name, content=types.Content(parts=[types.Part(text=self.name)]))


async def _context(agent: BaseAgent, *, resumable: bool = True) -> InvocationContext:
    service = InMemorySessionService()
    session = await service.create_session(app_name="app", user_id="u")
    return InvocationContext(
        invocation_id="inv",
        agent=agent,
        session=session,
        session_service=service,
        resumability_config=ResumabilityConfig(is_resumable=resumable),
    )


def test_state_classes_dump_as_the_markers_do() -> None:
    assert BaseAgentState().model_dump(mode="json") == {}
    assert SequentialAgentState(current_sub_agent="a").model_dump(mode="json") == {
        "current_sub_agent": "a"
    }
    assert LoopAgentState(current_sub_agent="a", times_looped=2).model_dump(mode="json") == {
        "current_sub_agent": "a",
        "times_looped": 2,
    }
    with pytest.raises(ValueError):
        BaseAgentState.model_validate({"unknown": 1})


async def test_set_agent_state_follows_google_adk_rules() -> None:
    ctx = await _context(Step(name="a"))
    ctx.set_agent_state("a", agent_state=SequentialAgentState(current_sub_agent="x"))
    assert ctx.agent_states == {"a": {"current_sub_agent": "x"}}
    assert ctx.end_of_agents == {"a": False}
    ctx.set_agent_state("a", end_of_agent=True)  # ending drops the state
    assert ctx.agent_states == {}
    assert ctx.end_of_agents == {"a": True}
    ctx.set_agent_state("a")  # neither: the agent runs afresh
    assert ctx.agent_states == {}
    assert ctx.end_of_agents == {}


async def test_agent_states_are_shared_by_every_agent_of_the_invocation() -> None:
    child = Step(name="child")
    ctx = await _context(BaseAgent(name="root", sub_agents=[child]))
    ctx.agent_states["root"] = {}
    copy = ctx.for_agent(child, branch="root.child")
    copy.set_agent_state("child", end_of_agent=True)
    assert copy.agent_states is ctx.agent_states
    assert ctx.end_of_agents == {"child": True}


async def test_reset_sub_agent_states_clears_every_descendant() -> None:
    deep = Step(name="deep")
    first = BaseAgent(name="first", sub_agents=[deep])
    second = Step(name="second")
    ctx = await _context(BaseAgent(name="root", sub_agents=[first, second]))
    ctx.set_agent_state("root", agent_state=BaseAgentState())
    ctx.set_agent_state("first", agent_state=BaseAgentState())
    ctx.set_agent_state("second", end_of_agent=True)
    ctx.set_agent_state("deep", agent_state=BaseAgentState())
    ctx.reset_sub_agent_states("root")
    assert ctx.agent_states == {"root": {}}
    assert ctx.end_of_agents == {"root": False}
    ctx.reset_sub_agent_states("nobody")  # an unknown agent: nothing to do
    assert ctx.agent_states == {"root": {}}


async def test_populate_reads_this_invocations_markers() -> None:
    ctx = await _context(Step(name="a"))
    text = types.Content(role="model", parts=[types.Part(text="hi")])
    ctx.session.events = [
        Event(invocation_id="older", author="w", actions=EventActions(agent_state={"x": 1})),
        Event(invocation_id="inv", author="user", content=text),
        Event(invocation_id="inv", author="w", actions=EventActions(agent_state={"x": 2})),
        Event(invocation_id="inv", author="a", content=text),
        Event(invocation_id="inv", author="b", content=text),
        Event(invocation_id="inv", author="b", actions=EventActions(end_of_agent=True)),
        Event(invocation_id="inv", author="c"),  # neither content nor a marker
    ]
    ctx.populate_invocation_agent_states()
    assert ctx.agent_states == {"w": {"x": 2}, "a": {}}
    assert ctx.end_of_agents == {"w": False, "a": False, "b": True}


async def test_populate_does_nothing_when_not_resumable() -> None:
    ctx = await _context(Step(name="a"), resumable=False)
    ctx.session.events = [
        Event(invocation_id="inv", author="a", actions=EventActions(end_of_agent=True))
    ]
    ctx.populate_invocation_agent_states()
    assert not ctx.agent_states
    assert not ctx.end_of_agents


@pytest.mark.parametrize("resumable", [True, False])
async def test_should_pause_invocation_on_a_long_running_call(resumable: bool) -> None:
    ctx = await _context(Step(name="a"), resumable=resumable)
    call = types.Part(function_call=types.FunctionCall(id="c1", name="approve", args={}))
    pausing = Event(
        author="a",
        content=types.Content(role="model", parts=[call]),
        long_running_tool_ids={"c1"},
    )
    assert ctx.should_pause_invocation(pausing)
    assert not ctx.should_pause_invocation(
        pausing.model_copy(update={"long_running_tool_ids": set()})
    )
    text_only = pausing.model_copy(
        update={"content": types.Content(role="user", parts=[types.Part(text="x")])}
    )
    assert not ctx.should_pause_invocation(text_only)
