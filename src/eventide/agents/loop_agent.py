"""``LoopAgent``: repeats its sub-agents until one escalates or a limit is reached."""

from __future__ import annotations

from collections.abc import AsyncGenerator
from contextlib import aclosing
from typing import Any

from eventide.agents.base_agent import BaseAgent
from eventide.contexts import InvocationContext
from eventide.errors import UsageError
from eventide.events import Event

__all__ = ["LoopAgent", "escalation_reaches"]

DEFAULT_MAX_ITERATIONS = 10


class LoopAgent(BaseAgent):
    """Runs its sub-agents in order, again and again.

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
                escalated = False
                async with aclosing(sub_agent.run_async(ctx)) as events:
                    async for event in events:
                        yield event
                        if event.actions.escalate and escalation_reaches(self, event.author):
                            escalated = True
                if escalated or ctx.end_invocation:
                    return


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
