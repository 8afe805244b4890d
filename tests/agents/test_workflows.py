"""Workflow agents (issue 4): SequentialAgent state hand-off, ParallelAgent branches (naming,
history isolation, per-branch commit-before-resume, escalate and failure in one branch), and
LoopAgent exits (escalate, max_iterations).

Custom ``BaseAgent`` branches synchronize with ``asyncio.Event`` gates, never with sleeps, so
the interleavings asserted here do not depend on the machine's speed.
"""

from __future__ import annotations

import asyncio
import gc
from collections.abc import AsyncGenerator, Callable

import pytest

from eventide import (
    BaseAgent,
    Event,
    EventActions,
    InMemoryRunner,
    InvocationContext,
    LlmAgent,
    LoopAgent,
    ParallelAgent,
    SequentialAgent,
    exit_loop,
    types,
)
from eventide.errors import UsageError
from eventide.testing import ScriptedModel, tool_call_response
from tests.agents.multi_agent_helpers import (
    new_session,
    request_texts,
    rows,
    run_turn,
    stored_events,
)


def say(agent: BaseAgent, ctx: InvocationContext, text: str, **delta: object) -> Event:
    return Event(
        invocation_id=ctx.invocation_id,
        author=agent.name,
        branch=ctx.branch,
        content=types.Content(role="model", parts=[types.Part(text=text)]),
        actions=EventActions(state_delta=dict(delta)),
    )


class ScriptAgent(BaseAgent):
    """A custom agent whose body is a test-provided async generator function."""

    body: Callable[[BaseAgent, InvocationContext], AsyncGenerator[Event, None]]

    async def _run_async_impl(self, ctx: InvocationContext) -> AsyncGenerator[Event, None]:
        async for event in self.body(self, ctx):
            yield event


# --- SequentialAgent ---------------------------------------------------------------------


async def test_sequential_output_key_pipeline() -> None:
    """Issue 4 'sequential state hand-off': step 2's instruction `{draft}` reads step 1's
    committed output_key; step 3 reads both. Spec: state changes are committed before the
    next step runs."""
    writer_model = ScriptedModel(responses=["Our API is back."])
    editor_model = ScriptedModel(responses=["Our API is back up."])
    checker_model = ScriptedModel(responses=["approved"])
    pipeline = SequentialAgent(
        name="pipeline",
        sub_agents=[
            LlmAgent(name="writer", model=writer_model, output_key="draft"),
            LlmAgent(
                name="editor",
                model=editor_model,
                instruction="Polish this draft: {draft}",
                output_key="final",
            ),
            LlmAgent(
                name="checker",
                model=checker_model,
                instruction="Compare '{draft}' with '{final}'.",
                output_key="verdict",
            ),
        ],
    )
    runner = InMemoryRunner(pipeline, app_name="seq")
    sid = await new_session(runner)

    events = await run_turn(runner, sid, "write a status update")

    assert rows(events) == [
        ("writer", None, "text", "Our API is back."),
        ("editor", None, "text", "Our API is back up."),
        ("checker", None, "text", "approved"),
    ]
    assert [e.actions.state_delta for e in events] == [
        {"draft": "Our API is back."},
        {"final": "Our API is back up."},
        {"verdict": "approved"},
    ]
    assert editor_model.requests[0].config.system_instruction == (
        "Polish this draft: Our API is back."
    )
    assert checker_model.requests[0].config.system_instruction == (
        "Compare 'Our API is back.' with 'Our API is back up.'."
    )
    session = await runner.session_service.get_session(app_name="seq", user_id="u", session_id=sid)
    assert session is not None
    assert session.state == {
        "draft": "Our API is back.",
        "final": "Our API is back up.",
        "verdict": "approved",
    }


async def test_sequential_step_reads_committed_state_of_previous_step() -> None:
    """Spec 'state commit timing': a later step sees the earlier step's state_delta already
    applied to the session (committed, not a dirty read)."""
    seen: list[object] = []

    async def first(agent: BaseAgent, ctx: InvocationContext) -> AsyncGenerator[Event, None]:
        yield say(agent, ctx, "counted", count=1)

    async def second(agent: BaseAgent, ctx: InvocationContext) -> AsyncGenerator[Event, None]:
        seen.append(ctx.session.state.get("count"))
        seen.append(len(ctx.session.events))
        yield say(agent, ctx, "read", count=2)

    seq = SequentialAgent(
        name="seq",
        sub_agents=[ScriptAgent(name="first", body=first), ScriptAgent(name="second", body=second)],
    )
    runner = InMemoryRunner(seq, app_name="seq")
    sid = await new_session(runner)

    events = await run_turn(runner, sid, "go")

    assert rows(events) == [
        ("first", None, "text", "counted"),
        ("second", None, "text", "read"),
    ]
    assert seen == [1, 2]  # user event + first's event are in the log


