"""Pausing for the user: the events that ask for confirmations and credentials."""

from __future__ import annotations

from eventide import types
from eventide._ids import new_id
from eventide.contexts import InvocationContext
from eventide.events import Event
from eventide.flows.resolved_agent import ResolvedAgent
from eventide.protocol import REQUEST_CONFIRMATION_FUNCTION, REQUEST_CREDENTIAL_FUNCTION

__all__ = ["pause_requests"]


def pause_requests(
    agent: ResolvedAgent,
    ctx: InvocationContext,
    response_event: Event,
    calls: list[types.FunctionCall],
) -> list[Event]:
    """Events asking the user for confirmations or credentials that tools requested.

    Each is a function call the client answers with a function response of the same id;
    the call's id is in ``long_running_tool_ids``, so the event is a final response.
    """
    actions = response_event.actions
    if not actions.requested_tool_confirmations and not actions.requested_auth_configs:
        return []
    by_id = {call.id: call for call in calls}
    parts: list[types.Part] = []
    for call_id, confirmation in actions.requested_tool_confirmations.items():
        original = by_id.get(call_id)
        parts.append(
            types.Part(
                function_call=types.FunctionCall(
                    id=f"confirm-{new_id()}",
                    name=REQUEST_CONFIRMATION_FUNCTION,
                    args={
                        "originalFunctionCall": original.model_dump(mode="json")
                        if original is not None
                        else {"id": call_id},
                        "toolConfirmation": confirmation.model_dump(mode="json"),
                    },
                )
            )
        )
    for call_id, auth_config in actions.requested_auth_configs.items():
        parts.append(
            types.Part(
                function_call=types.FunctionCall(
                    id=f"auth-{new_id()}",
                    name=REQUEST_CREDENTIAL_FUNCTION,
                    args={"function_call_id": call_id, "auth_config": auth_config},
                )
            )
        )
    ids = {p.function_call.id for p in parts if p.function_call and p.function_call.id}
    return [
        Event(
            invocation_id=ctx.invocation_id,
            author=agent.name,
            branch=ctx.branch,
            content=types.Content(role="model", parts=parts),
            long_running_tool_ids=ids,
        )
    ]
