"""Resuming an invocation from its committed events, in one process (the failure is an
exception at each point; tests/durable/test_kill.py kills real processes)."""

from __future__ import annotations

import asyncio
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from eventide import (
    App,
    Event,
    InMemorySessionService,
    LlmAgent,
    ResumabilityConfig,
    Runner,
    SequentialAgent,
)
from eventide.errors import InvocationNotFoundError, ResumeError, ToolError, UsageError
from eventide.testing import ScriptedModel, text_response, tool_call_response
from tests.durable.durable_app import KILL_POINTS, Crash, Probe, build_app, normalized

# The points where the in-process crash happens inside a model call (it is repeated).
IN_MODEL_CALL = {"after_response_committed"}
# The points where it happens inside a tool (it runs again, with the same call id).
IN_TOOL = {"tool_running", "parallel_branch", "loop_round_2"}


async def _run(runner: Runner, session_id: str, message: str | None = "go") -> list[Event]:
    return [
        e async for e in runner.run_async(user_id="u", session_id=session_id, new_message=message)
    ]


async def _resume(runner: Runner, session_id: str, **kwargs: Any) -> list[Event]:
    return [e async for e in runner.resume_async(user_id="u", session_id=session_id, **kwargs)]


async def _baseline(tmp_path: Path) -> tuple[Any, dict[str, Any], list[str]]:
    probe = Probe(tmp_path / "baseline.ledger")
    service = InMemorySessionService()
    runner = Runner(app=build_app(probe), session_service=service)
    session = await service.create_session(app_name="durable_app", user_id="u")
    await _run(runner, session.id)
    stored = await service.get_session(app_name="durable_app", user_id="u", session_id=session.id)
    assert stored is not None
    return normalized(stored.events), stored.state, probe.ledger_lines()


def _tool_starts(lines: list[str]) -> Counter[str]:
    return Counter(line.split()[2] for line in lines if line.startswith("start "))


def _model_calls(lines: list[str]) -> int:
    return sum(1 for line in lines if line.startswith("model "))


@pytest.mark.parametrize("point", KILL_POINTS)
async def test_resume_after_a_failure_at_each_point_equals_an_uninterrupted_run(
    tmp_path: Path, point: str
) -> None:
    """Issue 17 (resume from the log): after a failure at each point, resume_async finishes
    the invocation; the events and state equal an uninterrupted run's, no committed model
    response is requested again, and each tool ran once per call id except the one that
    was running (run again with the same id)."""
    expected_events, expected_state, baseline_ledger = await _baseline(tmp_path)

    probe = Probe(tmp_path / "run.ledger")
    probe.raise_at = point
    service = InMemorySessionService()
    runner = Runner(app=build_app(probe), session_service=service)
    session = await service.create_session(app_name="durable_app", user_id="u")
    # Sync tools run in the loop's default executor. A sibling branch's tool thread that was
    # already submitted when the failure cancelled its task still runs (threads cannot be
    # stopped), and may log its start after run_async has raised: wait for those threads
    # before reading which calls were interrupted, then give the resume a fresh executor.
    loop = asyncio.get_running_loop()
    crashing_executor = ThreadPoolExecutor()
    loop.set_default_executor(crashing_executor)
    with pytest.raises((ToolError, Crash)) as failure:
        await _run(runner, session.id)
    crashing_executor.shutdown(wait=True)
    loop.set_default_executor(ThreadPoolExecutor())
    assert point in str(failure.value) or point in str(failure.value.__cause__)
    assert probe.raise_at is None  # the failure happened where it was meant to
    crashed = await service.get_session(app_name="durable_app", user_id="u", session_id=session.id)
    assert crashed is not None
    answered = {r.id for e in crashed.events for r in e.get_function_responses()}
    unanswered = {c.id for e in crashed.events for c in e.get_function_calls()} - answered
    # The calls whose tool had started but whose response was not committed: interrupted.
    interrupted = unanswered & set(_tool_starts(probe.ledger_lines()))

    # A new runner (as a new process would build) resumes from the committed events.
    resumed_probe = Probe(tmp_path / "run.ledger")
    resumer = Runner(app=build_app(resumed_probe), session_service=service)
    await _resume(resumer, session.id)

    stored = await service.get_session(app_name="durable_app", user_id="u", session_id=session.id)
    assert stored is not None
    assert normalized(stored.events) == expected_events
    assert stored.state == expected_state
    assert len({e.invocation_id for e in stored.events}) == 1

    lines = probe.ledger_lines()
    extra_model_calls = 1 if point in IN_MODEL_CALL else 0
    assert _model_calls(lines) == _model_calls(baseline_ledger) + extra_model_calls
    starts = _tool_starts(lines)
    calls = {c.id for e in stored.events for c in e.get_function_calls() if c.name != "exit_loop"}
    assert set(starts) == calls
    twice = {call_id for call_id, n in starts.items() if n == 2}
    assert all(n in (1, 2) for n in starts.values())
    assert twice == interrupted
    assert bool(interrupted) == (point in IN_TOOL)


