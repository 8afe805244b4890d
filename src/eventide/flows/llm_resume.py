"""Continuing an ``LlmAgent``'s model/tool loop from its last committed event.

The agent's own events (on its branch, in its scope) say where its model/tool loop stopped:

- a committed final answer: the loop is over;
- a committed model response with function calls and no committed responses: the calls
  run now, with the ids the model gave them (``tool_context.function_call_id``, the
  idempotency key of a tool that was running when the process died); the model is not
  called again for them;
- committed function responses: what follows them (a pause, a transfer, a structured
  answer) happens, then the loop goes on with the next model call;
- a committed transfer: the target agent resumes from the events after it;
- a committed request for the user (a confirmation, a credential): with the user's answer
  committed after it (the message that continues a paused invocation), the original call
  runs with the answer; without, the invocation ends there again, waiting for it;
- a long-running call that returned nothing (listed ``eventide_waiting``) is never run
  again: the user's answer to it is its result, and the model goes on with it;
- a committed call that delegated a task (google-adk's Task API): the task agent continues
  from its own events on the task's branch (its request is committed once), and when it
  finishes, its output answers the call and the loop goes on.

When one model response asked for several tools, each call that finished was recorded as it
finished (:mod:`eventide.flows.recorded_calls`): resuming runs only the calls without a record,
then commits the one response event for all of them.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, Awaitable, Callable

from eventide import types
from eventide.contexts import InvocationContext
from eventide.errors import ResumeError
from eventide.events import Event, ToolConfirmation
from eventide.flows.llm_flow import (
    FlowStep,
    after_tool_responses,
    run_llm_flow,
    wait_for_answers,
)
from eventide.flows.recorded_calls import ToolResponses, recorded_outcomes, run_calls_recorded
from eventide.flows.request import build_request
from eventide.flows.resolved_agent import ResolvedAgent
from eventide.flows.resume import answered_calls
from eventide.flows.task_delegation import delegating_tools, note_task_output, run_delegation
from eventide.flows.task_scope import task_branch
from eventide.flows.tool_dispatch import run_function_calls
from eventide.protocol import (
    REQUEST_CONFIRMATION_FUNCTION,
    REQUEST_CREDENTIAL_FUNCTION,
    USER_AUTHOR,
)
from eventide.runtime.markers import waiting_calls
from eventide.runtime.replay import AgentProgress, ResumeScope, end_marker, ends_at_transfer

__all__ = ["resume_llm_agent"]

_REQUESTS_FOR_USER = (REQUEST_CONFIRMATION_FUNCTION, REQUEST_CREDENTIAL_FUNCTION)


async def resume_llm_agent(
    resolve: Callable[[], Awaitable[ResolvedAgent]],
    ctx: InvocationContext,
    scope: ResumeScope,
    progress: AgentProgress,
    *,
    run_agent: Callable[[str, InvocationContext], AsyncGenerator[Event, None] | None],
) -> AsyncGenerator[Event, None]:
    """Continue the loop of the agent ``resolve()`` gives after its last committed event
    (``progress``, read from ``scope``; see the module docstring). ``run_agent`` runs a
    transfer's target by name (None: the tree has no such agent)."""
    flow = [(pos, e) for pos, e in progress.events if e.content is not None or e.error_code]
    if not flow:
        # Only a callback's event was committed: the loop had not started.
        async for event in run_llm_flow(resolve(), ctx):
            yield event
        return
    position, last = flow[-1]
    target_name = last.actions.transfer_to_agent
    if target_name:
        if ctx.resumable and not progress.marked_transfer and ends_at_transfer(ctx.agent):
            # The agent's end marker after its transfer was not committed: it comes first,
            # as in a run that did not stop (see llm_flow.after_tool_responses).
            yield end_marker(last.author, ctx, None, top=False)
        ctx.resume = scope.at(position)
        target = run_agent(target_name, ctx)
        if target is None:
            raise ResumeError(
                f"Invocation {ctx.invocation_id} stopped after {last.author!r} transferred "
                f"to {target_name!r}, which is not in the agent tree now (renamed or removed "
                "since). Resume with the agent tree that started the invocation, or start a "
                "new turn (the committed events stay in the session).",
                invocation_id=ctx.invocation_id,
            )
        async for event in target:
            yield event
        ctx.resume = None
        return
    resolved = await resolve()
    step = FlowStep()
    later = scope.events[position + 1 :]
    answers = [
        r for e in later if e.author == USER_AUTHOR for r in e.get_function_responses() if r.id
    ]
    calls = last.get_function_calls()
    responses = last.get_function_responses()
    model_event: Event | None = last
    if calls and all(call.name in _REQUESTS_FOR_USER for call in calls):
        # Paused for confirmations or credentials: run the calls the user's answers allow.
        asked = {call.id for call in calls}
        calls, confirmations = answered_calls(
            [a for a in answers if a.id in asked], ctx.session.events
        )
        if not calls:
            ctx.end_invocation = True  # still waiting for the user's answer
            return
        results = ToolResponses()
        own = _own_events(later, resolved.name, ctx.branch)
        async for record in _run_calls(resolved, ctx, calls, own, results, confirmations):
            yield record
        assert results.event is not None
        response_event = results.event
        yield response_event
        model_event = None
    elif calls:
        asked = {call.id for call in calls}
        answers = [a for a in answers if a.id in asked]
        answered = {a.id for a in answers}
        waiting: set[str] = set()
        own = _own_events(later, resolved.name, ctx.branch)
        for event in own:
            waiting |= waiting_calls(event)
        pending = [c for c in calls if c.id not in answered and c.id not in waiting]
        delegating: set[str] = delegating_tools(resolved) if pending else set()
        if any(call.name in delegating for call in pending):
            # A task the agent delegated was running: the task agent continues from its own
            # events on the task's branch, then the agent's loop goes on.
            ctx.resume = scope.at(position)
            for call in pending:
                start = not _requested(
                    later, task_branch(ctx.branch, call.name or "", call.id or "")
                )
                async for event in run_delegation(resolved, ctx, call, start=start):
                    yield event
                if ctx.end_invocation:  # the task agent waits for the user
                    break
            ctx.resume = None
            if not ctx.end_invocation:
                async for event in run_llm_flow(_ready(resolved), ctx, answer_paused_calls=False):
                    yield event
            return
        if not pending:
            if not answers:
                ctx.end_invocation = True  # the long-running calls still wait for answers
                return
            # The user answered the long-running calls: the model goes on with the answers.
            async for event in run_llm_flow(_ready(resolved), ctx, answer_paused_calls=False):
                yield event
            return
        results = ToolResponses()
        async for record in _run_calls(
            resolved, ctx, pending, own, results, None, several=len(calls) > 1
        ):
            yield record
        assert results.event is not None
        response_event = results.event
        if not response_event.get_function_responses() and last.long_running_tool_ids:
            async for event in wait_for_answers(ctx, step, response_event):
                yield event
            if answers:  # other calls of the response were answered meanwhile: go on
                ctx.end_invocation = False
                async for event in run_llm_flow(_ready(resolved), ctx, answer_paused_calls=False):
                    yield event
            return
        note_task_output(response_event, calls)
        yield response_event
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


