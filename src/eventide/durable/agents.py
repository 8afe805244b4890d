"""Running agents resumably: markers while running, and continuing from the log.

``BaseAgent.run_async`` hands over to :func:`run_resumably` when the invocation is resumable.
It runs the agent as usual (callbacks, its own logic) and commits the markers
:mod:`eventide.durable.log` describes. When the agent's context carries a
:class:`~eventide.durable.log.ResumeScope`, the agent continues from its last committed
event instead of starting again:

- an agent that ended is skipped; one that had not committed anything runs from its start;
- a ``SequentialAgent`` continues the step its latest marker names, then runs the next ones;
- a ``LoopAgent`` does the same in the round its marker names (unless a committed escalation
  already ended the loop);
- a ``ParallelAgent`` resumes every branch independently (each from its own events);
- an ``LlmAgent`` continues its model/tool loop (:mod:`eventide.durable.llm_resume`).

Any other agent that had started cannot be continued from the log (its position is its
own): resuming it raises ``ResumeError`` rather than repeating what it already committed.
"""

# This module runs BaseAgent's steps (_before_agent, _run_async_impl, _after_agent) from
# outside the class: it is the resumable implementation of BaseAgent.run_async.
# pyright: reportPrivateUsage=false

from __future__ import annotations

from collections.abc import AsyncGenerator
from contextlib import aclosing
from typing import Any

from eventide.agents.base_agent import BaseAgent
from eventide.agents.llm_agent import LlmAgent
from eventide.agents.loop_agent import LoopAgent, escalation_reaches
from eventide.agents.parallel_agent import ParallelAgent
from eventide.agents.sequential_agent import SequentialAgent
from eventide.contexts import InvocationContext
from eventide.durable.llm_resume import resume_llm_agent
from eventide.durable.log import ENDED, FINISHED, INVOCATION_KEY, AgentProgress, ResumeScope
from eventide.errors import ResumeError
from eventide.events import Event, EventActions
from eventide.plugins.base_plugin import BasePlugin

__all__ = ["run_resumably"]


async def run_resumably(
    agent: BaseAgent, ctx: InvocationContext, *, top: bool
) -> AsyncGenerator[Event, None]:
    """Run ``agent`` (its own context ``ctx``) recording markers, or continue it from
    ``ctx.resume``. ``top``: the agent is the one the Runner started for the turn."""
    scope = ctx.resume
    ctx.resume = None  # children get their own scope, explicitly
    progress = scope.progress(agent.name, ctx.branch) if scope is not None else None
    if progress is not None and progress.ended:
        return
    plugins = ctx.plugin_manager
    has_callbacks = agent.before_agent_callback is not None or plugins.overrides(
        BasePlugin.before_agent_callback
    )
    if progress is None or not progress.started:
        if has_callbacks:
            event, skip = await agent._before_agent(ctx)
            if skip:
                assert event is not None
                yield _end_marker(agent, ctx, event, top=top)
                return
            if event is not None:
                yield event
            if ctx.end_invocation:
                if top:
                    yield _invocation_end(agent, ctx)
                return
        body = _fresh(agent, ctx)
    else:
        assert scope is not None
        body = _resumed(agent, ctx, scope, progress)
    # The agent's own final answer is held back until the body ends: when nothing follows
    # it, it carries the end marker itself (one event fewer to commit per agent).
    held: Event | None = None
    async with aclosing(body) as events:
        try:
            async for event in events:
                if held is not None:
                    yield held
                    held = None
                if _answers_last(agent, ctx, event):
                    held = event
                else:
                    yield event
        except Exception:
            if held is not None:
                yield held  # committed before the failure propagates
            raise
    if ctx.end_invocation:
        if held is not None:
            yield held
        if top:
            yield _invocation_end(agent, ctx)
        return
    after = None
    if agent.after_agent_callback is not None or plugins.overrides(BasePlugin.after_agent_callback):
        after = await agent._after_agent(ctx)
    if held is not None and after is not None:
        yield held
        held = None
    yield _end_marker(agent, ctx, after or held, top=top)


