"""``LoopAgent``: repeats its sub-agents until one escalates or a limit is reached."""

from __future__ import annotations

from collections.abc import AsyncGenerator
from typing import Any

from eventide.agents.base_agent import BaseAgent
from eventide.agents.shapes import chain_shape
from eventide.contexts import InvocationContext
from eventide.errors import UsageError
from eventide.events import Event
from eventide.runtime.markers import LoopAgentState
from eventide.runtime.replay import (
    AgentProgress,
    Continuation,
    ResumeScope,
    continuation,
)

__all__ = ["LoopAgent", "LoopAgentState", "escalation_reaches"]

DEFAULT_MAX_ITERATIONS = 10
_FROM_START = Continuation()


class LoopAgent(BaseAgent):
    """Runs its sub-agents in order, again and again: a chain with a route back from its
    last step to its first, on the graph loop (:mod:`eventide.agents.shapes`).

    The loop ends once the sub-agent that committed an event with ``actions.escalate`` (the
    ``exit_loop`` tool, a tool setting ``tool_context.actions.escalate``, or
    ``EventActions(escalate=True)`` from a custom agent) has finished its turn: an
    ``LlmAgent`` still gets the model's answer to the tool's result (and writes its
    ``output_key``), as in google-adk; then no later sub-agent and no further round runs.
    Otherwise it ends after ``max_iterations`` rounds. The default is 10 rounds; pass
    ``max_iterations=None`` to loop until escalation, on purpose.

    An escalation ends the innermost loop around the agent that escalated: when a loop
    contains another ``LoopAgent``, an ``exit_loop`` inside the inner one ends only the inner
    loop, and the outer loop goes on with its next sub-agent. An escalation in a branch of a
    ``ParallelAgent`` (not consumed by a loop inside that branch) ends the fan-out and the
    loop around it.

    In a resumable invocation it commits ``agent_state = {"current_sub_agent": name,
    "times_looped": n}`` before each step; resumed, it continues the step in flight of the
    round in flight (or ends, when an escalation that ends it was committed) and goes on.
    """

    max_iterations: int | None = DEFAULT_MAX_ITERATIONS

    def __init__(self, /, **data: Any) -> None:
        limit = data.get("max_iterations", DEFAULT_MAX_ITERATIONS)
        # Checked before pydantic runs, so the caller gets UsageError itself rather than a
        # ValidationError wrapping it.
        if limit is not None and (not isinstance(limit, int) or limit < 1):
            raise UsageError(
                f"LoopAgent {data.get('name')!r}: max_iterations must be an integer of at "
                f"least 1 (got {limit!r}); pass None to loop until a sub-agent escalates."
            )
        super().__init__(**data)

    def _run_async_impl(self, ctx: InvocationContext) -> AsyncGenerator[Event, None]:
        return self._rounds(ctx, _FROM_START)

    def _resume_async_impl(
        self, ctx: InvocationContext, scope: ResumeScope, progress: AgentProgress
    ) -> AsyncGenerator[Event, None]:
        names = [sub_agent.name for sub_agent in self.sub_agents]
        where = continuation(
            self.name,
            names,
            scope,
            progress,
            branch=ctx.branch,
            invocation_id=ctx.invocation_id,
            ends_on=lambda author: escalation_reaches(self, author),
        )
        return self._rounds(ctx, where)

    def _rounds(self, ctx: InvocationContext, where: Continuation) -> AsyncGenerator[Event, None]:
        # No sub-agents: nothing runs (nothing could ever escalate: an unbounded loop would
        # spin forever).
        return chain_shape(
            self.name,
            self.sub_agents,
            ctx,
            where,
            rounds=self.max_iterations,
            ends_on=lambda author: escalation_reaches(self, author),
            ends_late=ctx.resumable and self._has_after_callback(ctx),
        )


def escalation_reaches(container: BaseAgent, author: str) -> bool:
    """Whether an ``escalate`` event by ``author`` reaches ``container`` (a loop or a
    fan-out around the author): False when a ``LoopAgent`` between the two has already ended
    on it, so an inner loop's ``exit_loop`` does not also end the outer workflow."""
    agent = container.find_sub_agent(author)
    if agent is None:
        # Not below the container (e.g. an agent reached by a transfer from elsewhere in the
        # tree): no inner loop consumed the escalation.
        return True
    while agent is not None and agent is not container:
        if isinstance(agent, LoopAgent):
            return False
        agent = agent.parent_agent
    return True