# --- ParallelAgent -----------------------------------------------------------------------


async def test_parallel_branch_names_and_nested_paths() -> None:
    """Issue 4 'parallel branch naming': each branch's events carry `<parent>.<child>`; nested
    fan-outs extend the path with every agent between them."""
    models = {name: ScriptedModel(responses=[f"{name} done"]) for name in ("a", "x", "y", "z")}
    fan = ParallelAgent(
        name="fan",
        sub_agents=[
            LlmAgent(name="a", model=models["a"]),
            ParallelAgent(
                name="inner",
                sub_agents=[
                    LlmAgent(name="x", model=models["x"]),
                    SequentialAgent(
                        name="steps",
                        sub_agents=[
                            ParallelAgent(
                                name="deep",
                                sub_agents=[
                                    LlmAgent(name="y", model=models["y"]),
                                    LlmAgent(name="z", model=models["z"]),
                                ],
                            )
                        ],
                    ),
                ],
            ),
        ],
    )
    runner = InMemoryRunner(fan, app_name="par")
    sid = await new_session(runner)

    events = await run_turn(runner, sid, "go")

    assert sorted(rows(events)) == [
        ("a", "fan.a", "text", "a done"),
        ("x", "fan.inner.x", "text", "x done"),
        ("y", "fan.inner.steps.deep.y", "text", "y done"),
        ("z", "fan.inner.steps.deep.z", "text", "z done"),
    ]
    assert rows(await stored_events(runner, sid))[1:] == rows(events)


async def test_parallel_branch_history_is_isolated() -> None:
    """Issue 4 'history isolation': a branch's LlmRequest.contents hold the shared ancestors'
    events and its own branch's, never a sibling branch's (checked on a second turn, when the
    sibling's first-turn answers are in the session)."""
    intro_model = ScriptedModel(responses=["intro 1", "intro 2"])
    a_model = ScriptedModel(responses=["a answer 1", "a answer 2"])
    b_model = ScriptedModel(responses=["b answer 1", "b answer 2"])
    root = SequentialAgent(
        name="root",
        sub_agents=[
            LlmAgent(name="intro", model=intro_model),
            ParallelAgent(
                name="fan",
                sub_agents=[LlmAgent(name="a", model=a_model), LlmAgent(name="b", model=b_model)],
            ),
        ],
    )
    runner = InMemoryRunner(root, app_name="par")
    sid = await new_session(runner)
    await run_turn(runner, sid, "turn one")

    events = await run_turn(runner, sid, "turn two")

    assert sorted(rows(events)) == [
        ("a", "fan.a", "text", "a answer 2"),
        ("b", "fan.b", "text", "b answer 2"),
        ("intro", None, "text", "intro 2"),
    ]
    a_history = request_texts(a_model.requests[1].contents)
    b_history = request_texts(b_model.requests[1].contents)
    assert a_history == [
        "turn one",
        "For context:",
        "[intro] said: intro 1",
        "a answer 1",
        "turn two",
        "For context:",
        "[intro] said: intro 2",
    ]
    assert b_history == [
        "turn one",
        "For context:",
        "[intro] said: intro 1",
        "b answer 1",
        "turn two",
        "For context:",
        "[intro] said: intro 2",
    ]