def _answers_last(agent: BaseAgent, ctx: InvocationContext, event: Event) -> bool:
    """Whether ``event`` is an answer of the agent's own after which an ``LlmAgent`` runs
    nothing more (no calls or responses, no control actions; an ``output_key`` state
    delta is fine): safe to commit a moment later, when the body has ended, with the end
    marker on it."""
    if not (
        isinstance(agent, LlmAgent)
        and event.author == agent.name
        and event.branch == ctx.branch
        and not event.partial
        and event.content is not None
        and not event.long_running_tool_ids
    ):
        return False
    actions = event.actions
    control = (
        actions.transfer_to_agent
        or actions.escalate
        or actions.skip_summarization
        or actions.requested_auth_configs
        or actions.requested_tool_confirmations
        or actions.end_of_agent
        or actions.agent_state is not None
    )
    return not control and not event.get_function_calls() and not event.get_function_responses()


def _fresh(agent: BaseAgent, ctx: InvocationContext) -> AsyncGenerator[Event, None]:
    kind = _workflow_kind(agent)
    if kind is SequentialAgent:
        return _sequential(agent, ctx, start=0, child=None)
    if kind is LoopAgent:
        assert isinstance(agent, LoopAgent)
        return _loop(agent, ctx, times_looped=0, start=0, child=None)
    if kind is ParallelAgent:
        return _parallel(agent, ctx, child=None)
    return agent._run_async_impl(ctx)


def _resumed(
    agent: BaseAgent, ctx: InvocationContext, scope: ResumeScope, progress: AgentProgress
) -> AsyncGenerator[Event, None]:
    kind = _workflow_kind(agent)
    if kind is SequentialAgent:
        if progress.state is None:  # only a callback's event: no step had started
            return _sequential(agent, ctx, start=0, child=None)
        start = _step_index(agent, progress.state, ctx)
        return _sequential(agent, ctx, start=start, child=scope.at(progress.state_position))
    if kind is LoopAgent:
        assert isinstance(agent, LoopAgent)
        if progress.state is None:
            return _loop(agent, ctx, times_looped=0, start=0, child=None)
        if _escalated(agent, scope, progress.state_position, ctx.branch):
            return _nothing()
        start = _step_index(agent, progress.state, ctx)
        times = int(progress.state.get("times_looped", 0))
        return _loop(
            agent, ctx, times_looped=times, start=start, child=scope.at(progress.state_position)
        )
    if kind is ParallelAgent:
        if progress.state is None:
            return _parallel(agent, ctx, child=None)
        if _escalated(agent, scope, progress.state_position, ctx.branch):
            return _nothing()
        return _parallel(agent, ctx, child=scope.at(progress.state_position))
    if isinstance(agent, LlmAgent):
        return resume_llm_agent(agent, ctx, scope, progress)
    if not any(e.content is not None or not e.actions.is_empty() for _, e in progress.events):
        return agent._run_async_impl(ctx)
    if getattr(agent, "resumes_from_log", False) is True:
        # The agent reads where it is from the session's events itself (RemoteA2aAgent:
        # the remote task its last event names): running it again continues it.
        return agent._run_async_impl(ctx)
    raise ResumeError(
        f"Agent {agent.name!r} ({type(agent).__name__}) had started when invocation "
        f"{ctx.invocation_id} stopped, and a custom agent's position cannot be read from the "
        "log. Start a new turn instead (the committed events stay in the session).",
        invocation_id=ctx.invocation_id,
    )


def _workflow_kind(agent: BaseAgent) -> type[BaseAgent] | None:
    """The built-in workflow an agent runs as, unless a subclass replaced its logic."""
    impl = type(agent)._run_async_impl
    for kind in (SequentialAgent, LoopAgent, ParallelAgent):
        if isinstance(agent, kind) and impl is kind._run_async_impl:
            return kind
    return None


