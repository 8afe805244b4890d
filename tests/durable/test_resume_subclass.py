"""Issue 31: a subclass of a workflow agent resumes through its own continuation, or the
resume says clearly why it cannot; an unchanged subclass resumes as its parent does."""

from __future__ import annotations

from collections.abc import AsyncGenerator
from typing import Any, ClassVar

import pytest

from eventide import (
    App,
    BaseAgent,
    Event,
    InMemorySessionService,
    InvocationContext,
    ResumabilityConfig,
    Runner,
    SequentialAgent,
    types,
)
from eventide.errors import ConfigurationError, ResumeError
from eventide.runtime.replay import AgentProgress, ResumeScope
from eventide.workflow import Workflow


class Crash(Exception):
    """The in-process failure that stops the invocation half way."""


class Step(BaseAgent):
    """Answers with its name, once per run; fails once when ``fail_once`` is set."""

    fail_once: bool = False
    runs: int = 0

    async def _run_async_impl(self, ctx: InvocationContext) -> AsyncGenerator[Event, None]:
        self.runs += 1
        if self.fail_once:
            self.fail_once = False
            raise Crash(self.name)
        yield Event(
            author=self.name,
            branch=ctx.branch,
            content=types.Content(parts=[types.Part(text=self.name)]),
        )


class Tagged(SequentialAgent):
    """A subclass that changes no logic: it resumes as SequentialAgent does."""

    tag: str = "t"


class Announcing(SequentialAgent):
    """Overrides the logic (an announcement, then the steps) but not the continuation."""

    async def _run_async_impl(self, ctx: InvocationContext) -> AsyncGenerator[Event, None]:
        yield Event(author=self.name, content=types.Content(parts=[types.Part(text="announce")]))
        async for event in super()._run_async_impl(ctx):
            yield event


class AnnouncingResumable(Announcing):
    """Overrides both: on resume it skips the announcement it already committed."""

    def _resume_async_impl(
        self, ctx: InvocationContext, scope: ResumeScope, progress: AgentProgress
    ) -> AsyncGenerator[Event, None]:
        return SequentialAgent._resume_async_impl(self, ctx, scope, progress)


def _app(root: BaseAgent) -> App:
    return App(
        name="app", root_agent=root, resumability_config=ResumabilityConfig(is_resumable=True)
    )


async def _crash_then_resume(root: BaseAgent) -> tuple[list[str], list[str]]:
    """Run until the second step fails, then resume: the texts before and after."""
    service = InMemorySessionService()
    runner = Runner(app=_app(root), session_service=service)
    await service.create_session(app_name="app", user_id="u", session_id="s")
    before: list[str] = []
    with pytest.raises(Crash):
        async for event in runner.run_async(user_id="u", session_id="s", new_message="go"):
            before.extend(_texts(event))
    after: list[str] = []
    async for event in runner.resume_async(user_id="u", session_id="s"):
        after.extend(_texts(event))
    return before, after


def _texts(event: Event) -> list[str]:
    parts = event.content.parts or [] if event.content is not None else []
    return [part.text for part in parts if part.text]


def _steps() -> list[Any]:
    return [Step(name="one"), Step(name="two", fail_once=True), Step(name="three")]


async def test_a_subclass_that_changes_no_logic_resumes_as_its_parent() -> None:
    """Issue 31: a SequentialAgent subclass without its own _run_async_impl continues the
    step in flight and runs the rest; the completed step does not run again."""
    steps = _steps()
    before, after = await _crash_then_resume(Tagged(name="root", sub_agents=steps))
    assert before == ["one"]
    assert after == ["two", "three"]
    assert [s.runs for s in steps] == [1, 2, 1]


