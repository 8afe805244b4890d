"""Issue 34, cancellation: an abort signal through the Runner, agents and tools.

google-adk's own behaviour for the same cases is checked side by side in
``tests/adk_compat/phase2_scenarios.py``; these tests cover what those cannot reach: an
abort from the agent's own code or another thread, a caller's task cancelled mid-step, the
inner invocation of an ``AgentTool``, and a real SQLite session file.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncGenerator
from pathlib import Path

from eventide import (
    AgentTool,
    BaseAgent,
    Event,
    InMemorySessionService,
    InvocationContext,
    LlmAgent,
    Runner,
    SqliteSessionService,
    ToolContext,
    types,
)
from eventide.cancellation import (
    ABORT_MESSAGE,
    INVOCATION_ABORTED,
    AbortSignal,
    AbortState,
    abort_events,
)
from eventide.testing import ScriptedModel, tool_call_response


def _text(text: str) -> types.Content:
    return types.Content(role="model", parts=[types.Part(text=text)])


class _Steps(BaseAgent):
    """Yields 'one', aborts its own invocation while making 'two', then would yield
    'three'."""

    async def _run_async_impl(self, ctx: InvocationContext) -> AsyncGenerator[Event, None]:
        yield Event(author=self.name, content=_text("one"))
        ctx.abort()
        yield Event(author=self.name, content=_text("two"))
        yield Event(author=self.name, content=_text("three"))


async def _turn(runner: Runner) -> tuple[str, list[Event]]:
    session = await runner.session_service.create_session(app_name=runner.app_name, user_id="u")
    events = [
        e async for e in runner.run_async(user_id="u", session_id=session.id, new_message="go")
    ]
    return session.id, events


async def test_context_abort_stops_the_invocation_and_is_recorded_in_sqlite(
    tmp_path: Path,
) -> None:
    """InvocationContext.abort() (google-adk 2.x's name): the step in flight ends and is
    committed, as in google-adk, and nothing after it; the INVOCATION_ABORTED event is in
    the SQLite file after a reload."""
    db = tmp_path / "sessions.db"
    runner = Runner(
        app_name="app", agent=_Steps(name="steps"), session_service=SqliteSessionService(str(db))
    )
    session_id, events = await _turn(runner)
    assert [(e.author, e.text, e.error_code) for e in events] == [
        ("steps", "one", None),
        ("steps", "two", None),
        ("steps", None, INVOCATION_ABORTED),
    ]
    reloaded = await SqliteSessionService(str(db)).get_session(
        app_name="app", user_id="u", session_id=session_id
    )
    assert reloaded is not None
    assert [(e.author, e.error_code, e.error_message) for e in reloaded.events] == [
        ("user", None, None),
        ("steps", None, None),
        ("steps", None, None),
        ("steps", INVOCATION_ABORTED, ABORT_MESSAGE),
    ]


async def test_a_cancelled_caller_with_the_signal_set_still_records_the_abort() -> None:
    """A caller that sets the signal and cancels its task (what /run_sse does when the
    client hangs up) interrupts a model call at once; the abort is still committed."""
    started = asyncio.Event()

    class Slow(ScriptedModel):
        async def generate_content_async(self, llm_request, stream=False):  # type: ignore[no-untyped-def]
            started.set()
            await asyncio.sleep(3600)
            yield tool_call_response()

    agent = LlmAgent(name="slow", model=Slow())
    runner = Runner(app_name="app", agent=agent, session_service=InMemorySessionService())
    session = await runner.session_service.create_session(app_name="app", user_id="u")
    signal = asyncio.Event()

    async def consume() -> None:
        async for _ in runner.run_async(
            user_id="u", session_id=session.id, new_message="go", abort_signal=signal
        ):
            pass

    task = asyncio.create_task(consume())
    await started.wait()
    signal.set()
    task.cancel()
    await asyncio.gather(task, return_exceptions=True)
    stored = await runner.session_service.get_session(
        app_name="app", user_id="u", session_id=session.id
    )
    assert stored is not None
    assert [(e.author, e.error_code) for e in stored.events] == [
        ("user", None),
        ("slow", INVOCATION_ABORTED),
    ]


async def test_closing_early_without_an_abort_records_nothing() -> None:
    """google-adk treats a caller that stops iterating as a clean end, not an abort."""
    runner = Runner(
        app_name="app", agent=_Forever(name="forever"), session_service=InMemorySessionService()
    )
    session = await runner.session_service.create_session(app_name="app", user_id="u")
    events = runner.run_async(user_id="u", session_id=session.id, new_message="go")
    await anext(events)
    await events.aclose()
    stored = await runner.session_service.get_session(
        app_name="app", user_id="u", session_id=session.id
    )
    assert stored is not None
    assert all(e.error_code is None for e in stored.events)


class _Forever(BaseAgent):
    async def _run_async_impl(self, ctx: InvocationContext) -> AsyncGenerator[Event, None]:
        while True:
            yield Event(author=self.name, content=_text("tick"))


async def test_abort_from_another_thread_stops_the_next_step() -> None:
    """abort() is safe from a worker thread: the signal is set on the invocation's loop."""
    seen: list[bool] = []

    def slow_tool(tool_context: ToolContext) -> str:
        """Runs in a thread and aborts from there."""
        seen.append(tool_context.is_aborted)
        worker = threading.Thread(target=tool_context.invocation_context.abort)
        worker.start()
        worker.join()
        return "ok"

    model = ScriptedModel(responses=[tool_call_response(("slow_tool", {})), "never"])
    runner = Runner(
        app_name="app",
        agent=LlmAgent(name="a", model=model, tools=[slow_tool]),
        session_service=InMemorySessionService(),
    )
    _, events = await _turn(runner)
    assert seen == [False]
    assert events[-1].error_code == INVOCATION_ABORTED
    assert model.calls == 1


async def test_aborting_the_caller_aborts_an_agent_tool_inside() -> None:
    """An AgentTool's inner invocation gets its caller's signal: its model is not called
    again after the abort, and the caller records the abort."""

    def stop(tool_context: ToolContext) -> str:
        """Aborts the whole invocation."""
        tool_context.invocation_context.abort()
        return "stopping"

    inner_model = ScriptedModel(responses=[tool_call_response(("stop", {})), "inner done"])
    inner = LlmAgent(name="inner", model=inner_model, tools=[stop])
    outer_model = ScriptedModel(responses=[tool_call_response(("inner", {"request": "x"})), "x"])
    runner = Runner(
        app_name="app",
        agent=LlmAgent(name="outer", model=outer_model, tools=[AgentTool(agent=inner)]),
        session_service=InMemorySessionService(),
    )
    _, events = await _turn(runner)
    assert inner_model.calls == 1
    assert outer_model.calls == 1
    assert events[-1].error_code == INVOCATION_ABORTED


def test_abort_events_seal_each_agents_pending_calls_on_its_branch() -> None:
    """Pending calls are answered per (author, branch); answered calls are left alone."""

    def call(author: str, branch: str | None, *ids: str) -> Event:
        parts = [types.Part(function_call=types.FunctionCall(id=i, name="t")) for i in ids]
        return Event(
            invocation_id="inv",
            author=author,
            branch=branch,
            content=types.Content(role="model", parts=parts),
        )

    answered = Event(
        invocation_id="inv",
        author="a",
        content=types.Content(
            role="user",
            parts=[types.Part(function_response=types.FunctionResponse(id="1", name="t"))],
        ),
    )
    other_invocation = call("a", None, "9").model_copy(update={"invocation_id": "old"})
    sealing = abort_events(
        [other_invocation, call("a", None, "1", "2"), answered, call("b", "p.b", "3")],
        invocation_id="inv",
        root_agent="root",
        branch=None,
    )
    assert [(e.author, e.branch, [r.id for r in e.get_function_responses()]) for e in sealing] == [
        ("a", None, ["2"]),
        ("b", "p.b", ["3"]),
    ]
    assert all(e.error_code == INVOCATION_ABORTED for e in sealing)


def test_abort_state_without_a_signal_is_not_set_until_aborted() -> None:
    state = AbortState()
    assert not state.is_set
    state.abort()
    assert state.is_set
    assert state.wait_signal().is_set()


async def test_an_abort_signal_arms_its_invocations_only_when_set() -> None:
    """An AbortSignal (what /run_sse gives each turn) leaves the invocations attached to it
    unarmed, so their steps read one slot, until it is set; then they are armed and set."""
    signal = AbortSignal()
    state, other = AbortState(), AbortState()
    state.attach(signal)
    other.attach(signal)
    assert (state.armed, state.is_set) == (False, False)
    signal.set()
    assert (state.armed, state.is_set, other.armed, other.is_set) == (True, True, True, True)
    late = AbortState()
    late.attach(signal)  # already set: armed at once
    assert (late.armed, late.is_set) == (True, True)
    plain = AbortState()
    plain.attach(asyncio.Event())  # any other Event is read at each step
    assert (plain.armed, plain.is_set) == (True, False)


async def test_setting_an_abort_signal_mid_turn_stops_the_next_step() -> None:
    """The Runner with an AbortSignal: set between two events, nothing after the event in
    flight is made, and the abort is committed."""
    signal = AbortSignal()

    class Steps(BaseAgent):
        async def _run_async_impl(self, ctx: InvocationContext) -> AsyncGenerator[Event, None]:
            for text in ("one", "two", "three"):
                yield Event(author=self.name, content=_text(text))

    runner = Runner(
        app_name="app", agent=Steps(name="steps"), session_service=InMemorySessionService()
    )
    session = await runner.session_service.create_session(app_name="app", user_id="u")
    seen: list[tuple[str | None, str | None]] = []
    async for event in runner.run_async(
        user_id="u", session_id=session.id, new_message="go", abort_signal=signal
    ):
        seen.append((event.text, event.error_code))
        if event.text == "one":
            signal.set()
    assert seen == [("one", None), (None, INVOCATION_ABORTED)]
