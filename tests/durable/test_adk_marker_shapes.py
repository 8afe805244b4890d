"""The markers of a resumable invocation in google-adk 2.13's shapes (issue 34), and resuming
from ``InvocationContext.agent_states`` set by hand.

Expected lists were taken from google-adk 2.13 run side by side on the same agents: a
workflow agent's ``agent_state`` before each step and a separate ``end_of_agent`` event at
its end; a custom agent (its own ``_run_async_impl`` only) commits no end marker in a
sequence; an ``LlmAgent`` commits its end marker after its answer, and right after a
transfer (before the target's events).

Where durability needs it, Eventide differs on purpose: a custom agent that is a fan-out's
branch commits its end marker (google-adk 2.13 commits none, and reruns the branch on
resume), and so does the last step of a sequence or loop whose end waits for an after-agent
callback, so a finished custom agent is skipped on resume rather than run again or refused."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator
from typing import Any

import pytest

from eventide import (
    App,
    BaseAgent,
    Event,
    InMemoryRunner,
    InMemorySessionService,
    InvocationContext,
    LlmAgent,
    LoopAgent,
    ParallelAgent,
    ResumabilityConfig,
    SequentialAgent,
    types,
)
from eventide.agents.base_agent import BaseAgentState
from eventide.agents.loop_agent import LoopAgentState
from eventide.agents.sequential_agent import SequentialAgentState
from eventide.errors import ResumeError
from eventide.runtime.markers import FINISHED, invocation_mark
from eventide.runtime.replay import AgentProgress, ResumeScope
from eventide.testing import ScriptedModel, text_response, tool_call_response

END = "end_of_agent"


class Hello(BaseAgent):
    """Says hello once, after ``delay`` seconds (``runs`` counts its runs: its side effect)."""

    delay: float = 0
    runs: int = 0

    async def _run_async_impl(self, ctx: InvocationContext) -> AsyncGenerator[Event, None]:
        self.runs += 1
        await asyncio.sleep(self.delay)
        yield Event(
            author=self.name,
            branch=ctx.branch,
            content=types.Content(parts=[types.Part(text=f"hi {self.name}")]),
        )


class Once(Hello):
    """Says hello, and resumes by doing nothing when it had (its position is its own)."""

    def _resume_async_impl(
        self, ctx: InvocationContext, scope: ResumeScope, progress: AgentProgress
    ) -> AsyncGenerator[Event, None]:
        return _nothing()


async def _nothing() -> AsyncGenerator[Event, None]:
    return
    yield  # pragma: no cover - makes this an async generator


def simplify(events: list[Event]) -> list[tuple[str, Any]]:
    """google-adk's reading of resumable events: text, else the end marker, else the state."""
    out: list[tuple[str, Any]] = []
    for event in events:
        if event.content is not None:
            out.append((event.author, event.text))
        elif event.actions.end_of_agent:
            out.append((event.author, END))
        elif event.actions.agent_state is not None:
            out.append((event.author, event.actions.agent_state))
    return out


async def _run(agent: BaseAgent, states: dict[str, Any] | None = None) -> list[Event]:
    service = InMemorySessionService()
    session = await service.create_session(app_name="app", user_id="u")
    ctx = InvocationContext(
        invocation_id="inv",
        agent=agent,
        session=session,
        session_service=service,
        resumability_config=ResumabilityConfig(is_resumable=True),
    )
    ctx.agent_states.update(states or {})
    events = [e async for e in agent.run_async(ctx)]
    assert not ctx.agent_states  # a restored entry is used once
    return events


async def test_a_sequence_of_custom_agents_commits_google_adks_markers() -> None:
    steps = SequentialAgent(name="w", sub_agents=[Hello(name="a1"), Hello(name="a2")])
    events = await _run(steps)
    assert simplify(events) == [
        ("w", {"current_sub_agent": "a1"}),
        ("a1", "hi a1"),
        ("w", {"current_sub_agent": "a2"}),
        ("a2", "hi a2"),
        ("w", END),
    ]
    assert invocation_mark(events[-1]) == FINISHED