def test_a_subclass_overriding_run_but_not_resume_is_refused_when_the_app_is_built() -> None:
    """Issue 31 (a subclass that overrides _run_async_impl): SequentialAgent's continuation
    does not know the subclass's logic, so a resumable app with it is refused when it is
    built, with an error naming the agent, its class and the method to implement (before,
    the ResumeError came only at resume, after the crash)."""
    steps = _steps()
    with pytest.raises(
        ConfigurationError,
        match=r"Agent 'root' \(Announcing\) overrides _run_async_impl of SequentialAgent "
        r"without _resume_async_impl.*Implement _resume_async_impl\(self, ctx, scope, "
        r"progress\) in Announcing",
    ):
        _app(Announcing(name="root", sub_agents=steps))
    assert [s.runs for s in steps] == [0, 0, 0]


def test_the_runner_refuses_it_too_and_a_non_resumable_app_is_unaffected() -> None:
    """The Runner checks the tree of a resumable app as well (an app made resumable after
    it was built, as ``eventide worker`` does with dataclasses.replace, or nested below a
    workflow's agent node); the same agent in a non-resumable app runs as before."""
    inner = Announcing(name="inner", sub_agents=_steps())
    plain = App(name="app", root_agent=SequentialAgent(name="root", sub_agents=[inner]))
    Runner(app=plain, session_service=InMemorySessionService())  # not resumable: accepted
    plain.resumability_config = ResumabilityConfig(is_resumable=True)
    with pytest.raises(ConfigurationError, match=r"Agent 'inner' \(Announcing\)"):
        Runner(app=plain, session_service=InMemorySessionService())
    with pytest.raises(ConfigurationError, match=r"Agent 'node_agent' \(Announcing\)"):
        _app(Workflow(name="wf", edges=[("START", Announcing(name="node_agent"))]))


def test_an_agent_reading_its_position_from_the_session_passes_the_check() -> None:
    """``resumes_from_log = True`` says the agent continues by running again (it reads its
    place from the session), so the subclass is accepted; so is a plain custom agent, which
    keeps BaseAgent's rule (it runs again when it had committed nothing)."""

    class FromLog(Announcing):
        resumes_from_log: ClassVar[bool] = True

    _app(FromLog(name="root", sub_agents=_steps()))
    _app(Step(name="leaf"))


async def test_a_subclass_refused_at_construction_still_fails_clearly_at_resume() -> None:
    """A context built by hand skips the App/Runner check: the resume itself still says
    what is wrong (ResumeError naming the class and the method), and nothing runs again."""
    steps = _steps()
    root = Announcing(name="root", sub_agents=steps)
    service = InMemorySessionService()
    runner = Runner(app=App(name="app", root_agent=root), session_service=service)
    runner.resumable = True  # switched on after the Runner was built: no check ran
    await service.create_session(app_name="app", user_id="u", session_id="s")
    with pytest.raises(Crash):
        async for _ in runner.run_async(user_id="u", session_id="s", new_message="go"):
            pass
    with pytest.raises(
        ResumeError, match=r"Announcing overrides _run_async_impl without _resume_async_impl"
    ):
        async for _ in runner.resume_async(user_id="u", session_id="s"):
            pass
    assert [s.runs for s in steps] == [1, 1, 0]


async def test_a_subclass_overriding_both_resumes_through_its_own_continuation() -> None:
    """Issue 31: a subclass that overrides _run_async_impl and _resume_async_impl resumes
    through its own continuation (here: the steps after the committed announcement)."""
    steps = _steps()
    before, after = await _crash_then_resume(AnnouncingResumable(name="root", sub_agents=steps))
    assert before == ["announce", "one"]
    assert after == ["two", "three"]
    assert [s.runs for s in steps] == [1, 2, 1]


def test_a_stand_in_root_agent_is_not_walked() -> None:
    """google-adk's own tests build ``App(root_agent=Mock(spec=BaseAgent),
    resumability_config=...)``: the check has no tree to read there, and does not raise."""
    from unittest.mock import Mock

    from eventide import App, ResumabilityConfig
    from eventide.agents.base_agent import BaseAgent

    stand_in = Mock(spec=BaseAgent)
    app = App(
        name="app", root_agent=stand_in, resumability_config=ResumabilityConfig(is_resumable=True)
    )
    assert app.root_agent is stand_in
