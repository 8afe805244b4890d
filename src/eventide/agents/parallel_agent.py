"""``ParallelAgent``: runs its sub-agents concurrently, each on its own branch."""

from __future__ import annotations

from collections.abc import AsyncGenerator

from eventide.agents.base_agent import BaseAgent
from eventide.agents.loop_agent import escalation_reaches
from eventide.agents.shapes import fan_out_shape
from eventide.contexts import InvocationContext
from eventide.events import Event
from eventide.runtime.replay import AgentProgress, ResumeScope, continuation

__all__ = ["ParallelAgent"]


class ParallelAgent(BaseAgent):
    """Runs every sub-agent at the same time: a fan-out ``START -> (a, b, c)`` on the graph
    loop (:mod:`eventide.agents.shapes`), with no join (it ends when every branch has).

    - Each sub-agent runs on branch ``<name>.<sub-agent name>``; inside another fan-out the
      branch path is extended with every agent between the two (``fan.inner.steps.deep.y``).
      A branch's model history sees only its own branch and the shared ancestors' events.
    - Commit-before-resume holds per branch: a branch waits until its own event is committed,
      never for its siblings. Events (and their state writes) are committed in the order they
      reach the Runner.
    - An exception in one branch, or an event with ``actions.escalate``, ends the others:
      they are cancelled at their next await; events they had not yet handed over are
      dropped, never half-written. An escalation that a ``LoopAgent`` inside the branch
      consumed (its ``exit_loop``) ends only that loop, not the fan-out.
    - In a resumable invocation it commits ``agent_state = {}`` before it fans out; resumed,
      each branch continues from its own events (one that ended is skipped).
    """

    def _run_async_impl(self, ctx: InvocationContext) -> AsyncGenerator[Event, None]:
        return self._fan_out_shape(ctx, marked=ctx.resumable)

    def _resume_async_impl(
        self, ctx: InvocationContext, scope: ResumeScope, progress: AgentProgress
    ) -> AsyncGenerator[Event, None]:
        where = continuation(
            self.name,
            [sub_agent.name for sub_agent in self.sub_agents],
            scope,
            progress,
            branch=ctx.branch,
            invocation_id=ctx.invocation_id,
            ends_on=lambda author: escalation_reaches(self, author),
        )
        if where.scope is None:  # it had not fanned out yet
            return self._run_async_impl(ctx)
        if where.escalated:  # a committed escalation ended the fan-out
            return _nothing()
        # Every branch's copy of the context inherits the scope; each resumes from its own
        # events (a branch that ended is skipped, one that had not started runs).
        ctx.resume = where.scope
        return self._fan_out_shape(ctx, marked=False)

    def _fan_out_shape(
        self, ctx: InvocationContext, *, marked: bool
    ) -> AsyncGenerator[Event, None]:
        prefix = self._branch_prefix(ctx.branch)
        branches = [(sub_agent, f"{prefix}.{sub_agent.name}") for sub_agent in self.sub_agents]
        return fan_out_shape(self.name, branches, ctx, marked=marked, exits=self._exits)

    def _exits(self, event: Event) -> bool:
        """Whether a committed event ends the fan-out (the escalating branch included)."""
        return bool(event.actions.escalate) and escalation_reaches(self, event.author)

    def _branch_prefix(self, branch: str | None) -> str:
        """The branch path down to this agent.

        Outside any fan-out it is this agent's name. Inside one (``branch`` set), it extends
        ``branch`` with the names of the agents between the branch's last agent and this one,
        so every agent of the path appears once: ``fan.inner.steps.deep`` for a parallel
        ``deep`` inside a sequential ``steps`` inside the branch ``fan.inner``.
        """
        if not branch:
            return self.name
        last = branch.rsplit(".", 1)[-1]
        path: list[str] = []
        agent: BaseAgent | None = self
        while agent is not None and agent.name != last:
            path.append(agent.name)
            agent = agent.parent_agent
        if agent is None:
            # The branch was not made by an ancestor (a custom agent set it): extend it as is.
            return f"{branch}.{self.name}"
        return ".".join([branch, *reversed(path)])


async def _nothing() -> AsyncGenerator[Event, None]:
    return
    yield  # pragma: no cover - makes this an async generator
