"""Delegating to a task agent (google-adk 2.x's Task API), inside the caller's LLM flow.

When a chat agent's model calls a :class:`~eventide.tools.task_tools.TaskAgentTool`, the
flow does not run a function: it commits the call's arguments (JSON) as the request of the
task, from the user, on the task's branch (:mod:`eventide.flows.task_scope`), and runs the
task agent there. The task agent then either

- finishes (a ``finish_task`` call it made was accepted): its output becomes the result of
  the caller's call, committed as the user's function response as google-adk does, and the
  caller's flow goes on to its next model call; or
- answers with text, which is a question for the user: the invocation ends there. The
  user's next message is committed on the task's branch (:func:`reply_branch`), the Runner
  routes the turn to the agent that delegated (:func:`delegating_agent`), and that agent's
  flow continues the task first (:func:`pending_delegation`).
"""

from __future__ import annotations

import json
from collections.abc import AsyncGenerator, Sequence
from typing import Any

from eventide import types
from eventide.contexts import InvocationContext
from eventide.events import Event
from eventide.flows.resolved_agent import ResolvedAgent
from eventide.flows.task_scope import TASK_MARK, task_branch, task_scope
from eventide.protocol import FINISH_TASK, FINISH_TASK_DONE, USER_AUTHOR

__all__ = [
    "delegates",
    "delegating_agent",
    "delegating_tools",
    "finishes_task",
    "is_delegation",
    "note_task_output",
    "pending_delegation",
    "undispatched_delegation",
    "reply_branch",
    "run_delegation",
    "task_output",
]


def delegates(agent: ResolvedAgent) -> bool:
    """Whether ``agent`` offers any task agent as a tool."""
    return any(getattr(tool, "delegates_task", False) for tool in agent.tools)


def delegating_tools(agent: ResolvedAgent) -> set[str]:
    """The names of the tools through which ``agent`` delegates tasks."""
    return {tool.name for tool in agent.tools if getattr(tool, "delegates_task", False)}


def is_delegation(call: types.FunctionCall, tools: dict[str, Any]) -> bool:
    """Whether ``call`` delegates to a task agent."""
    return getattr(tools.get(call.name or ""), "delegates_task", False)


async def run_delegation(
    agent: ResolvedAgent, ctx: InvocationContext, call: types.FunctionCall, *, start: bool
) -> AsyncGenerator[Event, None]:
    """Run the task ``call`` delegated (``start``: commit its request first); yield its
    events, then the caller's function response once the task agent finished."""
    assert call.id is not None and call.name is not None
    branch = task_branch(ctx.branch, call.name, call.id)
    if start:
        request = json.dumps(call.args or {}, ensure_ascii=False)
        yield Event(
            invocation_id=ctx.invocation_id,
            author=USER_AUTHOR,
            branch=branch,
            content=types.Content(role="user", parts=[types.Part(text=request)]),
        )
    task_events = agent.run_agent(call.name, ctx.for_agent(ctx.agent, branch=branch))
    if task_events is None:
        return
    finishing: dict[str, types.FunctionCall] = {}
    output: dict[str, Any] | None = None

    def note(event: Event) -> None:
        nonlocal output
        for made in event.get_function_calls():
            if made.name == FINISH_TASK and made.id:
                finishing[made.id] = made
        for response in event.get_function_responses():
            finish = finishing.get(response.id or "")
            if finish is not None:
                output = task_output(finish, response)

    if not start:
        # The task ran before (a turn that waited for the user, or a resumed invocation):
        # its finish_task call, or the call and its answer, may be committed already. They
        # come after the delegating call: the log is read back to it, not from its start.
        for event in _events_since_call(ctx.session.events, call.id):
            if event.branch == branch:
                note(event)
    async for event in task_events:
        yield event
        if event.branch == branch:
            note(event)
    if output is None:
        # The task agent asked the user something (or was aborted): wait for the answer.
        ctx.end_invocation = True
        return
    yield Event(
        invocation_id=ctx.invocation_id,
        author=USER_AUTHOR,
        branch=ctx.branch,
        content=types.Content(
            role="user",
            parts=[
                types.Part(
                    function_response=types.FunctionResponse(
                        id=call.id, name=call.name, response=output
                    )
                )
            ],
        ),
    )


def task_output(
    call: types.FunctionCall, response: types.FunctionResponse
) -> dict[str, Any] | None:
    """The output of a task that ``call`` (a ``finish_task`` call) and its ``response``
    ended, or None when the call did not end it (its arguments were refused)."""
    if (response.response or {}).get("result") != FINISH_TASK_DONE:
        return None
    return dict(call.args or {})