async def test_parallel_commit_before_resume_is_per_branch() -> None:
    """Issue 4 / DESIGN 'commit before resume' per branch: branch `fast` reads back its own
    committed state change while sibling `slow` is still running (blocked on a gate that only
    `fast` opens after its read)."""
    fast_read_back = asyncio.Event()
    slow_started = asyncio.Event()
    observed: dict[str, object] = {}

    async def fast(agent: BaseAgent, ctx: InvocationContext) -> AsyncGenerator[Event, None]:
        await slow_started.wait()
        yield say(agent, ctx, "fast wrote", fast_value=1)
        # Resumed: the Runner committed our event although `slow` has not finished.
        observed["fast_value"] = ctx.session.state.get("fast_value")
        observed["slow_running"] = not slow_finished.is_set()
        fast_read_back.set()
        yield say(agent, ctx, "fast done")

    slow_finished = asyncio.Event()

    async def slow(agent: BaseAgent, ctx: InvocationContext) -> AsyncGenerator[Event, None]:
        yield say(agent, ctx, "slow started", slow_value=1)
        slow_started.set()
        await fast_read_back.wait()
        observed["slow_sees_fast"] = ctx.session.state.get("fast_value")
        slow_finished.set()
        yield say(agent, ctx, "slow done")

    fan = ParallelAgent(
        name="fan",
        sub_agents=[ScriptAgent(name="fast", body=fast), ScriptAgent(name="slow", body=slow)],
    )
    runner = InMemoryRunner(fan, app_name="par")
    sid = await new_session(runner)

    events = await run_turn(runner, sid, "go")

    assert observed == {"fast_value": 1, "slow_running": True, "slow_sees_fast": 1}
    assert rows(events) == [
        ("slow", "fan.slow", "text", "slow started"),
        ("fast", "fan.fast", "text", "fast wrote"),
        ("fast", "fan.fast", "text", "fast done"),
        ("slow", "fan.slow", "text", "slow done"),
    ]


class _Probe:
    """Records how a branch ended."""

    def __init__(self) -> None:
        self.outcome: str | None = None

    async def hold(self, gate: asyncio.Event) -> None:
        try:
            await gate.wait()
        except asyncio.CancelledError:
            self.outcome = "cancelled"
            raise
        self.outcome = "finished"


async def test_parallel_escalate_in_one_branch_cancels_siblings() -> None:
    """Issue 4: an `escalate` in one branch ends the others cleanly (cancelled at their next
    await); what was committed before stays in the session; a sibling's event that was not
    handed over is never written."""
    sibling_started = asyncio.Event()
    never = asyncio.Event()
    probe = _Probe()

    async def boss(agent: BaseAgent, ctx: InvocationContext) -> AsyncGenerator[Event, None]:
        await sibling_started.wait()
        yield say(agent, ctx, "boss before")
        yield Event(
            invocation_id=ctx.invocation_id,
            author=agent.name,
            branch=ctx.branch,
            actions=EventActions(escalate=True, state_delta={"stopped_by": "boss"}),
        )
        yield say(agent, ctx, "boss after escalate (never committed)")

    async def worker(agent: BaseAgent, ctx: InvocationContext) -> AsyncGenerator[Event, None]:
        yield say(agent, ctx, "worker step 1", worker_step=1)
        sibling_started.set()
        await probe.hold(never)
        yield say(agent, ctx, "worker step 2 (never committed)", worker_step=2)

    fan = ParallelAgent(
        name="fan",
        sub_agents=[ScriptAgent(name="boss", body=boss), ScriptAgent(name="worker", body=worker)],
    )
    after = ScriptAgent(name="after", body=lambda agent, ctx: _one(agent, ctx, "after ran"))
    runner = InMemoryRunner(SequentialAgent(name="seq", sub_agents=[fan, after]), app_name="par")
    sid = await new_session(runner)

    events = await run_turn(runner, sid, "go")

    assert rows(events) == [
        ("worker", "fan.worker", "text", "worker step 1"),
        ("boss", "fan.boss", "text", "boss before"),
        ("boss", "fan.boss", "state", {"stopped_by": "boss", "<escalate>": True}),
        # escalate ends the fan-out, not the enclosing sequence
        ("after", None, "text", "after ran"),
    ]
    assert probe.outcome == "cancelled"
    stored = await stored_events(runner, sid)
    assert rows(stored)[1:] == rows(events)
    session = await runner.session_service.get_session(app_name="par", user_id="u", session_id=sid)
    assert session is not None and session.state == {"worker_step": 1, "stopped_by": "boss"}


async def _one(agent: BaseAgent, ctx: InvocationContext, text: str) -> AsyncGenerator[Event, None]:
    yield say(agent, ctx, text)