async def test_a_tool_run_again_reads_the_same_call_id(tmp_path: Path) -> None:
    """Issue 17: a tool interrupted while running runs again with the same function call id
    (``tool_context.function_call_id``), its idempotency key."""
    probe = Probe(tmp_path / "ledger")
    probe.raise_at = "tool_running"
    service = InMemorySessionService()
    runner = Runner(app=build_app(probe), session_service=service)
    session = await service.create_session(app_name="durable_app", user_id="u")
    with pytest.raises((ToolError, Crash)):
        await _run(runner, session.id)
    stored = await service.get_session(app_name="durable_app", user_id="u", session_id=session.id)
    assert stored is not None
    (call,) = [c for e in stored.events for c in e.get_function_calls()]
    await _resume(Runner(app=build_app(Probe(probe.ledger)), session_service=service), session.id)
    books = [line for line in probe.ledger_lines() if line.startswith("start book")]
    assert books == [f"start book {call.id}", f"start book {call.id}"]


async def test_resumed_events_are_yielded_and_the_invocation_is_then_finished(
    tmp_path: Path,
) -> None:
    """Issue 17 (bad input): resuming a finished invocation raises ResumeError, and the
    failed attempt commits nothing."""
    probe = Probe(tmp_path / "ledger")
    probe.raise_at = "loop_round_2"
    service = InMemorySessionService()
    runner = Runner(app=build_app(probe), session_service=service)
    session = await service.create_session(app_name="durable_app", user_id="u")
    with pytest.raises((ToolError, Crash)):
        await _run(runner, session.id)
    events = await _resume(runner, session.id)
    assert events and events[-1].actions.end_of_agent and events[-1].author == "pipeline"
    stored = await service.get_session(app_name="durable_app", user_id="u", session_id=session.id)
    assert stored is not None
    before = len(stored.events)
    with pytest.raises(ResumeError, match="finished; there is nothing to resume"):
        await _resume(runner, session.id)
    with pytest.raises(ResumeError, match="finished"):
        await _resume(runner, session.id, invocation_id=events[0].invocation_id)
    stored = await service.get_session(app_name="durable_app", user_id="u", session_id=session.id)
    assert stored is not None and len(stored.events) == before


async def test_resuming_an_unknown_invocation_raises(tmp_path: Path) -> None:
    """Issue 17 (bad input): an unknown invocation id, or a session with no invocation,
    raises InvocationNotFoundError naming what to do."""
    service = InMemorySessionService()
    runner = Runner(app=build_app(Probe(tmp_path / "ledger")), session_service=service)
    session = await service.create_session(app_name="durable_app", user_id="u")
    with pytest.raises(InvocationNotFoundError, match="no invocation to resume"):
        await _resume(runner, session.id)
    await _run(runner, session.id)
    with pytest.raises(InvocationNotFoundError, match="has no invocation 'nope'"):
        await _resume(runner, session.id, invocation_id="nope")


async def test_a_renamed_agent_is_a_clear_error_and_loses_nothing(tmp_path: Path) -> None:
    """Issue 17 (bad input): resuming with an agent tree whose agent was renamed since the
    crash raises ResumeError naming the agent; the committed events stay as they were, and
    the original tree still resumes them."""
    probe = Probe(tmp_path / "ledger")
    probe.raise_at = "parallel_branch"
    service = InMemorySessionService()
    app = build_app(probe)
    runner = Runner(app=app, session_service=service)
    session = await service.create_session(app_name="durable_app", user_id="u")
    with pytest.raises((ToolError, Crash)):
        await _run(runner, session.id)
    stored = await service.get_session(app_name="durable_app", user_id="u", session_id=session.id)
    assert stored is not None
    committed = [e.model_dump() for e in stored.events]

    renamed_app = build_app(Probe(probe.ledger))
    planner = renamed_app.root_agent.sub_agents[0]
    renamed = planner.model_copy(update={"name": "planner_v2", "parent_agent": None})
    tree = SequentialAgent(name="pipeline", sub_agents=[renamed])
    renamed_runner = Runner(
        app=App(
            name="durable_app",
            root_agent=tree,
            resumability_config=ResumabilityConfig(is_resumable=True),
        ),
        session_service=service,
    )
    with pytest.raises(ResumeError, match="'planner'.*not in the agent tree"):
        await _resume(renamed_runner, session.id)
    stored = await service.get_session(app_name="durable_app", user_id="u", session_id=session.id)
    assert stored is not None
    assert [e.model_dump() for e in stored.events] == committed
    await _resume(Runner(app=build_app(Probe(probe.ledger)), session_service=service), session.id)


