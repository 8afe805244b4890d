"""The Runner's event loop: the spec's rules, each in a test that names it."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator
from contextlib import aclosing
from typing import Any

import pytest

from eventide import (
    App,
    BaseAgent,
    BasePlugin,
    CallbackContext,
    Event,
    EventActions,
    InMemoryArtifactService,
    InMemoryMemoryService,
    InMemoryRunner,
    InMemorySessionService,
    InvocationContext,
    LlmAgent,
    Runner,
    types,
)
from eventide.errors import (
    AgentTreeError,
    InvalidStateValueError,
    RunnerClosedError,
    SessionNotFoundError,
)
from eventide.testing import ScriptedModel


class Scripted(BaseAgent):
    """A custom agent that yields the events its ``steps`` function produces."""

    steps: Any = None

    async def _run_async_impl(self, ctx: InvocationContext) -> AsyncGenerator[Event, None]:
        async with aclosing(self.steps(self, ctx)) as events:
            async for event in events:
                yield event


def agent(name: str, steps: Any, **kwargs: Any) -> Scripted:
    return Scripted(name=name, steps=steps, **kwargs)


async def new_runner(root: BaseAgent, **kwargs: Any) -> tuple[Runner, str]:
    runner = Runner(
        app_name="app",
        agent=root,
        session_service=kwargs.pop("session_service", InMemorySessionService()),
        artifact_service=InMemoryArtifactService(),
        memory_service=kwargs.pop("memory_service", InMemoryMemoryService()),
        **kwargs,
    )
    session = await runner.session_service.create_session(app_name="app", user_id="u")
    return runner, session.id


async def run(runner: Runner, session_id: str, message: str = "hi", **kwargs: Any) -> list[Event]:
    return [
        e
        async for e in runner.run_async(
            user_id="u", session_id=session_id, new_message=message, **kwargs
        )
    ]


async def stored(runner: Runner, session_id: str, user_id: str = "u") -> Any:
    session = await runner.session_service.get_session(
        app_name="app", user_id=user_id, session_id=session_id
    )
    assert session is not None
    return session


async def test_runner_loop_order() -> None:
    """Spec "Runner's Role": append the user message, kick off the agent, commit each event,
    then yield it upstream; plugins see the same order."""
    log: list[str] = []

    class Recorder(BasePlugin):
        async def on_user_message_callback(self, **kw: Any) -> None:
            log.append("on_user_message")

        async def before_run_callback(self, *, invocation_context: InvocationContext) -> None:
            user_events = [e for e in invocation_context.session.events if e.author == "user"]
            log.append(f"before_run(user events stored={len(user_events)})")

        async def before_agent_callback(self, **kw: Any) -> None:
            log.append("before_agent")

        async def on_event_callback(
            self, *, invocation_context: InvocationContext, event: Event
        ) -> None:
            committed = event in invocation_context.session.events
            log.append(f"on_event({event.text}, committed={committed})")

        async def after_agent_callback(self, **kw: Any) -> None:
            log.append("after_agent")

        async def after_run_callback(self, **kw: Any) -> None:
            log.append("after_run")

    async def steps(self: BaseAgent, ctx: InvocationContext) -> AsyncGenerator[Event, None]:
        for text in ("one", "two"):
            log.append(f"agent yields {text}")
            yield Event(
                author=self.name, content=types.Content(role="model", parts=[types.Part(text=text)])
            )
            log.append(f"agent resumed after {text}")

    runner, sid = await new_runner(agent("a", steps), plugins=[Recorder("rec")])
    async for event in runner.run_async(user_id="u", session_id=sid, new_message="hi"):
        log.append(f"caller got {event.text}")
    assert log == [
        "on_user_message",
        "before_run(user events stored=1)",
        "before_agent",
        "agent yields one",
        "on_event(one, committed=True)",
        "caller got one",
        "agent resumed after one",
        "agent yields two",
        "on_event(two, committed=True)",
        "caller got two",
        "agent resumed after two",
        "after_agent",
        "after_run",
    ]


async def test_commit_before_resume_agent_reads_back_what_it_yielded() -> None:
    """Spec "State Updates & Commitment Timing": after resuming from a yield, the state change
    of the yielded event is committed (ctx.session.state and the stored session)."""
    seen: list[Any] = []
    service = InMemorySessionService()

    async def steps(self: BaseAgent, ctx: InvocationContext) -> AsyncGenerator[Event, None]:
        yield Event(author=self.name, actions=EventActions(state_delta={"field_1": "value_2"}))
        seen.append(ctx.session.state["field_1"])
        persisted = await service.get_session(
            app_name="app", user_id="u", session_id=ctx.session.id
        )
        assert persisted is not None
        seen.append(persisted.state["field_1"])

    runner, sid = await new_runner(agent("a", steps), session_service=service)
    await run(runner, sid)
    assert seen == ["value_2", "value_2"]


async def test_dirty_reads_before_commit() -> None:
    """Spec "Dirty Reads": a write through a context is visible to later code in the same
    invocation before the event carrying it is committed, and recorded into that event."""
    seen: dict[str, Any] = {}

    async def steps(self: BaseAgent, ctx: InvocationContext) -> AsyncGenerator[Event, None]:
        writer = CallbackContext(ctx)
        writer.state["field_1"] = "value_1"
        seen["other context"] = CallbackContext(ctx).state["field_1"]
        seen["committed before yield"] = ctx.session.state.get("field_1")
        yield Event(author=self.name, actions=writer.actions)
        seen["committed after yield"] = ctx.session.state.get("field_1")

    runner, sid = await new_runner(agent("a", steps))
    events = await run(runner, sid)
    assert seen == {
        "other context": "value_1",
        "committed before yield": None,
        "committed after yield": "value_1",
    }
    assert events[0].actions.state_delta == {"field_1": "value_1"}


async def test_uncommitted_dirty_write_is_lost_when_never_yielded() -> None:
    """Spec "Dirty Reads" caveat: a change never carried by a processed event is not persisted."""

    async def steps(self: BaseAgent, ctx: InvocationContext) -> AsyncGenerator[Event, None]:
        CallbackContext(ctx).state["lost"] = True
        yield Event(
            author=self.name, content=types.Content(role="model", parts=[types.Part(text="ok")])
        )

    runner, sid = await new_runner(agent("a", steps))
    await run(runner, sid)
    assert "lost" not in (await stored(runner, sid)).state


async def test_partial_events_are_forwarded_but_never_committed() -> None:
    """Spec "Streaming vs. Non-Streaming": partial events go upstream at once, their actions
    are skipped, and only the final non-partial event is committed."""

    async def steps(self: BaseAgent, ctx: InvocationContext) -> AsyncGenerator[Event, None]:
        for chunk in ("Hel", "lo"):
            yield Event(
                author=self.name,
                partial=True,
                content=types.Content(role="model", parts=[types.Part(text=chunk)]),
                actions=EventActions(state_delta={"from_partial": chunk}),
            )
        yield Event(
            author=self.name,
            content=types.Content(role="model", parts=[types.Part(text="Hello")]),
            actions=EventActions(state_delta={"final": True}),
        )

    runner, sid = await new_runner(agent("a", steps))
    events = await run(runner, sid)
    assert [(e.text, bool(e.partial)) for e in events] == [
        ("Hel", True),
        ("lo", True),
        ("Hello", False),
    ]
    session = await stored(runner, sid)
    assert [e.text for e in session.events] == ["hi", "Hello"]
    assert session.state == {"final": True}


async def test_temp_state_is_invocation_scoped_and_never_stored() -> None:
    """Spec "Invocation" / state prefixes: temp: keys are visible within the invocation
    (also after the event carrying them is committed) and discarded afterwards."""
    seen: list[Any] = []

    async def steps(self: BaseAgent, ctx: InvocationContext) -> AsyncGenerator[Event, None]:
        cc = CallbackContext(ctx)
        seen.append(cc.state.get("temp:scratch"))
        cc.state["temp:scratch"] = "work"
        cc.state["kept"] = 1
        yield Event(author=self.name, actions=cc.actions)
        seen.append(CallbackContext(ctx).state.get("temp:scratch"))

    runner, sid = await new_runner(agent("a", steps))
    events = await run(runner, sid)
    await run(runner, sid)
    assert seen == [None, "work", None, "work"]
    session = await stored(runner, sid)
    assert session.state == {"kept": 1}
    assert all("temp:scratch" not in e.actions.state_delta for e in session.events)
    assert events[0].actions.state_delta == {"kept": 1}


async def test_app_and_user_scopes_are_shared_exactly_as_far_as_they_should_be() -> None:
    """Spec state prefixes: app: is shared by every user and session of the app; user: by a
    user's sessions; neither leaks to another app or user; plain keys stay in the session."""
    service = InMemorySessionService()

    async def steps(self: BaseAgent, ctx: InvocationContext) -> AsyncGenerator[Event, None]:
        yield Event(
            author=self.name,
            actions=EventActions(state_delta={"app:motd": "hi", "user:lang": "fr", "mine": 1}),
        )

    runner, sid = await new_runner(agent("a", steps), session_service=service)
    await run(runner, sid)
    same_user = await service.create_session(app_name="app", user_id="u")
    other_user = await service.create_session(app_name="app", user_id="v")
    other_app = await service.create_session(app_name="other", user_id="u")
    assert same_user.state == {"app:motd": "hi", "user:lang": "fr"}
    assert other_user.state == {"app:motd": "hi"}
    assert other_app.state == {}


