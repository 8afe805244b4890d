"""``SequentialAgent``: runs its sub-agents one after another in one invocation."""

from __future__ import annotations

from collections.abc import AsyncGenerator

from eventide.agents.base_agent import BaseAgent
from eventide.agents.shapes import chain_shape
from eventide.contexts import InvocationContext
from eventide.events import Event
from eventide.runtime.markers import SequentialAgentState
from eventide.runtime.replay import (
    AgentProgress,
    Continuation,
    ResumeScope,
    continuation,
)

__all__ = ["SequentialAgent", "SequentialAgentState"]

_FROM_START = Continuation()


class SequentialAgent(BaseAgent):
    """Runs each sub-agent in order. A later step sees the committed state of earlier ones
    (e.g. an ``output_key`` written by step one is readable by step two's instruction).
    It is a chain ``START -> a -> b -> c`` on the graph loop (:mod:`eventide.agents.shapes`).

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

    def _steps(self, ctx: InvocationContext, where: Continuation) -> AsyncGenerator[Event, None]:
        late = ctx.resumable and self._has_after_callback(ctx)
        return chain_shape(self.name, self.sub_agents, ctx, where, ends_late=late)