async def test_resume_needs_a_resumable_app() -> None:
    """Issue 17: resume_async on an app without resumability says how to turn it on."""
    agent = LlmAgent(name="a", model=ScriptedModel(responses=["hi"]))
    runner = Runner(app_name="app", agent=agent, session_service=InMemorySessionService())
    with pytest.raises(UsageError, match="is_resumable=True"):
        await _resume(runner, "s")


async def test_an_invocation_run_without_resumability_cannot_be_resumed() -> None:
    """Issue 17 (bad input): an invocation whose events carry no markers (run before
    resumability was turned on) is refused with a clear error."""
    service = InMemorySessionService()
    agent = LlmAgent(name="a", model=ScriptedModel(responses=[RuntimeError("boom")]))
    plain = Runner(app_name="app", agent=agent, session_service=service)
    session = await service.create_session(app_name="app", user_id="u")
    with pytest.raises(RuntimeError):
        await _run(plain, session.id)
    resumable = Runner(
        app=App(
            name="app",
            root_agent=LlmAgent(name="a", model=ScriptedModel(responses=["hi"])),
            resumability_config=ResumabilityConfig(is_resumable=True),
        ),
        session_service=service,
    )
    with pytest.raises(ResumeError, match="not run with resumability on"):
        await _resume(resumable, session.id)


async def test_a_new_message_resumes_the_unfinished_invocation_first_when_asked() -> None:
    """Issue 17: run_async(resume_unfinished=True) first continues the session's unfinished
    invocation (its model response is not requested again), then runs the new message;
    without the option the new message just starts a new invocation."""
    calls: list[str] = []

    def lookup(city: str) -> dict[str, str]:
        calls.append(city)
        if len(calls) == 1:
            raise ConnectionError("the weather service went away")
        return {"weather": "sunny"}

    model = ScriptedModel(
        responses=[
            tool_call_response(("lookup", {"city": "Paris"})),
            text_response("It is sunny in Paris."),
            text_response("You are welcome."),
        ]
    )
    app = App(
        name="app",
        root_agent=LlmAgent(name="a", model=model, tools=[lookup]),
        resumability_config=ResumabilityConfig(is_resumable=True),
    )
    service = InMemorySessionService()
    runner = Runner(app=app, session_service=service)
    session = await service.create_session(app_name="app", user_id="u")
    with pytest.raises(Exception, match="weather service"):
        await _run(runner, session.id, "weather in Paris?")
    events = [
        e
        async for e in runner.run_async(
            user_id="u", session_id=session.id, new_message="thanks", resume_unfinished=True
        )
    ]
    texts = [e.text for e in events if e.text]
    assert texts == ["It is sunny in Paris.", "thanks", "You are welcome."] or texts == [
        "It is sunny in Paris.",
        "You are welcome.",
    ]
    assert calls == ["Paris", "Paris"]
    assert model.calls == 3
    stored = await service.get_session(app_name="app", user_id="u", session_id=session.id)
    assert stored is not None
    assert len({e.invocation_id for e in stored.events}) == 2


async def test_run_async_with_the_unfinished_invocation_id_resumes_it() -> None:
    """Issue 17 (google-adk's form): run_async(invocation_id=<unfinished>) with no new
    message resumes that invocation."""
    model = ScriptedModel(
        responses=[
            tool_call_response(("lookup", {"city": "Oslo"})),
            RuntimeError("model outage"),
            text_response("Snow in Oslo."),
        ]
    )

    def lookup(city: str) -> dict[str, str]:
        return {"weather": "snow"}

    app = App(
        name="app",
        root_agent=LlmAgent(name="a", model=model, tools=[lookup]),
        resumability_config=ResumabilityConfig(is_resumable=True),
    )
    service = InMemorySessionService()
    runner = Runner(app=app, session_service=service)
    session = await service.create_session(app_name="app", user_id="u")
    with pytest.raises(RuntimeError, match="model outage"):
        await _run(runner, session.id, "Oslo?")
    stored = await service.get_session(app_name="app", user_id="u", session_id=session.id)
    assert stored is not None
    invocation_id = stored.events[-1].invocation_id
    events = [
        e
        async for e in runner.run_async(
            user_id="u", session_id=session.id, invocation_id=invocation_id
        )
    ]
    assert [e.text for e in events if e.text] == ["Snow in Oslo."]
    assert {e.invocation_id for e in events} == {invocation_id}
    assert model.calls == 3
