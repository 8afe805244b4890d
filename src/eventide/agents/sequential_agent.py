"""``SequentialAgent``: runs its sub-agents one after another in one invocation."""

from __future__ import annotations

from collections.abc import AsyncGenerator
from contextlib import aclosing

from eventide.agents.base_agent import BaseAgent
from eventide.contexts import InvocationContext
from eventide.events import Event

__all__ = ["SequentialAgent"]


class SequentialAgent(BaseAgent):
    """Runs each sub-agent in order. A later step sees the committed state of earlier ones
    (e.g. an ``output_key`` written by step one is readable by step two's instruction)."""

    async def _run_async_impl(self, ctx: InvocationContext) -> AsyncGenerator[Event, None]:
        for sub_agent in self.sub_agents:
            async with aclosing(sub_agent.run_async(ctx)) as events:
                async for event in events:
                    yield event
            if ctx.end_invocation:
                return