async def test_a_loop_commits_a_marker_per_step_and_one_end() -> None:
    loop = LoopAgent(name="w", sub_agents=[Hello(name="a1")], max_iterations=2)
    assert simplify(await _run(loop)) == [
        ("w", {"current_sub_agent": "a1", "times_looped": 0}),
        ("a1", "hi a1"),
        ("w", {"current_sub_agent": "a1", "times_looped": 1}),
        ("a1", "hi a1"),
        ("w", END),
    ]


async def test_a_fan_out_ends_once_after_its_branches() -> None:
    steps = SequentialAgent(name="steps", sub_agents=[Hello(name="a2"), Hello(name="a3")])
    fan = ParallelAgent(name="fan", sub_agents=[steps, Hello(name="a1", delay=0.2)])
    events = await _run(fan)
    assert simplify(events) == [
        ("fan", {}),
        ("steps", {"current_sub_agent": "a2"}),
        ("a2", "hi a2"),
        ("steps", {"current_sub_agent": "a3"}),
        ("a3", "hi a3"),
        ("steps", END),
        ("a1", "hi a1"),
        ("a1", END),  # Eventide only: a custom branch marks its end (see the crash tests)
        ("fan", END),
    ]
    assert {e.branch for e in events[1:6]} == {"fan.steps"}
    assert {e.branch for e in events[6:8]} == {"fan.a1"}


async def test_an_agent_that_resumes_itself_marks_its_end() -> None:
    steps = SequentialAgent(name="w", sub_agents=[Once(name="a1")])
    assert simplify(await _run(steps)) == [
        ("w", {"current_sub_agent": "a1"}),
        ("a1", "hi a1"),
        ("a1", END),
        ("w", END),
    ]


async def test_a_sequence_resumes_from_its_agent_state() -> None:
    steps = SequentialAgent(name="w", sub_agents=[Hello(name="a1"), Hello(name="a2")])
    state = SequentialAgentState(current_sub_agent="a2").model_dump(mode="json")
    assert simplify(await _run(steps, {"w": state})) == [("a2", "hi a2"), ("w", END)]


async def test_a_loop_resumes_from_its_step_and_round() -> None:
    loop = LoopAgent(name="w", sub_agents=[Hello(name="a1"), Hello(name="a2")], max_iterations=2)
    state = LoopAgentState(current_sub_agent="a2", times_looped=1).model_dump(mode="json")
    assert simplify(await _run(loop, {"w": state})) == [("a2", "hi a2"), ("w", END)]


async def test_a_fan_out_resumes_each_branch_from_its_state() -> None:
    steps = SequentialAgent(name="steps", sub_agents=[Hello(name="a2"), Hello(name="a3")])
    fan = ParallelAgent(name="fan", sub_agents=[steps, Hello(name="a1", delay=0.2)])
    states = {
        "fan": BaseAgentState().model_dump(mode="json"),
        "steps": SequentialAgentState(current_sub_agent="a3").model_dump(mode="json"),
    }
    assert simplify(await _run(fan, states)) == [
        ("a3", "hi a3"),
        ("steps", END),
        ("a1", "hi a1"),
        ("a1", END),
        ("fan", END),
    ]


async def _turn(runner: InMemoryRunner, session_id: str, text: str) -> list[Event]:
    return [
        e
        async for e in runner.run_async(
            user_id="u",
            session_id=session_id,
            new_message=types.Content(role="user", parts=[types.Part(text=text)]),
        )
    ]


def _resumable_runner(agent: BaseAgent) -> InMemoryRunner:
    app = App(
        name="app",
        root_agent=agent,
        resumability_config=ResumabilityConfig(is_resumable=True),
    )
    return InMemoryRunner(app=app)


async def test_an_llm_agent_commits_its_end_marker_after_its_answer() -> None:
    def lookup() -> dict[str, str]:
        return {"result": "ok"}

    model = ScriptedModel()
    model.add(tool_call_response(("lookup", {})))
    model.add(text_response("done"))
    runner = _resumable_runner(LlmAgent(name="root", model=model, tools=[lookup]))
    session = await runner.session_service.create_session(app_name="app", user_id="u")
    events = await _turn(runner, session.id, "go")
    assert [(author, value) for author, value in simplify(events) if value in ("done", END)] == [
        ("root", "done"),
        ("root", END),
    ]
    assert not events[-2].actions.end_of_agent  # the answer itself carries no marker
    assert invocation_mark(events[-1]) == FINISHED