async def test_invocation_ids_group_one_turn() -> None:
    """Spec identifiers: every event of one invocation (the user's included) shares its
    invocation_id; the next turn gets a new one; event ids are all distinct."""

    async def steps(self: BaseAgent, ctx: InvocationContext) -> AsyncGenerator[Event, None]:
        for _ in range(3):
            yield Event(author=self.name)

    runner, sid = await new_runner(agent("a", steps))
    await run(runner, sid)
    await run(runner, sid)
    session = await stored(runner, sid)
    ids = [e.invocation_id for e in session.events]
    assert len(ids) == 8 and len(set(ids[:4])) == 1 and len(set(ids[4:])) == 1
    assert ids[0] != ids[4] and ids[0].startswith("e-")
    assert len({e.id for e in session.events}) == 8


async def test_artifact_versions_recorded_in_artifact_delta() -> None:
    """Spec `artifact_delta`: saving through a context returns versions 0, 1, ...; the event
    carries {filename: version}; the Runner commits it with the event."""

    async def steps(self: BaseAgent, ctx: InvocationContext) -> AsyncGenerator[Event, None]:
        cc = CallbackContext(ctx)
        v0 = await cc.save_artifact("report.txt", types.Part(text="draft"))
        v1 = await cc.save_artifact("report.txt", types.Part(text="final"))
        assert (v0, v1) == (0, 1)
        yield Event(author=self.name, actions=cc.actions)
        assert await CallbackContext(ctx).list_artifacts() == ["report.txt"]

    runner, sid = await new_runner(agent("a", steps))
    events = await run(runner, sid)
    assert events[0].actions.artifact_delta == {"report.txt": 1}
    session = await stored(runner, sid)
    assert session.events[-1].actions.artifact_delta == {"report.txt": 1}
    assert runner.artifact_service is not None
    loaded = await runner.artifact_service.load_artifact(
        app_name="app", user_id="u", session_id=sid, filename="report.txt", version=0
    )
    assert loaded == types.Part(text="draft")