async def _run_calls(
    resolved: ResolvedAgent,
    ctx: InvocationContext,
    calls: list[types.FunctionCall],
    own: list[Event],
    responses: ToolResponses,
    confirmations: dict[str, ToolConfirmation] | None,
    *,
    several: bool | None = None,
) -> AsyncGenerator[Event, None]:
    """Run the calls that still need to run, as the live flow runs them: with a record per
    finished call when one model response asked for ``several`` (the calls recorded before
    the crash are not run again); set ``responses.event``."""
    request = await build_request(resolved, ctx)
    if several is None:
        several = len(calls) > 1
    if not several:
        responses.event = await run_function_calls(
            resolved, ctx, calls, request.tools_dict, confirmations=confirmations
        )
        return
    recorded = recorded_outcomes(own, {call.id for call in calls if call.id})
    events = run_calls_recorded(
        resolved,
        ctx,
        calls,
        request.tools_dict,
        responses,
        recorded=recorded,
        confirmations=confirmations,
    )
    async for record in events:
        yield record


def _requested(later: list[Event], branch: str) -> bool:
    """Whether the request of the task on ``branch`` was committed."""
    return any(e.author == USER_AUTHOR and e.branch == branch for e in later)


def _own_events(events: list[Event], name: str, branch: str | None) -> list[Event]:
    return [e for e in events if e.author == name and e.branch == branch]


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
