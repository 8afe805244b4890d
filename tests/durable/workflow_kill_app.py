"""The graph workflow the DBOS kill-anywhere test SIGKILLs at random moments.

A turn is two messages: ``turn-N`` runs the workflow up to ``ask``, which pauses it for the
user (``RequestInput``); the user's answer continues it to the end. The graph::

    START -> prep -> (left, right) -> join -> writer -> ask -> after

- ``prep``, ``left``, ``right`` and ``after`` are function nodes whose side effect is a line
  in the LEDGER file (outside the process, fsynced): ``start <invocation id>:<node path>``
  and, once the effect is done, ``end <same id>``. ``left`` and ``right`` run concurrently
  (a fan-out) and sleep a little inside their effect, so a kill can land in either;
- ``join`` gathers the fan-out;
- ``writer`` is an ``LlmAgent`` with a scripted model: it calls ``stamp`` (a tool whose side
  effect is logged as ``start <call id>`` / ``end <call id>``), then answers;
- ``ask`` asks the user to approve; ``after`` records the answer in the state.

Every node writes the state key it owns, so the final state says which ran, and how often.
"""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import Any

from eventide import App, LlmAgent, ResumabilityConfig, ToolContext, types
from eventide.events import Event
from eventide.models.llm_request import LlmRequest
from eventide.models.llm_response import LlmResponse
from eventide.node_context import Context
from eventide.testing import FunctionModel, text_response, tool_call_response
from eventide.workflow import JoinNode, RequestInput, Workflow
from tests.durable.durable_app import normalized

APP_NAME = "wf_kill"
# How long one side effect takes: most of a turn's time is spent inside them.
EFFECT_SECONDS = 0.05


def build_app(ledger: Path) -> App:
    """The workflow above, recording its side effects in ``ledger``."""

    def log(line: str) -> None:
        with ledger.open("a") as file:
            file.write(line + "\n")
            file.flush()
            os.fsync(file.fileno())

    async def effect(key: str, ctx: Context) -> None:
        log(f"start {key}")
        await asyncio.sleep(EFFECT_SECONDS)
        log(f"end {key}")

    def node_key(ctx: Context) -> str:
        return f"{ctx.invocation_id}:{ctx.node_path}"

    async def prep(node_input: types.Content, ctx: Context) -> str:
        text = "".join(part.text or "" for part in node_input.parts or [])
        await effect(node_key(ctx), ctx)
        ctx.state[f"prep_{text}"] = True
        return text

    async def left(node_input: str, ctx: Context) -> str:
        await effect(node_key(ctx), ctx)
        ctx.state[f"left_{node_input}"] = True
        return f"L:{node_input}"

    async def right(node_input: str, ctx: Context) -> str:
        await effect(node_key(ctx), ctx)
        ctx.state[f"right_{node_input}"] = True
        return f"R:{node_input}"

    async def stamp(text: str, tool_context: ToolContext) -> dict[str, Any]:
        """Stamp a text."""
        call_id = tool_context.function_call_id
        assert call_id is not None
        log(f"start {call_id}")
        await asyncio.sleep(EFFECT_SECONDS)
        stamps = int(tool_context.state.get("stamps", 0)) + 1
        tool_context.state["stamps"] = stamps
        log(f"end {call_id}")
        return {"stamped": text, "n": stamps}

    def write(request: LlmRequest) -> LlmResponse:
        last = request.contents[-1].parts or [] if request.contents else []
        for part in last:
            if part.function_response is not None:
                return text_response(f"written {(part.function_response.response or {})['n']}")
        text = "".join(part.text or "" for part in last)
        return tool_call_response(("stamp", {"text": text}))

    writer = LlmAgent(name="writer", model=FunctionModel(function=write), tools=[stamp])

    async def ask(node_input: str) -> Any:
        yield RequestInput(message="Approve?", payload={"draft": node_input})

    async def after(node_input: Any, ctx: Context) -> dict[str, Any]:
        await effect(node_key(ctx), ctx)
        turns = int(ctx.state.get("approved", 0)) + 1
        ctx.state["approved"] = turns
        return {"final": node_input, "approved": turns}

    workflow = Workflow(
        name="wf",
        edges=[("START", prep, (left, right), JoinNode(name="join"), writer, ask, after)],
    )
    return App(
        name=APP_NAME,
        root_agent=workflow,
        resumability_config=ResumabilityConfig(is_resumable=True),
    )


def pending_request(events: list[Event]) -> str | None:
    """The id of the request the workflow waits on (the latest unanswered one), or None."""
    answered = {r.id for e in events for r in e.get_function_responses() if r.id}
    for event in reversed(events):
        for call in event.get_function_calls():
            if call.id in (event.long_running_tool_ids or ()) and call.id not in answered:
                return call.id
    return None


def answer(request_id: str, text: str) -> types.Content:
    """The user's answer to request ``request_id``."""
    response = types.FunctionResponse(
        id=request_id, name="adk_request_input", response={"result": text}
    )
    return types.Content(role="user", parts=[types.Part(function_response=response)])


def normalized_log(events: list[Event]) -> dict[str | None, list[tuple[Any, ...]]]:
    """``normalized`` without the ids a run generates (a request's ``interruptId``)."""
    for event in events:
        for call in event.get_function_calls():
            if call.args and "interruptId" in call.args:
                call.args = {**call.args, "interruptId": "<id>"}
    return normalized(events)


def node_outputs(events: list[Event]) -> list[dict[str, Any]]:
    """Per invocation (in order), its node outputs by node path."""
    per: dict[str, dict[str, Any]] = {}
    for event in events:
        if event.invocation_id:
            outputs = per.setdefault(event.invocation_id, {})
            if event.output is not None:
                outputs[event.node_info.path] = event.output
    return list(per.values())