async def test_a_transfer_ends_the_agent_first_and_the_next_turn_stays_with_the_target() -> None:
    sub_model = ScriptedModel()
    sub_model.add(text_response("first"))
    sub_model.add(text_response("second"))
    root_model = ScriptedModel()
    root_model.add(tool_call_response(("transfer_to_agent", {"agent_name": "sub"})))
    sub = LlmAgent(name="sub", model=sub_model)
    runner = _resumable_runner(LlmAgent(name="root", model=root_model, sub_agents=[sub]))
    session = await runner.session_service.create_session(app_name="app", user_id="u")
    first = await _turn(runner, session.id, "go")
    assert simplify(first)[2:] == [("root", END), ("sub", "first"), ("sub", END)]
    assert invocation_mark(first[-1]) == FINISHED and not first[-1].actions.end_of_agent
    # The root's end marker and the invocation's finished marker are not answers: the
    # user's next message goes to the agent that answered.
    second = await _turn(runner, session.id, "again")
    assert simplify(second) == [("sub", "second"), ("sub", END)]


class Flaky(Hello):
    """Fails on its first run (after ``delay``) before committing anything, then says hello."""

    async def _run_async_impl(self, ctx: InvocationContext) -> AsyncGenerator[Event, None]:
        await asyncio.sleep(self.delay)
        if self.runs == 0:
            self.runs += 1
            raise ConnectionError("crash")
        async for event in super()._run_async_impl(ctx):
            yield event


class Halfway(Hello):
    """Says hello, then fails on its first run: it crashed mid-run, after committing output."""

    async def _run_async_impl(self, ctx: InvocationContext) -> AsyncGenerator[Event, None]:
        async for event in super()._run_async_impl(ctx):
            yield event
        if self.runs == 1:
            raise ConnectionError("crash")


class FailsOnce:
    """An after-agent callback that fails the first time it runs (the crash between a
    workflow's last step and its end marker), then lets the agent end."""

    def __init__(self) -> None:
        self.calls = 0

    def __call__(self, callback_context: Any) -> None:
        self.calls += 1
        if self.calls == 1:
            raise ConnectionError("crash")


async def _crash_then_resume(root: BaseAgent) -> list[Event]:
    runner = _resumable_runner(root)
    session = await runner.session_service.create_session(app_name="app", user_id="u")
    with pytest.raises(ConnectionError):
        await _turn(runner, session.id, "go")
    return [e async for e in runner.resume_async(user_id="u", session_id=session.id)]


async def test_a_custom_branch_that_finished_is_skipped_on_resume() -> None:
    """A custom agent that finished in a fan-out branch while a sibling still ran commits
    its end marker; the sibling crashes, and resuming skips it (its side effect is not
    repeated) and runs again the sibling, which had committed nothing."""
    a1, b = Hello(name="a1"), Flaky(name="b", delay=0.1)
    fan = ParallelAgent(name="fan", sub_agents=[a1, b])
    runner = _resumable_runner(fan)
    session = await runner.session_service.create_session(app_name="app", user_id="u")
    with pytest.raises(ConnectionError):
        await _turn(runner, session.id, "go")
    stored = await runner.session_service.get_session(
        app_name="app", user_id="u", session_id=session.id
    )
    assert stored is not None
    assert simplify(stored.events[1:]) == [("fan", {}), ("a1", "hi a1"), ("a1", END)]
    assert stored.events[-1].branch == "fan.a1"
    resumed = [e async for e in runner.resume_async(user_id="u", session_id=session.id)]
    assert simplify(resumed) == [("b", "hi b"), ("b", END), ("fan", END)]
    assert (a1.runs, b.runs) == (1, 2)