async def test_parallel_exception_in_one_branch_cancels_siblings_and_keeps_commits() -> None:
    """Issue 4: an exception in one branch ends the others (cancelled), reaches the caller of
    the Runner, leaves every event committed before it in the session, and drops a sibling's
    event that was queued behind the failure (no half-written events)."""
    failing = asyncio.Event()
    worker_ready = asyncio.Event()
    probe = _Probe()

    async def crasher(agent: BaseAgent, ctx: InvocationContext) -> AsyncGenerator[Event, None]:
        await worker_ready.wait()
        yield say(agent, ctx, "crasher step 1", crasher_step=1)
        failing.set()
        raise RuntimeError("disk on fire")

    async def worker(agent: BaseAgent, ctx: InvocationContext) -> AsyncGenerator[Event, None]:
        yield say(agent, ctx, "worker step 1", worker_step=1)
        worker_ready.set()
        await failing.wait()
        # Queued behind the failure: it must never be committed.
        yield say(agent, ctx, "worker step 2", worker_step=2)
        probe.outcome = "resumed after step 2"  # must not happen

    async def bystander(agent: BaseAgent, ctx: InvocationContext) -> AsyncGenerator[Event, None]:
        yield say(agent, ctx, "bystander step 1")
        await probe.hold(asyncio.Event())
        yield say(agent, ctx, "bystander step 2")

    fan = ParallelAgent(
        name="fan",
        sub_agents=[
            ScriptAgent(name="crasher", body=crasher),
            ScriptAgent(name="worker", body=worker),
            ScriptAgent(name="bystander", body=bystander),
        ],
    )
    runner = InMemoryRunner(fan, app_name="par")
    sid = await new_session(runner)
    yielded: list[Event] = []

    with pytest.raises(RuntimeError, match="disk on fire"):
        async for event in runner.run_async(
            user_id="u", session_id=sid, new_message=types.Content(parts=[types.Part(text="go")])
        ):
            yielded.append(event)

    assert sorted(rows(yielded)) == [
        ("bystander", "fan.bystander", "text", "bystander step 1"),
        ("crasher", "fan.crasher", "text", "crasher step 1"),
        ("worker", "fan.worker", "text", "worker step 1"),
    ]
    assert probe.outcome == "cancelled"
    stored = await stored_events(runner, sid)
    assert rows(stored)[1:] == rows(yielded)
    session = await runner.session_service.get_session(app_name="par", user_id="u", session_id=sid)
    assert session is not None and session.state == {"worker_step": 1, "crasher_step": 1}


async def test_parallel_with_no_sub_agents_yields_nothing() -> None:
    """An empty ParallelAgent finishes at once (no hang, no event)."""
    runner = InMemoryRunner(ParallelAgent(name="fan"), app_name="par")
    sid = await new_session(runner)
    assert await run_turn(runner, sid, "go") == []


@pytest.mark.slow
async def test_parallel_hundred_branches_commit_every_event_exactly_once() -> None:
    """Issue 4 benchmark scenario: 100 branches x 100 state events each; every event is
    committed exactly once, with its branch, and the state holds every branch's last write."""
    branches, per_branch = 100, 100

    async def body(agent: BaseAgent, ctx: InvocationContext) -> AsyncGenerator[Event, None]:
        for i in range(per_branch):
            yield Event(
                invocation_id=ctx.invocation_id,
                author=agent.name,
                branch=ctx.branch,
                actions=EventActions(state_delta={agent.name: i}),
            )

    fan = ParallelAgent(
        name="fan",
        sub_agents=[ScriptAgent(name=f"b{n}", body=body) for n in range(branches)],
    )
    runner = InMemoryRunner(fan, app_name="par")
    sid = await new_session(runner)

    events = await run_turn(runner, sid, "go")

    stored = (await stored_events(runner, sid))[1:]
    assert len(events) == len(stored) == branches * per_branch
    assert len({e.id for e in stored}) == branches * per_branch
    assert [e.id for e in stored] == [e.id for e in events]
    per_branch_values: dict[str, list[int]] = {}
    for event in stored:
        assert event.branch == f"fan.{event.author}"
        per_branch_values.setdefault(event.author, []).append(
            event.actions.state_delta[event.author]
        )
    assert per_branch_values == {f"b{n}": list(range(per_branch)) for n in range(branches)}
    session = await runner.session_service.get_session(app_name="par", user_id="u", session_id=sid)
    assert session is not None
    assert session.state == {f"b{n}": per_branch - 1 for n in range(branches)}


