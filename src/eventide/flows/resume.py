"""Resuming tool calls that paused for the user: confirmations and credentials.

When the user's message answers a confirmation (a function response named
``eventide_request_confirmation``) or a credential request (``eventide_request_credential``),
the original tool call runs again, now with the answer, and its response is yielded before
the agent's next model call.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator
from typing import Any

from eventide import types
from eventide.contexts import InvocationContext
from eventide.events import Event, ToolConfirmation
from eventide.flows.pause import pause_requests
from eventide.flows.request import build_request
from eventide.flows.resolved_agent import ResolvedAgent
from eventide.flows.tool_dispatch import run_function_calls
from eventide.protocol import REQUEST_CONFIRMATION_FUNCTION, REQUEST_CREDENTIAL_FUNCTION

__all__ = ["answered_calls", "needs_resume", "resume_paused_calls"]


def needs_resume(ctx: InvocationContext) -> bool:
    """Whether the user's message answers a confirmation or credential request."""
    user_content = ctx.user_content
    if user_content is None:
        return False
    # Asked at every model-call run: a plain loop, each record read once.
    for part in user_content.parts or ():
        response = part.function_response
        if response is not None and response.name in _PAUSE_REQUESTS:
            return True
    return False


_PAUSE_REQUESTS = (REQUEST_CONFIRMATION_FUNCTION, REQUEST_CREDENTIAL_FUNCTION)


async def resume_paused_calls(
    agent: ResolvedAgent, ctx: InvocationContext
) -> AsyncGenerator[Event, None]:
    """Re-run the calls the user's message answers; yield their response events."""
    user_content = ctx.user_content
    if user_content is None or not user_content.parts:
        return
    answers = [p.function_response for p in user_content.parts if p.function_response is not None]
    calls, confirmations = answered_calls(answers, ctx.session.events)
    if not calls:
        return
    request = await build_request(agent, ctx)
    event = await run_function_calls(
        agent, ctx, calls, request.tools_dict, confirmations=confirmations
    )
    yield event
    for pause in pause_requests(agent, ctx, event, calls):
        yield pause
        ctx.end_invocation = True


def answered_calls(
    answers: list[types.FunctionResponse], events: list[Event]
) -> tuple[list[types.FunctionCall], dict[str, ToolConfirmation]]:
    """The original tool calls that ``answers`` to confirmation and credential requests
    let run now, and the confirmations to run them with (by call id)."""
    answers = [
        a for a in answers if a.name in (REQUEST_CONFIRMATION_FUNCTION, REQUEST_CREDENTIAL_FUNCTION)
    ]
    if not answers:
        return [], {}
    requests = _synthetic_calls(events)
    calls: list[types.FunctionCall] = []
    confirmations: dict[str, ToolConfirmation] = {}
    for answer in answers:
        request_args = requests.get(answer.id or "")
        if request_args is None:
            continue
        response = answer.response or {}
        if answer.name == REQUEST_CONFIRMATION_FUNCTION:
            original = types.FunctionCall.model_validate(request_args.get("originalFunctionCall"))
            confirmations[original.id or ""] = ToolConfirmation(
                confirmed=bool(response.get("confirmed")), payload=response.get("payload")
            )
        else:
            # The Runner stored the credential before committing the (redacted) answer.
            found = _find_call(events, str(request_args.get("function_call_id")))
            if found is None:
                continue
            original = found
        calls.append(original)
    return calls, confirmations


def _synthetic_calls(events: list[Event]) -> dict[str, dict[str, Any]]:
    found: dict[str, dict[str, Any]] = {}
    for event in events:
        for call in event.get_function_calls():
            if call.name in (REQUEST_CONFIRMATION_FUNCTION, REQUEST_CREDENTIAL_FUNCTION):
                found[call.id or ""] = call.args or {}
    return found


def _find_call(events: list[Event], call_id: str) -> types.FunctionCall | None:
    for event in reversed(events):
        for call in event.get_function_calls():
            if call.id == call_id:
                return call
    return None
