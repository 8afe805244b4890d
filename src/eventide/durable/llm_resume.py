"""Continuing an ``LlmAgent`` from its last committed event.

The agent's own events (on its branch, in its scope) say where its model/tool loop stopped:

- a committed final answer: the loop is over;
- a committed model response with function calls and no committed responses: the calls
  run now, with the ids the model gave them (``tool_context.function_call_id``, the
  idempotency key of a tool that was running when the process died); the model is not
  called again for them;
- committed function responses: what follows them (a pause, a transfer, a structured
  answer) happens, then the loop goes on with the next model call;
- a committed transfer: the target agent resumes from the events after it;
- a committed request for the user (a confirmation, a credential): the invocation ends there
  again, waiting for the answer.

Calls answered in one event are answered together: when one model response asked for several
tools and the process died before their response event was committed, all of them run again
(each with its own call id).
"""

from __future__ import annotations

from collections.abc import AsyncGenerator

from eventide import types
from eventide.agents.llm_agent import LlmAgent
from eventide.contexts import InvocationContext
from eventide.durable.log import AgentProgress, ResumeScope
from eventide.errors import ResumeError
from eventide.events import Event
from eventide.flows.llm_flow import FlowStep, after_tool_responses, run_llm_flow
from eventide.flows.request import build_request
from eventide.flows.resolved_agent import ResolvedAgent
from eventide.flows.tool_dispatch import run_function_calls
from eventide.protocol import REQUEST_CONFIRMATION_FUNCTION, REQUEST_CREDENTIAL_FUNCTION

__all__ = ["resume_llm_agent"]

_REQUESTS_FOR_USER = (REQUEST_CONFIRMATION_FUNCTION, REQUEST_CREDENTIAL_FUNCTION)


async def resume_llm_agent(
    agent: LlmAgent, ctx: InvocationContext, scope: ResumeScope, progress: AgentProgress
) -> AsyncGenerator[Event, None]:
    """Continue ``agent``'s loop after its last committed event (see the module docstring)."""
    flow = [(pos, e) for pos, e in progress.events if e.content is not None or e.error_code]
    if not flow:
        # Only a callback's event was committed: the loop had not started.
        async for event in run_llm_flow(agent.resolve(ctx), ctx):
            yield event
        return
    position, last = flow[-1]
    target_name = last.actions.transfer_to_agent
    if target_name:
        target = agent.root_agent.find_agent(target_name)
        if target is None:
            raise ResumeError(
                f"Invocation {ctx.invocation_id} stopped after {agent.name!r} transferred to "
                f"{target_name!r}, which is not in the agent tree now (renamed or removed "
                "since). Resume with the agent tree that started the invocation, or start a "
                "new turn (the committed events stay in the session).",
                invocation_id=ctx.invocation_id,
            )
        ctx.resume = scope.at(position)
        async for event in target.run_async(ctx):
            yield event
        ctx.resume = None
        return
    resolved = await agent.resolve(ctx)
    step = FlowStep()
    calls = last.get_function_calls()
    responses = last.get_function_responses()
    if calls:
        if all(call.name in _REQUESTS_FOR_USER for call in calls):
            ctx.end_invocation = True  # still waiting for the user's answer
            return
        request = await build_request(resolved, ctx)
        response_event = await run_function_calls(resolved, ctx, calls, request.tools_dict)
        yield response_event
        model_event: Event | None = last
    elif responses:
        response_event = last
        model_event = _model_event_for(flow, responses)
        if model_event is not None:
            calls = model_event.get_function_calls()
        else:
            # Answers to paused calls (the original calls are in an earlier invocation).
            calls = _calls_by_id(ctx.session.events, {r.id for r in responses if r.id})
    else:
        return  # the final answer was committed: the loop is over
    events = after_tool_responses(resolved, ctx, step, model_event, response_event, calls)
    async for event in events:
        step.last = event
        yield event
    last_event = step.last or response_event
    if step.done or ctx.end_invocation or last_event.is_final_response():
        return
    async for event in run_llm_flow(_ready(resolved), ctx, answer_paused_calls=False):
        yield event


async def _ready(resolved: ResolvedAgent) -> ResolvedAgent:
    return resolved


def _model_event_for(
    flow: list[tuple[int, Event]], responses: list[types.FunctionResponse]
) -> Event | None:
    """The agent's committed model response whose calls ``responses`` answer."""
    ids = {r.id for r in responses if r.id}
    for _, event in reversed(flow[:-1]):
        calls = event.get_function_calls()
        if calls and ids & {c.id for c in calls}:
            return event
    return None


def _calls_by_id(events: list[Event], ids: set[str | None]) -> list[types.FunctionCall]:
    found: list[types.FunctionCall] = []
    for event in reversed(events):
        for call in event.get_function_calls():
            if call.id in ids:
                found.append(call)
    return found