# --- LoopAgent ---------------------------------------------------------------------------


async def test_loop_exits_when_critic_calls_exit_loop() -> None:
    """Issue 4 'loop exit by escalate' (exit_loop tool): the loop ends on the escalating
    response; the drafter sees the critic's feedback from the previous round."""
    drafter_model = ScriptedModel(responses=["draft v1", "draft v2"])
    critic_model = ScriptedModel(responses=["Too vague.", tool_call_response(("exit_loop", {}))])
    loop = LoopAgent(
        name="review",
        max_iterations=5,
        sub_agents=[
            LlmAgent(name="drafter", model=drafter_model, output_key="draft"),
            LlmAgent(
                name="critic",
                model=critic_model,
                instruction="Review: {draft}",
                tools=[exit_loop],
            ),
        ],
    )
    runner = InMemoryRunner(loop, app_name="loop")
    sid = await new_session(runner)

    events = await run_turn(runner, sid, "write")

    assert rows(events) == [
        ("drafter", None, "text", "draft v1"),
        ("critic", None, "text", "Too vague."),
        ("drafter", None, "text", "draft v2"),
        ("critic", None, "call", "exit_loop()"),
        ("critic", None, "response", "exit_loop -> escalate"),
    ]
    assert critic_model.requests[1].config.system_instruction == "Review: draft v2"
    assert "[critic] said: Too vague." in request_texts(drafter_model.requests[1].contents)


async def test_loop_exits_on_custom_agent_escalate_event() -> None:
    """Issue 4 'loop exit by escalate' (EventActions(escalate=True)): later sub-agents of the
    round do not run."""

    async def counter(agent: BaseAgent, ctx: InvocationContext) -> AsyncGenerator[Event, None]:
        n = int(ctx.session.state.get("n", 0)) + 1
        yield Event(
            invocation_id=ctx.invocation_id,
            author=agent.name,
            actions=EventActions(state_delta={"n": n}, escalate=n == 3),
        )

    never = ScriptedModel()
    loop = LoopAgent(
        name="loop",
        max_iterations=None,
        sub_agents=[ScriptAgent(name="counter", body=counter), LlmAgent(name="tail", model=never)],
    )
    # tail answers in rounds 1 and 2 only.
    never.add("tail 1", "tail 2")
    runner = InMemoryRunner(loop, app_name="loop")
    sid = await new_session(runner)

    events = await run_turn(runner, sid, "go")

    assert rows(events) == [
        ("counter", None, "state", {"n": 1}),
        ("tail", None, "text", "tail 1"),
        ("counter", None, "state", {"n": 2}),
        ("tail", None, "text", "tail 2"),
        ("counter", None, "state", {"n": 3, "<escalate>": True}),
    ]


async def test_loop_stops_at_max_iterations() -> None:
    """Issue 4 'loop exit by max_iterations'."""
    model = ScriptedModel(responses=["round 1", "round 2", "round 3"])
    loop = LoopAgent(name="loop", max_iterations=3, sub_agents=[LlmAgent(name="step", model=model)])
    runner = InMemoryRunner(loop, app_name="loop")
    sid = await new_session(runner)

    events = await run_turn(runner, sid, "go")

    assert rows(events) == [
        ("step", None, "text", "round 1"),
        ("step", None, "text", "round 2"),
        ("step", None, "text", "round 3"),
    ]
    assert LoopAgent(name="default").max_iterations == 10


def test_loop_rejects_non_positive_max_iterations() -> None:
    """Issue 4: a loop that never ends needs max_iterations=None on purpose; 0 is an error."""
    with pytest.raises(UsageError, match="max_iterations must be an integer of at least 1"):
        LoopAgent(name="loop", max_iterations=0)


async def test_unbounded_loop_without_sub_agents_ends() -> None:
    """A LoopAgent with nothing to run and no limit returns at once instead of spinning."""
    runner = InMemoryRunner(LoopAgent(name="loop", max_iterations=None), app_name="loop")
    sid = await new_session(runner)
    assert await run_turn(runner, sid, "go") == []