async def test_state_delta_with_the_user_message() -> None:
    """run_async(state_delta=...) is committed together with the user's event."""

    async def steps(self: BaseAgent, ctx: InvocationContext) -> AsyncGenerator[Event, None]:
        assert ctx.session.state["user:plan"] == "pro"
        yield Event(author=self.name)

    runner, sid = await new_runner(agent("a", steps))
    await run(runner, sid, state_delta={"user:plan": "pro"})
    session = await stored(runner, sid)
    assert session.events[0].author == "user"
    assert session.events[0].actions.state_delta == {"user:plan": "pro"}


async def test_non_json_state_value_is_rejected_and_earlier_commits_survive() -> None:
    """Bad input: a non-JSON-serialisable state value gets a clear error; what was committed
    before stays committed and readable, and nothing of the bad event is stored."""

    async def steps(self: BaseAgent, ctx: InvocationContext) -> AsyncGenerator[Event, None]:
        yield Event(author=self.name, actions=EventActions(state_delta={"good": 1}))
        yield Event(author=self.name, actions=EventActions(state_delta={"bad": object()}))

    runner, sid = await new_runner(agent("a", steps))
    with pytest.raises(InvalidStateValueError, match="'bad'"):
        await run(runner, sid)
    session = await stored(runner, sid)
    assert session.state == {"good": 1}
    assert len(session.events) == 2