async def test_a_custom_branch_that_crashed_mid_run_is_not_resumed() -> None:
    """One that committed output and then crashed cannot be told from a half-run:
    ResumeError names it and says what to override; nothing runs again."""
    a1, b = Halfway(name="a1"), Hello(name="b", delay=0.2)
    fan = ParallelAgent(name="fan", sub_agents=[a1, b])
    with pytest.raises(ResumeError, match=r"'a1'.*_resume_async_impl"):
        await _crash_then_resume(fan)
    assert a1.runs == 1


async def test_a_custom_branch_with_its_own_continuation_resumes() -> None:
    fan = ParallelAgent(name="fan", sub_agents=[Once(name="a1"), Flaky(name="b", delay=0.1)])
    assert simplify(await _crash_then_resume(fan)) == [("b", "hi b"), ("b", END), ("fan", END)]


async def test_a_finished_last_step_is_skipped_when_the_sequence_end_fails() -> None:
    """The sequence's after-agent callback fails after its last step (a custom agent)
    finished: the step's end marker was committed before the callback ran, so resuming
    skips it and the sequence ends."""
    a1, a2 = Hello(name="a1"), Hello(name="a2")
    after = FailsOnce()
    steps = SequentialAgent(name="w", sub_agents=[a1, a2], after_agent_callback=after)
    assert simplify(await _crash_then_resume(steps)) == [("w", END)]
    assert (a1.runs, a2.runs, after.calls) == (1, 1, 2)


async def test_a_last_step_marks_its_end_only_when_the_sequence_ends_late() -> None:
    """Without an after-agent callback the sequence's own end marker follows its last step
    at once (google-adk's shape, no step marker); with one, the step marks its end first."""
    plain = SequentialAgent(name="w", sub_agents=[Hello(name="a1")])
    assert simplify(await _run(plain)) == [
        ("w", {"current_sub_agent": "a1"}),
        ("a1", "hi a1"),
        ("w", END),
    ]
    late = SequentialAgent(
        name="w", sub_agents=[Hello(name="a1")], after_agent_callback=lambda callback_context: None
    )
    assert simplify(await _run(late)) == [
        ("w", {"current_sub_agent": "a1"}),
        ("a1", "hi a1"),
        ("a1", END),
        ("w", END),
    ]


async def test_a_loops_last_step_is_skipped_when_the_loop_end_fails() -> None:
    """A loop's last round: its last step's end marker is committed before the loop's
    after-agent callback, which fails; resuming runs neither step again. Earlier rounds'
    last steps carry none (the next round's marker follows at once)."""
    a1, a2 = Hello(name="a1"), Hello(name="a2")
    after = FailsOnce()
    loop = LoopAgent(name="w", sub_agents=[a1, a2], max_iterations=2, after_agent_callback=after)
    assert simplify(await _crash_then_resume(loop)) == [("w", END)]
    assert (a1.runs, a2.runs, after.calls) == (2, 2, 2)


async def test_a_last_step_that_crashed_mid_run_is_not_resumed() -> None:
    steps = SequentialAgent(
        name="w",
        sub_agents=[Hello(name="a1"), Halfway(name="a2")],
        after_agent_callback=FailsOnce(),
    )
    with pytest.raises(ResumeError, match=r"'a2'.*_resume_async_impl"):
        await _crash_then_resume(steps)


class Escalates(Hello):
    """Says hello with an escalation: the loop around it ends after it."""

    async def _run_async_impl(self, ctx: InvocationContext) -> AsyncGenerator[Event, None]:
        async for event in super()._run_async_impl(ctx):
            event.actions.escalate = True
            yield event


async def test_a_step_that_escalated_is_skipped_when_the_loop_end_fails() -> None:
    """An escalation ends the loop after its step: that step marks its end before the loop's
    failing after-agent callback, and resuming neither runs it again nor a later step."""
    a1, a2 = Escalates(name="a1"), Hello(name="a2")
    after = FailsOnce()
    loop = LoopAgent(name="w", sub_agents=[a1, a2], max_iterations=3, after_agent_callback=after)
    assert simplify(await _crash_then_resume(loop)) == [("w", END)]
    assert (a1.runs, a2.runs, after.calls) == (1, 0, 2)
