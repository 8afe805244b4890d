"""Small hand-written agents the server tests run (no model needed).

Importable by the server subprocesses too (``tests.server.fixture_agents``).
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import AsyncGenerator
from pathlib import Path

from eventide import BaseAgent, CallbackContext, Event, EventActions, InvocationContext, types
from eventide.apps import App
from eventide.run_config import StreamingMode


def _user_text(ctx: InvocationContext) -> str:
    content = ctx.user_content
    return (content.text if content is not None else None) or ""


class EchoAgent(BaseAgent):
    """Answers 'echo: <text>' and counts turns in state (``turns``)."""

    async def _run_async_impl(self, ctx: InvocationContext) -> AsyncGenerator[Event, None]:
        turns = int(ctx.session.state.get("turns", 0)) + 1
        yield Event(
            author=self.name,
            invocation_id=ctx.invocation_id,
            content=types.Content(
                role="model", parts=[types.Part(text=f"echo: {_user_text(ctx)}")]
            ),
            actions=EventActions(state_delta={"turns": turns}),
        )


class ChunkingAgent(BaseAgent):
    """Streams its answer in three partial chunks when asked to stream, then the whole."""

    async def _run_async_impl(self, ctx: InvocationContext) -> AsyncGenerator[Event, None]:
        words = ["Hello", " from", " the stream"]
        if ctx.run_config.streaming_mode == StreamingMode.SSE:
            for word in words:
                yield Event(
                    author=self.name,
                    invocation_id=ctx.invocation_id,
                    partial=True,
                    content=types.Content(role="model", parts=[types.Part(text=word)]),
                )
        yield Event(
            author=self.name,
            invocation_id=ctx.invocation_id,
            content=types.Content(role="model", parts=[types.Part(text="".join(words))]),
        )


class ToolShapedAgent(BaseAgent):
    """Yields what an LLM agent's tool turn looks like: a call, a response that saves an
    artifact and sets state, then the answer."""

    async def _run_async_impl(self, ctx: InvocationContext) -> AsyncGenerator[Event, None]:
        call = types.FunctionCall(id="call-1", name="make_report", args={"topic": "q1"})
        yield Event(
            author=self.name,
            invocation_id=ctx.invocation_id,
            content=types.Content(role="model", parts=[types.Part(function_call=call)]),
        )
        callback_context = CallbackContext(ctx)
        await callback_context.save_artifact("report.txt", types.Part(text="first draft"))
        await callback_context.save_artifact("report.txt", types.Part(text="final report"))
        callback_context.state["report_ready"] = True
        response = types.FunctionResponse(id="call-1", name="make_report", response={"ok": True})
        yield Event(
            author=self.name,
            invocation_id=ctx.invocation_id,
            content=types.Content(role="user", parts=[types.Part(function_response=response)]),
            actions=callback_context.actions,
        )
        yield Event(
            author=self.name,
            invocation_id=ctx.invocation_id,
            content=types.Content(role="model", parts=[types.Part(text="Report saved.")]),
        )


class FailingAgent(BaseAgent):
    """Commits one event, then raises."""

    async def _run_async_impl(self, ctx: InvocationContext) -> AsyncGenerator[Event, None]:
        yield Event(
            author=self.name,
            invocation_id=ctx.invocation_id,
            content=types.Content(role="model", parts=[types.Part(text="working on it")]),
        )
        raise RuntimeError("the warehouse API is down")


class GatedAgent(BaseAgent):
    """Commits 'step 1', waits until the file named by EVENTIDE_TEST_GATE exists, then
    commits 'step 2' and 'done'. Lets a test hold a turn open while it stops the server."""

    async def _run_async_impl(self, ctx: InvocationContext) -> AsyncGenerator[Event, None]:
        gate = Path(os.environ["EVENTIDE_TEST_GATE"])
        for text in ("step 1", "step 2", "done"):
            yield Event(
                author=self.name,
                invocation_id=ctx.invocation_id,
                content=types.Content(role="model", parts=[types.Part(text=text)]),
                actions=EventActions(state_delta={"last_step": text}),
            )
            if text == "step 1":
                # The test runs in another process, so the gate is a file, polled.
                while not await asyncio.to_thread(gate.exists):  # noqa: ASYNC110
                    await asyncio.sleep(0.02)


def fixture_apps() -> dict[str, App]:
    """Every fixture agent as an app, named after what it does."""
    return {
        "echo": App(name="echo", root_agent=EchoAgent(name="echo_agent")),
        "chunks": App(name="chunks", root_agent=ChunkingAgent(name="chunk_agent")),
        "tools": App(name="tools", root_agent=ToolShapedAgent(name="tool_agent")),
        "failing": App(name="failing", root_agent=FailingAgent(name="failing_agent")),
        "gated": App(name="gated", root_agent=GatedAgent(name="gated_agent")),
    }