async def test_unknown_session_and_auto_create() -> None:
    """Bad input: an unknown session is a clear error naming it; auto_create_session creates it."""
    runner, _ = await new_runner(agent("a", _no_events))
    with pytest.raises(SessionNotFoundError, match="'nope'") as info:
        await run(runner, "nope")
    assert info.value.session_id == "nope"
    auto, _ = await new_runner(agent("a", _no_events), auto_create_session=True)
    await run(auto, "fresh")
    assert (await stored(auto, "fresh")).events[0].text == "hi"


async def _no_events(self: BaseAgent, ctx: InvocationContext) -> AsyncGenerator[Event, None]:
    return
    yield  # pragma: no cover


async def test_callback_that_raises_keeps_earlier_commits() -> None:
    """Bad input: a callback that raises ends the invocation with that error; events committed
    before it are still stored and readable."""

    async def steps(self: BaseAgent, ctx: InvocationContext) -> AsyncGenerator[Event, None]:
        yield Event(author=self.name, actions=EventActions(state_delta={"step": 1}))

    def boom(callback_context: CallbackContext) -> None:
        raise RuntimeError("callback failed")

    runner, sid = await new_runner(agent("a", steps, after_agent_callback=boom))
    with pytest.raises(RuntimeError, match="callback failed"):
        await run(runner, sid)
    session = await stored(runner, sid)
    assert session.state == {"step": 1}
    assert [e.author for e in session.events] == ["user", "a"]


def test_agent_tree_errors(caplog: pytest.LogCaptureFixture) -> None:
    """Bad input: invalid names, 'user' and an agent with two parents are clear errors;
    duplicate names (siblings or anywhere in the tree) log a warning naming them, as
    google-adk does (issue 14), and the tree still runs."""
    with pytest.raises(AgentTreeError, match="not a valid identifier"):
        agent("1bad", _no_events)
    with pytest.raises(AgentTreeError, match="reserved"):
        agent("user", _no_events)
    child = agent("child", _no_events)
    agent("parent", _no_events, sub_agents=[child])
    with pytest.raises(AgentTreeError, match="already has parent 'parent'"):
        agent("other", _no_events, sub_agents=[child])
    with caplog.at_level("WARNING", logger="eventide.agents"):
        agent("p", _no_events, sub_agents=[agent("x", _no_events), agent("x", _no_events)])
    assert "Agent tree 'p' has several agents named 'x'" in caplog.text
    caplog.clear()
    deep = agent(
        "root",
        _no_events,
        sub_agents=[agent("mid", _no_events, sub_agents=[agent("root2", _no_events)])],
    )
    Runner(app_name="app", agent=deep, session_service=InMemorySessionService())
    assert caplog.text == ""
    with caplog.at_level("WARNING", logger="eventide.agents"):
        clash = agent(
            "top",
            _no_events,
            sub_agents=[agent("mid", _no_events, sub_agents=[agent("top", _no_events)])],
        )
    assert "several agents named 'top'" in caplog.text
    Runner(app_name="app", agent=clash, session_service=InMemorySessionService())


def test_tree_navigation() -> None:
    leaf = agent("leaf", _no_events)
    root = agent("root", _no_events, sub_agents=[agent("mid", _no_events, sub_agents=[leaf])])
    assert root.find_agent("leaf") is leaf and leaf.root_agent is root
    assert root.find_agent("nobody") is None
    assert [a.name for a in root.walk()] == ["root", "mid", "leaf"]


