"""Several tool calls of one model response, each checkpointed as soon as it finishes.

In a resumable invocation, a model response that asks for several tools runs them
concurrently as usual, but each call that finishes is recorded at once: the generator yields
a record event (no content; the call's state and artifact deltas as its actions, the rest in
``custom_metadata["eventide_call"]``, see :mod:`eventide.runtime.markers`) and the Runner commits
it while the siblings go on running. When every call has answered, the one response event
(the same parts, in call order, as without records) follows, its actions without the deltas
the records already committed. After a crash, resuming runs only the calls without a record:
each tool runs once per call id except the one that was running.

Why not one event per call: the model must see one response event per model response (as
google-adk builds it), and the conversation the model sees must not depend on whether the
invocation was interrupted.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator, Iterable
from typing import Any, cast

from eventide import types
from eventide.contexts import InvocationContext
from eventide.events import Event, EventActions, ToolConfirmation
from eventide.flows.resolved_agent import ResolvedAgent
from eventide.flows.tool_dispatch import Outcome, response_event, run_one_call
from eventide.runtime.markers import CALL_KEY
from eventide.tools.base_tool import BaseTool

__all__ = ["ToolResponses", "recorded_outcomes", "run_calls_recorded"]

_DELTAS = {"state_delta", "artifact_delta"}


class ToolResponses:
    """Where :func:`run_calls_recorded` leaves the response event once all calls answered."""

    __slots__ = ("event",)

    def __init__(self) -> None:
        self.event: Event | None = None


async def run_calls_recorded(
    agent: ResolvedAgent,
    ctx: InvocationContext,
    calls: list[types.FunctionCall],
    tools: dict[str, BaseTool],
    responses: ToolResponses,
    *,
    recorded: dict[str, Outcome] | None = None,
    confirmations: dict[str, ToolConfirmation] | None = None,
) -> AsyncGenerator[Event, None]:
    """Run ``calls`` concurrently, yielding each one's record as it finishes; then set
    ``responses.event``.

    ``recorded``: the outcomes of calls recorded before (a resumed invocation); they are not
    run again. A tool that raises cancels its siblings and the error propagates, as in
    :func:`~eventide.flows.tool_dispatch.run_function_calls`; the records of the siblings
    that finished before stay committed.
    """
    done: dict[str, Outcome] = dict(recorded or {})
    confirmations = confirmations or {}
    order = {id(call): index for index, call in enumerate(calls)}
    running: dict[asyncio.Task[Outcome], types.FunctionCall] = {
        asyncio.ensure_future(run_one_call(agent, ctx, call, tools, confirmations)): call
        for call in calls
        if (call.id or "") not in done
    }
    try:
        while running:
            finished, _ = await asyncio.wait(running, return_when=asyncio.FIRST_COMPLETED)
            # Several finished together: record them in call order (a stable log).
            for task in sorted(finished, key=lambda t: order[id(running[t])]):
                call = running.pop(task)
                error = task.exception()
                if error is not None:
                    raise error
                part, actions = task.result()
                done[call.id or ""] = (part, _without_deltas(actions))
                yield _record(agent, ctx, call, part, actions)
    finally:
        await _cancel(running)
    outcomes = [done[call.id or ""] for call in calls]
    responses.event = response_event(agent, ctx, calls, outcomes)


def recorded_outcomes(events: Iterable[Event], ids: set[str]) -> dict[str, Outcome]:
    """The outcomes the records among ``events`` hold for the calls ``ids``."""
    found: dict[str, Outcome] = {}
    for event in events:
        metadata = event.custom_metadata
        value: object = metadata.get(CALL_KEY) if metadata else None
        if not isinstance(value, dict):
            continue
        record = cast("dict[str, Any]", value)
        call_id = record.get("id")
        if not isinstance(call_id, str) or call_id not in ids:
            continue
        response = record.get("response")
        part = (
            types.Part(
                function_response=types.FunctionResponse(
                    id=call_id, name=record.get("name"), response=response
                )
            )
            if response is not None
            else None
        )
        found[call_id] = (part, EventActions.model_validate(record.get("actions") or {}))
    return found


def _record(
    agent: ResolvedAgent,
    ctx: InvocationContext,
    call: types.FunctionCall,
    part: types.Part | None,
    actions: EventActions,
) -> Event:
    response = part.function_response if part is not None else None
    record: dict[str, Any] = {
        "id": call.id,
        "name": call.name,
        "response": response.response if response is not None else None,
    }
    rest = actions.model_dump(mode="json", exclude=_DELTAS, exclude_defaults=True)
    if rest:
        record["actions"] = rest
    return Event(
        invocation_id=ctx.invocation_id,
        author=agent.name,
        branch=ctx.branch,
        actions=EventActions(
            state_delta=dict(actions.state_delta), artifact_delta=dict(actions.artifact_delta)
        ),
        custom_metadata={CALL_KEY: record},
    )


def _without_deltas(actions: EventActions) -> EventActions:
    if not actions.state_delta and not actions.artifact_delta:
        return actions
    return actions.model_copy(update={"state_delta": {}, "artifact_delta": {}})


async def _cancel(running: dict[asyncio.Task[Outcome], types.FunctionCall]) -> None:
    """Cancel the calls still running (a sibling failed, or the invocation was closed)."""
    if not running:
        return
    for task in running:
        task.cancel()
    await asyncio.gather(*running, return_exceptions=True)
