"""Running the function calls of a model response, concurrently, with callbacks."""

from __future__ import annotations

import asyncio
from typing import Any

from eventide import types
from eventide._callbacks import first_result
from eventide.contexts import InvocationContext, ToolContext
from eventide.errors import ToolArgumentsError, ToolError
from eventide.events import Event, EventActions, ToolConfirmation
from eventide.flows.resolved_agent import ResolvedAgent
from eventide.plugins.base_plugin import AFTER_TOOL, BEFORE_TOOL, ON_TOOL_ERROR
from eventide.runtime.markers import WAITING_KEY
from eventide.tools.base_tool import BaseTool
from eventide.tools.function_tool import FunctionTool, wrap_result

__all__ = ["Outcome", "response_event", "run_function_calls", "run_one_call"]

# One call's answer: its function response part (None: a long-running tool that returned
# nothing) and the actions its tool and callbacks asked for.
Outcome = tuple[types.Part | None, EventActions]


async def run_function_calls(
    agent: ResolvedAgent,
    ctx: InvocationContext,
    calls: list[types.FunctionCall],
    tools: dict[str, BaseTool],
    *,
    confirmations: dict[str, ToolConfirmation] | None = None,
) -> Event:
    """Run ``calls`` (concurrently when several) and return one event with every response.

    The event is authored by the agent with content role 'user'; its actions merge each
    tool's actions in call order. A long-running tool that returns None (no initial result)
    gets no response part: its result comes later, from the user (in a resumable
    invocation the event lists such calls in ``custom_metadata["eventide_waiting"]``). A
    tool that raises ends the invocation with ``ToolError`` unless an ``on_tool_error``
    callback recovers; an unknown tool or invalid arguments are answered with an error the
    model can read.
    """
    confirmations = confirmations or {}
    if len(calls) == 1:
        outcomes = [await run_one_call(agent, ctx, calls[0], tools, confirmations)]
    else:
        try:
            async with asyncio.TaskGroup() as group:
                tasks = [
                    group.create_task(run_one_call(agent, ctx, call, tools, confirmations))
                    for call in calls
                ]
        except BaseExceptionGroup as failure:
            # One tool failing cancels its siblings; surface the failure itself, not a group.
            real = [e for e in failure.exceptions if not isinstance(e, asyncio.CancelledError)]
            if len(real) == 1:
                raise real[0] from None
            raise
        outcomes = [task.result() for task in tasks]
    return response_event(agent, ctx, calls, outcomes)


def response_event(
    agent: ResolvedAgent,
    ctx: InvocationContext,
    calls: list[types.FunctionCall],
    outcomes: list[Outcome],
) -> Event:
    """The one event answering ``calls`` (in call order) with their ``outcomes``."""
    actions = EventActions()
    parts: list[types.Part] = []
    waiting: list[str] = []
    for call, (part, call_actions) in zip(calls, outcomes, strict=True):
        if part is not None:
            parts.append(part)
        elif call.id:
            waiting.append(call.id)
        actions.merge(call_actions)
    event = Event(
        invocation_id=ctx.invocation_id,
        author=agent.name,
        branch=ctx.branch,
        content=types.Content(role="user", parts=parts),
        actions=actions,
    )
    if waiting and ctx.resumable:
        # The log must say these calls ran: resuming would run them again otherwise.
        event.custom_metadata = {WAITING_KEY: waiting}
    return event


async def run_one_call(
    agent: ResolvedAgent,
    ctx: InvocationContext,
    call: types.FunctionCall,
    tools: dict[str, BaseTool],
    confirmations: dict[str, ToolConfirmation],
) -> Outcome:
    """Run one call (callbacks included); its outcome."""
    confirmation = confirmations.get(call.id or "")
    tool_context = ToolContext(ctx, function_call_id=call.id, tool_confirmation=confirmation)
    result = await _call_tool(agent, call, tools, tool_context, confirmation)
    if result is None:
        return None, tool_context.actions
    part = types.Part(
        function_response=types.FunctionResponse(id=call.id, name=call.name, response=result)
    )
    return part, tool_context.actions


async def _call_tool(
    agent: ResolvedAgent,
    call: types.FunctionCall,
    tools: dict[str, BaseTool],
    tool_context: ToolContext,
    confirmation: ToolConfirmation | None,
) -> dict[str, Any] | None:
    """The call's response, or None for a long-running tool without an initial result."""
    name = call.name or ""
    tool = tools.get(name)
    args = dict(call.args or {})
    if tool is None:
        message = (
            f"There is no tool named {name!r}. Available tools: "
            f"{', '.join(sorted(tools)) or '(none)'}. Call one of those, or answer directly."
        )
        on_error = agent.hooks[ON_TOOL_ERROR]
        if on_error:
            # As in google-adk: the error callbacks may answer a call of a tool the agent does
            # not have (a hallucinated name), given a stand-in tool of that name.
            stand_in = BaseTool(name=name, description="")
            recovered = await first_result(
                on_error, stand_in, args, tool_context, ValueError(message)
            )
            if recovered is not None:
                return wrap_result(recovered)
        return {"error": message}
    if isinstance(tool, FunctionTool) and tool.require_confirmation is not False:
        if confirmation is None:
            try:
                needed = await tool.needs_confirmation(tool.validate_args(args))
            except ToolArgumentsError as exc:
                return {"error": str(exc)}
            if needed:
                tool_context.request_confirmation(
                    hint=f"Approve or decline the call of tool {name!r} with {args}."
                )
                return {"error": "This tool call needs the user's confirmation; waiting for it."}
        elif not confirmation.confirmed:
            return {"error": "The user declined this tool call; it was not run."}
    # A callback may return any value: one that is not a dict is wrapped as
    # {"result": value}, as a tool's own result is (google-adk does the same).
    hooks = agent.hooks
    before = hooks[BEFORE_TOOL]
    result = await first_result(before, tool, args, tool_context) if before else None
    if result is not None:
        result = wrap_result(result)
    else:
        try:
            raw = await tool.run_async(args=args, tool_context=tool_context)
            if raw is None and tool.is_long_running:
                return None
            result = wrap_result(raw)
        except ToolArgumentsError as exc:
            return {"error": str(exc)}
        except Exception as exc:
            recovered = await first_result(hooks[ON_TOOL_ERROR], tool, args, tool_context, exc)
            if recovered is None:
                raise ToolError(
                    f"Tool {name!r} (call {call.id}) raised {type(exc).__name__}: {exc}. Fix "
                    "the tool, or add an on_tool_error_callback that returns a result dict "
                    "for the model.",
                    tool_name=name,
                    call_id=call.id,
                ) from exc
            result = wrap_result(recovered)
        after = hooks[AFTER_TOOL]
        if after:
            replaced = await first_result(after, tool, args, tool_context, result)
            if replaced is not None:
                result = wrap_result(replaced)
    return result