async def test_closed_runner_refuses_to_run() -> None:
    """Bad input: a closed Runner raises a clear error."""
    runner, sid = await new_runner(agent("a", _no_events))
    await runner.close()
    with pytest.raises(RunnerClosedError, match="closed"):
        await run(runner, sid)


def test_sync_run_and_early_break_cancels_cleanly() -> None:
    """Spec "Async is Primary": Runner.run is a sync wrapper of run_async; breaking out of it
    early closes the invocation (the agent's cleanup runs, nothing more is committed)."""
    cleanup: list[str] = []

    async def steps(self: BaseAgent, ctx: InvocationContext) -> AsyncGenerator[Event, None]:
        try:
            for i in range(10):
                yield Event(author=self.name, actions=EventActions(state_delta={"i": i}))
        finally:
            cleanup.append("closed")

    runner = InMemoryRunner(agent("a", steps), app_name="app")
    loop = asyncio.new_event_loop()
    try:
        session = loop.run_until_complete(
            runner.session_service.create_session(app_name="app", user_id="u")
        )
    finally:
        loop.close()
    seen = []
    for event in runner.run(user_id="u", session_id=session.id, new_message="go"):
        seen.append(event.actions.state_delta["i"])
        if len(seen) == 3:
            break
    assert seen == [0, 1, 2]
    assert cleanup == ["closed"]
    assert [
        e.actions.state_delta["i"]
        for e in runner.run(user_id="u", session_id=session.id, new_message="again")
    ] == list(range(10))
    runner.close_sync()


async def test_sync_run_inside_event_loop_runs_on_a_worker_thread() -> None:
    """Spec "async-first with a sync convenience run": Runner.run inside a running loop
    (a notebook, an async test) runs the invocation on a worker thread, as google-adk does."""
    runner, sid = await new_runner(agent("a", _no_events))
    events = list(runner.run(user_id="u", session_id=sid, new_message="x"))
    assert events == []
    session = await runner.session_service.get_session(app_name="app", user_id="u", session_id=sid)
    assert session is not None and [e.author for e in session.events] == ["user"]
    await runner.close()


async def test_add_sessions_to_memory_opt_in() -> None:
    """Spec runner loop (memory update): opt-in memory indexing of finished invocations."""
    memory = InMemoryMemoryService()

    async def steps(self: BaseAgent, ctx: InvocationContext) -> AsyncGenerator[Event, None]:
        yield Event(
            author=self.name,
            content=types.Content(
                role="model", parts=[types.Part(text="Your locker code is 4412")]
            ),
        )

    runner, sid = await new_runner(
        agent("a", steps), memory_service=memory, add_sessions_to_memory=True
    )
    await run(runner, sid, "what is my locker code")
    found = await memory.search_memory(app_name="app", user_id="u", query="locker code")
    assert [m.content.text for m in found.memories][:1] in (
        ["Your locker code is 4412"],
        ["what is my locker code"],
    )
    assert len(found.memories) == 2


def test_runner_app_is_the_app_given_or_the_one_its_arguments_stand_for() -> None:
    """google-adk 2.13's ``Runner.app``: the ``App`` given (even when ``app_name`` overrides
    its name), or one wrapping ``app_name`` and ``agent`` with the Runner's plugins; before,
    Eventide's Runner had no ``app``."""
    root = LlmAgent(name="root", model=ScriptedModel(responses=["ok"]))
    plugin = BasePlugin(name="p")
    given = App(name="shop", root_agent=root)
    runner = Runner(app=given, app_name="override", session_service=InMemorySessionService())
    assert runner.app is given
    assert runner.app_name == "override"

    wrapped = Runner(
        app_name="my app (any name)",
        agent=root,
        plugins=[plugin],
        session_service=InMemorySessionService(),
    ).app
    assert isinstance(wrapped, App)
    assert wrapped.name == "my app (any name)"
    assert wrapped.root_agent is root
    assert wrapped.plugins == [plugin]
    assert wrapped.resumability_config is None
