"""``BaseAgent.run_async`` in a resumable invocation: the agent's run, with its markers,
or its continuation from the log.

The agent runs as usual (callbacks, its own logic) and commits the markers
:mod:`eventide.runtime.markers` describes. When its context carries a
:class:`~eventide.runtime.replay.ResumeScope`, it continues from its last committed event
instead of starting again:

- an agent that ended is skipped; one that had not committed anything runs from its start;
- any other continues through ``BaseAgent._continuation``: a workflow agent the child in
  flight, an ``LlmAgent`` its model/tool loop, an agent whose position is its own runs
  again only if it had committed nothing (see ``BaseAgent._resume_async_impl``);
- an agent that had not started in the scope but has an entry in ``ctx.agent_states``
  (google-adk's checkpoint API: set by hand, or by ``populate_invocation_agent_states``)
  continues from that state as from its latest marker.

The end marker has google-adk's shape: an agent whose position the log holds (a workflow
agent, an ``LlmAgent``; ``BaseAgent._marks_its_end``) commits ``end_of_agent`` once, on a
content-less event after its last (an ``LlmAgent`` that transfers commits it before the
target runs); a custom agent commits none where its parent's next marker follows at once
(a step of a sequence). A fan-out's branch (``alone``) commits it whatever its class: its
parent ends only after every branch has, so nothing else in the log would say the branch
finished, and resuming would have to run it again or refuse (google-adk runs it again).
The agent the Runner started always ends with the invocation's ``finished`` marker.

This module reads the agent through :class:`ResumableAgent` (the members ``BaseAgent``
has), so it needs nothing from ``base_agent`` and ``base_agent`` can import it.
"""

# This module runs BaseAgent's steps (_before_agent, _continuation, _after_agent) from
# outside the class: it is the resumable half of BaseAgent.run_async.
# pyright: reportPrivateUsage=false

from __future__ import annotations

from collections.abc import AsyncGenerator
from contextlib import aclosing
from typing import Any, Protocol

from eventide.contexts import InvocationContext
from eventide.events import Event
from eventide.plugins.base_plugin import BasePlugin
from eventide.runtime.replay import AgentProgress, ResumeScope, end_marker, invocation_end

__all__ = ["ResumableAgent", "run_resumably"]


class ResumableAgent(Protocol):
    """What :func:`run_resumably` reads of an agent (``BaseAgent`` has all of it)."""

    name: str
    before_agent_callback: Any
    after_agent_callback: Any

    async def _before_agent(self, ctx: InvocationContext) -> tuple[Event | None, bool]: ...

    async def _after_agent(self, ctx: InvocationContext) -> Event | None: ...

    def _run_async_impl(self, ctx: InvocationContext) -> AsyncGenerator[Event, None]: ...

    def _continuation(
        self, ctx: InvocationContext, scope: ResumeScope, progress: AgentProgress
    ) -> AsyncGenerator[Event, None]: ...

    def _marks_its_end(self) -> bool: ...

    def _has_after_callback(self, ctx: InvocationContext) -> bool: ...


async def run_resumably(
    agent: ResumableAgent, ctx: InvocationContext, *, top: bool, alone: bool = False
) -> AsyncGenerator[Event, None]:
    """Run ``agent`` (its own context ``ctx``) recording markers, or continue it from
    ``ctx.resume``. ``top``: the agent is the one the Runner started for the turn.
    ``alone``: no marker of its parent follows its end (a fan-out's branch), so it commits
    its own end marker even when its position is not in the log."""
    scope = ctx.resume
    ctx.resume = None  # children get their own scope, explicitly
    progress = scope.progress(agent.name, ctx.branch) if scope is not None else None
    if progress is not None and progress.ended:
        return
    if (progress is None or not progress.started) and ctx.agent_states:
        scope, progress = _restored(agent.name, ctx, scope, progress)
    plugins = ctx.plugin_manager
    has_callbacks = agent.before_agent_callback is not None or plugins.overrides(
        BasePlugin.before_agent_callback
    )
    if progress is None or not progress.started:
        if has_callbacks:
            event, skip = await agent._before_agent(ctx)
            if skip:
                assert event is not None
                end = alone or agent._marks_its_end()
                yield end_marker(agent.name, ctx, event, top=top, end=end)
                return
            if event is not None:
                yield event
            if ctx.end_invocation:
                if top:
                    yield invocation_end(agent.name, ctx)
                return
        body = agent._run_async_impl(ctx)
    else:
        assert scope is not None
        body = agent._continuation(ctx, scope, progress)
    # An agent may commit its end marker itself before its body ends (an LlmAgent that
    # transferred, as google-adk's does, before the target runs), in this run or before it.
    ended = progress is not None and progress.marked_transfer
    name, branch = agent.name, ctx.branch
    async with aclosing(body) as events:
        async for event in events:
            if event.actions.end_of_agent and event.author == name and event.branch == branch:
                ended = True
            yield event
    if ctx.end_invocation:
        if top:
            yield invocation_end(name, ctx)
        return
    after = await agent._after_agent(ctx) if agent._has_after_callback(ctx) else None
    end = not ended and (alone or agent._marks_its_end())
    if after is not None or end or top:
        yield end_marker(name, ctx, after, top=top, end=end)


def _restored(
    name: str, ctx: InvocationContext, scope: ResumeScope | None, progress: AgentProgress | None
) -> tuple[ResumeScope | None, AgentProgress | None]:
    """The scope and progress of an agent whose state was put in ``ctx.agent_states`` (by
    hand, or by ``populate_invocation_agent_states``): it continues from that state as from
    its latest marker, after everything committed so far. The entry is used once."""
    state = ctx.agent_states.pop(name, None)
    if state is None:
        return scope, progress
    scope = scope if scope is not None else ResumeScope.of([])
    position = len(scope.events)
    return scope.at(position), AgentProgress(state=state, state_position=position)
