"""``SequentialAgent``: runs its sub-agents one after another in one invocation."""

from __future__ import annotations

from collections.abc import AsyncGenerator
from contextlib import aclosing

from eventide.agents.base_agent import BaseAgent
from eventide.contexts import InvocationContext
from eventide.events import Event
from eventide.runtime.replay import (
    AgentProgress,
    Continuation,
    ResumeScope,
    continuation,
    step_marker,
)

__all__ = ["SequentialAgent"]

_FROM_START = Continuation()


class SequentialAgent(BaseAgent):
    """Runs each sub-agent in order. A later step sees the committed state of earlier ones
    (e.g. an ``output_key`` written by step one is readable by step two's instruction).

    In a resumable invocation it commits ``agent_state = {"current_sub_agent": name}``
    before each step; resumed, it skips the steps before the one in flight (their outputs
    are in the log), continues that one from its own events, and runs the rest.
    """

    def _run_async_impl(self, ctx: InvocationContext) -> AsyncGenerator[Event, None]:
        return self._steps(ctx, _FROM_START)

    def _resume_async_impl(
        self, ctx: InvocationContext, scope: ResumeScope, progress: AgentProgress
    ) -> AsyncGenerator[Event, None]:
        names = [sub_agent.name for sub_agent in self.sub_agents]
        where = continuation(
            self.name, names, scope, progress, branch=ctx.branch, invocation_id=ctx.invocation_id
        )
        return self._steps(ctx, where)

    async def _steps(
        self, ctx: InvocationContext, where: Continuation
    ) -> AsyncGenerator[Event, None]:
        for index in range(where.start, len(self.sub_agents)):
            sub_agent = self.sub_agents[index]
            if where.scope is not None and index == where.start:
                ctx.resume = where.scope  # the step in flight continues from its events
            elif ctx.resumable:
                yield step_marker(self.name, ctx, {"current_sub_agent": sub_agent.name})
            async with aclosing(sub_agent.run_async(ctx)) as events:
                async for event in events:
                    yield event
            ctx.resume = None  # the step took its copy of the scope; later steps run fresh
            if ctx.end_invocation:
                return