async def _sequential(
    agent: BaseAgent, ctx: InvocationContext, *, start: int, child: ResumeScope | None
) -> AsyncGenerator[Event, None]:
    for index in range(start, len(agent.sub_agents)):
        sub_agent = agent.sub_agents[index]
        if child is not None and index == start:
            ctx.resume = child
        else:
            yield _step_marker(agent, ctx, {"current_sub_agent": sub_agent.name})
        async with aclosing(sub_agent.run_async(ctx)) as events:
            async for event in events:
                yield event
        ctx.resume = None  # the step took its copy of the scope; later steps run fresh
        if ctx.end_invocation:
            return


async def _loop(
    agent: LoopAgent,
    ctx: InvocationContext,
    *,
    times_looped: int,
    start: int,
    child: ResumeScope | None,
) -> AsyncGenerator[Event, None]:
    if not agent.sub_agents:
        return
    limit = agent.max_iterations
    first = True
    while limit is None or times_looped < limit:
        for index in range(start if first else 0, len(agent.sub_agents)):
            sub_agent = agent.sub_agents[index]
            if first and child is not None and index == start:
                ctx.resume = child
            else:
                state = {"current_sub_agent": sub_agent.name, "times_looped": times_looped}
                yield _step_marker(agent, ctx, state)
            async with aclosing(sub_agent.run_async(ctx)) as events:
                async for event in events:
                    yield event
                    if event.actions.escalate and escalation_reaches(agent, event.author):
                        return
            ctx.resume = None
            if ctx.end_invocation:
                return
        first = False
        times_looped += 1


async def _parallel(
    agent: BaseAgent, ctx: InvocationContext, *, child: ResumeScope | None
) -> AsyncGenerator[Event, None]:
    if child is None:
        yield _step_marker(agent, ctx, {})
    # Every branch's copy of the context inherits the scope; each resumes from its own events.
    ctx.resume = child
    async with aclosing(agent._run_async_impl(ctx)) as events:
        async for event in events:
            yield event


async def _nothing() -> AsyncGenerator[Event, None]:
    return
    yield  # pragma: no cover - makes this an async generator


def _escalated(agent: BaseAgent, scope: ResumeScope, position: int, branch: str | None) -> bool:
    """Whether an escalation that ends ``agent`` was committed after its latest marker."""
    return any(
        event.actions.escalate and escalation_reaches(agent, event.author)
        for event in scope.after(position, branch)
    )


def _step_index(agent: BaseAgent, state: dict[str, Any], ctx: InvocationContext) -> int:
    name = state.get("current_sub_agent")
    for index, sub_agent in enumerate(agent.sub_agents):
        if sub_agent.name == name:
            return index
    raise ResumeError(
        f"Invocation {ctx.invocation_id} stopped in step {name!r} of {agent.name!r}, but "
        f"{agent.name!r} has no sub-agent {name!r} now (renamed or removed since). Resume "
        "with the agent tree that started the invocation, or start a new turn (the committed "
        "events stay in the session).",
        invocation_id=ctx.invocation_id,
    )


def _step_marker(agent: BaseAgent, ctx: InvocationContext, state: dict[str, Any]) -> Event:
    return Event(
        invocation_id=ctx.invocation_id,
        author=agent.name,
        branch=ctx.branch,
        actions=EventActions(agent_state=state),
    )


def _end_marker(
    agent: BaseAgent, ctx: InvocationContext, event: Event | None, *, top: bool
) -> Event:
    """The agent's last event (its after-callback's, if any) marked ``end_of_agent``."""
    if event is None:
        event = Event(invocation_id=ctx.invocation_id, author=agent.name, branch=ctx.branch)
    event.actions.end_of_agent = True
    if top:
        event.custom_metadata = {**(event.custom_metadata or {}), INVOCATION_KEY: FINISHED}
    return event


def _invocation_end(agent: BaseAgent, ctx: InvocationContext) -> Event:
    """The marker of an invocation that ended early (paused for the user, or stopped)."""
    return Event(
        invocation_id=ctx.invocation_id,
        author=agent.name,
        branch=ctx.branch,
        custom_metadata={INVOCATION_KEY: ENDED},
    )