def note_task_output(response_event: Event, calls: Sequence[types.FunctionCall]) -> None:
    """Put a task's output on the event of the tools' responses that ends it (an accepted
    ``finish_task`` call among ``calls``), as google-adk does: ``Event.output`` is the
    call's arguments, for a root task agent as for a delegated one."""
    for response in response_event.get_function_responses():
        if response.name != FINISH_TASK:
            continue
        call = next((c for c in calls if c.id == response.id), None)
        output = task_output(call, response) if call is not None else None
        if output is not None:
            response_event.output = output
            return


def finishes_task(response_event: Event) -> bool:
    """Whether ``response_event`` holds an accepted ``finish_task`` call's response: the
    task agent's turn ends there."""
    for response in response_event.get_function_responses():
        if response.name == FINISH_TASK and (response.response or {}).get("result") == (
            FINISH_TASK_DONE
        ):
            return True
    return False


def _latest_agent_event(events: Sequence[Event]) -> Event | None:
    for event in reversed(events):
        if event.author != USER_AUTHOR:
            return event
    return None


def _last_task(events: Sequence[Event]) -> tuple[Event, Event, str] | None:
    """When the latest agent event is in a delegated task's scope: that event, the event
    with the outermost delegating call, and the call's id."""
    latest = _latest_agent_event(events)
    if latest is None or task_scope(latest.branch) is None:
        return None
    assert latest.branch is not None
    segment = next(s for s in latest.branch.split(".") if TASK_MARK in s)
    call_id = segment.split(TASK_MARK, 1)[1]
    found = _call_by_id(events, call_id)
    return None if found is None else (latest, found[0], call_id)


def _answered(events: Sequence[Event], call_id: str) -> bool:
    for event in reversed(events):
        for response in event.get_function_responses():
            if response.id == call_id:
                return True
    return False


def reply_branch(events: Sequence[Event]) -> str | None:
    """The branch of the task waiting for the user's reply, or None when no task waits."""
    last = _last_task(events)
    if last is None or _answered(events, last[2]):
        return None
    return task_scope(last[0].branch)


def _events_since_call(events: Sequence[Event], call_id: str) -> Sequence[Event]:
    """The events after the one holding function call ``call_id`` (all of them when none
    does), found by reading back from the end."""
    for position in range(len(events) - 1, -1, -1):
        if any(call.id == call_id for call in events[position].get_function_calls()):
            return events[position + 1 :]
    return events


def _call_by_id(events: Sequence[Event], call_id: str) -> tuple[Event, types.FunctionCall] | None:
    for event in reversed(events):
        for call in event.get_function_calls():
            if call.id == call_id:
                return event, call
    return None


def delegating_agent(events: Sequence[Event]) -> str | None:
    """The name of the agent that delegated the task the latest agent event belongs to (the
    outermost one, when tasks are nested), or None: it answers the next turn, whether the
    task waits for the user or finished before the delegating agent could answer."""
    last = _last_task(events)
    return None if last is None else last[1].author


def undispatched_delegation(
    ctx: InvocationContext, agent: ResolvedAgent
) -> tuple[types.FunctionCall, bool] | None:
    """A call of ``agent`` (its latest event, on ``ctx``'s branch) that delegated a task
    whose agent never ran and that has no answer (the turn stopped before the task started),
    and whether its request was committed: google-adk dispatches it before the next model
    call."""
    events = ctx.session.events
    position = len(events) - 1
    while position >= 0 and events[position].author == USER_AUTHOR:
        position -= 1
    if position < 0:
        return None
    latest = events[position]
    if latest.author != agent.name or latest.branch != ctx.branch:
        return None
    delegating = delegating_tools(agent)
    later = events[position + 1 :]  # only user events: an answer, or the task's request
    for call in latest.get_function_calls():
        if call.name in delegating and call.id and not _answered(later, call.id):
            branch = task_branch(ctx.branch, call.name, call.id)
            return call, any(e.branch == branch for e in later)
    return None


def pending_delegation(ctx: InvocationContext, agent_name: str) -> types.FunctionCall | None:
    """The call of ``agent_name`` (on ``ctx``'s branch) whose task waits for the user."""
    events = ctx.session.events
    latest = _latest_agent_event(events)
    if latest is None or not latest.branch:
        return None
    prefix = f"{ctx.branch}." if ctx.branch else ""
    if not latest.branch.startswith(prefix):
        return None
    segment = latest.branch[len(prefix) :].split(".", 1)[0]
    if TASK_MARK not in segment:
        return None
    call_id = segment.split(TASK_MARK, 1)[1]
    found = _call_by_id(events, call_id)
    if found is None or found[0].author != agent_name or found[0].branch != ctx.branch:
        return None
    return None if _answered(events, call_id) else found[1]
