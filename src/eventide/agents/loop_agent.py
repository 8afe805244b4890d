"""``LoopAgent``: repeats its sub-agents until one escalates or a limit is reached."""

from __future__ import annotations

from collections.abc import AsyncGenerator
from contextlib import aclosing
from typing import Any

from eventide.agents.base_agent import BaseAgent
from eventide.contexts import InvocationContext
from eventide.errors import UsageError
from eventide.events import Event

__all__ = ["LoopAgent"]

DEFAULT_MAX_ITERATIONS = 10


class LoopAgent(BaseAgent):
    """Runs its sub-agents in order, again and again.

    The loop ends as soon as an event with ``actions.escalate`` is committed (the
    ``exit_loop`` tool, or ``EventActions(escalate=True)`` from a custom agent), or after
    ``max_iterations`` rounds. The default is 10 rounds; pass ``max_iterations=None`` to
    loop until escalation, on purpose.

    An escalation ends the innermost loop around the agent that escalated: when a loop
    contains another ``LoopAgent``, an ``exit_loop`` inside the inner one ends only the inner
    loop, and the outer loop goes on with its next sub-agent. An escalation in a branch of a
    ``ParallelAgent`` ends the fan-out and the loop around it.
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

    async def _run_async_impl(self, ctx: InvocationContext) -> AsyncGenerator[Event, None]:
        if not self.sub_agents:
            # Nothing could ever escalate: an unbounded loop would spin forever.
            return
        iteration = 0
        while self.max_iterations is None or iteration < self.max_iterations:
            iteration += 1
            for sub_agent in self.sub_agents:
                async with aclosing(sub_agent.run_async(ctx)) as events:
                    async for event in events:
                        yield event
                        if event.actions.escalate and self._ends_here(event.author):
                            return
                if ctx.end_invocation:
                    return

    def _ends_here(self, author: str) -> bool:
        """Whether an escalation by ``author`` ends this loop: no other ``LoopAgent`` stands
        between this loop and the author (that inner loop has already ended on it)."""
        agent = self.find_sub_agent(author)
        if agent is None:
            # Not one of ours (e.g. an agent reached by transfer): the escalation is ours.
            return True
        while agent is not None and agent is not self:
            if isinstance(agent, LoopAgent):
                return False
            agent = agent.parent_agent
        return True
