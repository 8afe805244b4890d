"""Issue 31: a resumable LoopAgent ends on an escalation the way a plain one does: the
sub-agent that escalated finishes its turn (the model answers the tool's result), then no
later step and no further round runs; a resume after that answer ends the loop too."""

from __future__ import annotations

from typing import Any

import pytest

from eventide import (
    App,
    Event,
    InMemorySessionService,
    LlmAgent,
    LoopAgent,
    ResumabilityConfig,
    Runner,
    ToolContext,
)
from eventide.testing import ScriptedModel, tool_call_response


def _stop(tool_context: ToolContext) -> dict[str, Any]:
    """Stop the loop (an escalation without skip_summarization: the model answers after)."""
    tool_context.actions.escalate = True
    return {"stopped": True}


def _loop(*, crash_before_answer: bool = False) -> LoopAgent:
    answers: list[Any] = [tool_call_response(("_stop", {}))]
    if crash_before_answer:
        answers.append(RuntimeError("the process died before the model answered"))
    answers.append("stopped, done")
    worker = LlmAgent(name="worker", model=ScriptedModel(responses=answers), tools=[_stop])
    never = LlmAgent(name="never", model=ScriptedModel(responses=["must not run"]))
    return LoopAgent(name="loop", max_iterations=3, sub_agents=[worker, never])


def _texts(events: list[Event]) -> list[tuple[str, str]]:
    return [
        (e.author, part.text)
        for e in events
        if e.content is not None
        for part in e.content.parts or []
        if part.text
    ]


async def _run(resumable: bool) -> list[Event]:
    service = InMemorySessionService()
    config = ResumabilityConfig(is_resumable=True) if resumable else None
    app = App(name="app", root_agent=_loop(), resumability_config=config)
    runner = Runner(app=app, session_service=service)
    await service.create_session(app_name="app", user_id="u", session_id="s")
    return [e async for e in runner.run_async(user_id="u", session_id="s", new_message="go")]


@pytest.mark.parametrize("resumable", [False, True])
async def test_the_escalating_agent_finishes_its_turn_then_the_loop_ends(resumable: bool) -> None:
    """Issue 31 (LoopAgent escalation, one rule with and without resumability): the model
    answers the escalating tool's result, and the next step ("never") does not run."""
    events = await _run(resumable)
    assert _texts(events) == [("worker", "stopped, done")]
    assert sum(1 for e in events if e.actions.escalate) == 1


async def test_a_resume_after_the_escalation_finishes_the_turn_then_ends_the_loop() -> None:
    """Issue 31 (LoopAgent escalation, resumed): the invocation stopped after the escalating
    tool's response was committed; resume_async lets the model answer it and ends the loop
    there (the escalation is read from the log), without the next step or another round."""
    service = InMemorySessionService()
    app = App(
        name="app",
        root_agent=_loop(crash_before_answer=True),
        resumability_config=ResumabilityConfig(is_resumable=True),
    )
    runner = Runner(app=app, session_service=service)
    await service.create_session(app_name="app", user_id="u", session_id="s")
    with pytest.raises(RuntimeError, match="died"):
        async for _ in runner.run_async(user_id="u", session_id="s", new_message="go"):
            pass
    resumed = [e async for e in runner.resume_async(user_id="u", session_id="s")]
    assert _texts(resumed) == [("worker", "stopped, done")]
    session = await service.get_session(app_name="app", user_id="u", session_id="s")
    assert session is not None
    assert [e.author for e in session.events if e.author == "never"] == []
