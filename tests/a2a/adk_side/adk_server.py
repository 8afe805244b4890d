"""Run by google-adk's Python: an agent served by google-adk's ``to_a2a`` on a given port.

Usage: adk_server.py PORT
The agent answers without a model: "Bonjour from ADK: <the message>".
"""

from __future__ import annotations

import sys
from collections.abc import AsyncGenerator

import uvicorn
from google.adk.a2a.utils.agent_to_a2a import to_a2a
from google.adk.agents import BaseAgent
from google.adk.agents.invocation_context import InvocationContext
from google.adk.events import Event
from google.genai import types


class Greeter(BaseAgent):
    async def _run_async_impl(self, ctx: InvocationContext) -> AsyncGenerator[Event, None]:
        said = ""
        if ctx.user_content and ctx.user_content.parts:
            said = " ".join(p.text for p in ctx.user_content.parts if p.text)
        text = f"Bonjour from ADK: {said}"
        yield Event(
            author=self.name,
            invocation_id=ctx.invocation_id,
            content=types.Content(role="model", parts=[types.Part(text=text)]),
        )


if __name__ == "__main__":
    port = int(sys.argv[1])
    app = to_a2a(Greeter(name="greeter", description="Greets in French."), port=port)
    uvicorn.run(app, host="127.0.0.1", port=port, log_level="warning")
