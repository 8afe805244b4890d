"""``LoopAgent``: repeats its sub-agents until one escalates or a limit is reached."""

from __future__ import annotations

from collections.abc import AsyncGenerator
from contextlib import aclosing

from pydantic import field_validator

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
    """

    max_iterations: int | None = DEFAULT_MAX_ITERATIONS

    @field_validator("max_iterations")
    @classmethod
    def _check_limit(cls, value: int | None) -> int | None:
        if value is not None and value < 1:
            raise UsageError(
                f"LoopAgent max_iterations must be at least 1 (got {value}); pass None to "
                "loop until a sub-agent escalates."
            )
        return value

    async def _run_async_impl(self, ctx: InvocationContext) -> AsyncGenerator[Event, None]:
        iteration = 0
        while self.max_iterations is None or iteration < self.max_iterations:
            iteration += 1
            for sub_agent in self.sub_agents:
                async with aclosing(sub_agent.run_async(ctx)) as events:
                    async for event in events:
                        yield event
                        if event.actions.escalate:
                            return
                if ctx.end_invocation:
                    return
