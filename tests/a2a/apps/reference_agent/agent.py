"""An agent that behaves as the A2A TCK's reference agent does, for running the TCK.

The TCK's reference server (the Java SDK's) keeps every task working for a while, so that
its tests can list, cancel, continue and subscribe to a live task. This agent answers at once
("Working on: ...", an artifact), then keeps its invocation running for
``EVENTIDE_TCK_WORK_SECONDS`` seconds (default 10; a message whose id starts with
``test-resubscribe-message-id`` or ``test-subscribe-message-id`` at least 6), then finishes
("Done."). A cancel stops it at once. Served by ``eventide api-server --a2a
--a2a-send-wait 0.2``, a blocking ``message/send`` answers while the task is still working.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import AsyncGenerator

from eventide import BaseAgent, Event, InvocationContext, types

_SLOW_PREFIXES = ("test-resubscribe-message-id", "test-subscribe-message-id")


def _work_seconds(message_id: str) -> float:
    seconds = float(os.environ.get("EVENTIDE_TCK_WORK_SECONDS", "10"))
    if message_id.startswith(_SLOW_PREFIXES):
        return max(seconds, 6.0)
    return seconds


class ReferenceAgent(BaseAgent):
    """Answers, stays working for a while, then finishes (see the module docstring)."""

    async def _run_async_impl(self, ctx: InvocationContext) -> AsyncGenerator[Event, None]:
        content = ctx.user_content
        text = " ".join(p.text for p in (content.parts or []) if p.text) if content else ""
        yield Event(
            author=self.name,
            content=types.Content(role="model", parts=[types.Part(text=f"Working on: {text}")]),
        )
        message_id = str(ctx.run_config.custom_metadata.get("eventide_a2a_message", ""))
        await asyncio.sleep(_work_seconds(message_id))
        yield Event(
            author=self.name, content=types.Content(role="model", parts=[types.Part(text="Done.")])
        )


root_agent = ReferenceAgent(
    name="reference_agent",
    description="Answers each message, then stays working for a while before it finishes.",
)