async def test_inner_loop_escalate_ends_only_the_inner_loop() -> None:
    """Issue 4 nesting: exit_loop in a nested LoopAgent ends that loop; the outer loop goes on
    to its next sub-agent and round."""
    inner_model = ScriptedModel(
        responses=[tool_call_response(("exit_loop", {})), tool_call_response(("exit_loop", {}))]
    )
    after_model = ScriptedModel(responses=["after 1", "after 2"])
    outer = LoopAgent(
        name="outer",
        max_iterations=2,
        sub_agents=[
            LoopAgent(
                name="inner",
                sub_agents=[LlmAgent(name="quitter", model=inner_model, tools=[exit_loop])],
            ),
            LlmAgent(name="after", model=after_model),
        ],
    )
    runner = InMemoryRunner(outer, app_name="loop")
    sid = await new_session(runner)

    events = await run_turn(runner, sid, "go")

    assert rows(events) == [
        ("quitter", None, "call", "exit_loop()"),
        ("quitter", None, "response", "exit_loop -> escalate"),
        ("after", None, "text", "after 1"),
        ("quitter", None, "call", "exit_loop()"),
        ("quitter", None, "response", "exit_loop -> escalate"),
        ("after", None, "text", "after 2"),
    ]


async def test_caller_leaving_early_cancels_every_branch() -> None:
    """Structured concurrency (STYLE 'no task without an owner'): when the Runner's caller
    stops iterating mid fan-out, every branch task is cancelled; nothing more is committed."""
    probes = [_Probe(), _Probe()]
    started = [asyncio.Event(), asyncio.Event()]

    def branch(n: int) -> ScriptAgent:
        async def body(agent: BaseAgent, ctx: InvocationContext) -> AsyncGenerator[Event, None]:
            yield say(agent, ctx, f"b{n} step 1")
            started[n].set()
            await probes[n].hold(asyncio.Event())
            yield say(agent, ctx, f"b{n} step 2")

        return ScriptAgent(name=f"b{n}", body=body)

    runner = InMemoryRunner(ParallelAgent(name="fan", sub_agents=[branch(0), branch(1)]))
    sid = await new_session(runner)
    events = runner.run_async(
        user_id="u", session_id=sid, new_message=types.Content(parts=[types.Part(text="go")])
    )
    first = await anext(events)
    second = await anext(events)
    # Asking for `second` let `first`'s branch resume (its event was committed); `second`'s
    # branch still waits for the commit of its event (the caller has not asked for more).
    n = 0 if first.author == "b0" else 1
    await started[n].wait()
    await events.aclose()

    assert sorted([first.text or "", second.text or ""]) == ["b0 step 1", "b1 step 1"]
    assert probes[n].outcome == "cancelled"
    assert probes[1 - n].outcome is None and not started[1 - n].is_set()
    assert asyncio.all_tasks() == {asyncio.current_task()}
    assert rows(await stored_events(runner, sid))[1:] == rows([first, second])


async def test_bench_parallel_round_checks_every_commit() -> None:
    """benchmarks/bench_parallel.py runs the issue 4 fan-out scenario; a small round passes
    its own exactly-once checks (so the benchmark's figure is of a correct run)."""
    from benchmarks.bench_parallel import one_round

    assert await one_round(branches=5, events_per_branch=7) >= 0.0


# --- Memory ------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["sequential", "loop", "parallel"])
async def test_a_workflow_agents_turn_leaves_no_reference_cycle(kind: str) -> None:
    """A turn's objects are freed as soon as it ends, not left to the garbage collector: a
    reference cycle through a run (a LoopAgent's chain once kept a bound method of itself)
    keeps its context, session and events alive until a collection, and collections then
    come every few turns (+5% instructions a resumable loop turn)."""

    async def body(agent: BaseAgent, ctx: InvocationContext) -> AsyncGenerator[Event, None]:
        yield say(agent, ctx, agent.name)

    steps: list[BaseAgent] = [ScriptAgent(name=f"s{n}", body=body) for n in range(3)]
    agent: BaseAgent
    if kind == "loop":
        agent = LoopAgent(name="root", sub_agents=steps, max_iterations=2)
    elif kind == "parallel":
        agent = ParallelAgent(name="root", sub_agents=steps)
    else:
        agent = SequentialAgent(name="root", sub_agents=steps)
    runner = InMemoryRunner(agent, app_name="cycles")
    await run_turn(runner, await new_session(runner), "warm up")  # first-call caches
    gc.collect()
    gc.disable()
    try:
        events = await run_turn(runner, await new_session(runner), "go")
        del events
        assert gc.collect() == 0
    finally:
        gc.enable()
