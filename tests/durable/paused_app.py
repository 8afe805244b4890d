"""A resumable app whose invocation pauses twice for the user, with kill points.

Shared by the in-process pause tests and the worker process the kill tests SIGKILL
(``tests/durable/paused_worker.py``). The tree::

    desk (SequentialAgent)
      clerk    LlmAgent: calls request_approval(amount=40), a long-running tool that opens
               a ticket (state) and returns nothing; with the approval calls refund(amount=40),
               which needs the user's confirmation; with the refund's result answers
      closer   LlmAgent: calls notify(), then answers

A turn is three messages: "go" (pauses for the approval), the approval (a function
response to request_approval; pauses for the confirmation), the confirmation. Every model
call appends ``model <agent> <n>`` to the ledger and every tool call ``start <tool> <call id>``
and ``end <tool> <call id>`` (``tests/durable/durable_app.py``'s ``Probe``).
"""

from __future__ import annotations

from typing import Any

from eventide import (
    App,
    Event,
    LlmAgent,
    LongRunningFunctionTool,
    ResumabilityConfig,
    SequentialAgent,
    ToolContext,
    types,
)
from eventide.models.llm_request import LlmRequest
from eventide.models.llm_response import LlmResponse
from eventide.plugins.base_plugin import BasePlugin
from eventide.protocol import REQUEST_CONFIRMATION_FUNCTION
from eventide.runtime.markers import WAITING_KEY
from eventide.testing import FunctionModel, text_response, tool_call_response
from eventide.tools.function_tool import FunctionTool
from tests.durable.durable_app import Probe

# Kill points, in the order the turn reaches them. "paused_*": the process is idle, the
# invocation paused for the user; the others are inside a model call or a tool.
KILL_POINTS = (
    "approval_running",  # inside request_approval (it opened the ticket)
    "approval_committed",  # its record (no response, the ticket's state) committed, no pause yet
    "paused_for_approval",  # idle, waiting for the approval
    "after_approval_committed",  # clerk's model call with the approval
    "paused_for_confirmation",  # idle, waiting for the confirmation
    "refund_running",  # inside refund, after the confirmation
    "after_refund_committed",  # clerk's model call with the refund's result
    "notify_running",  # inside closer's notify
)
IN_MODEL_CALL = {"after_approval_committed", "after_refund_committed"}
IN_TOOL = {"approval_running", "refund_running", "notify_running"}
IDLE = {"paused_for_approval", "paused_for_confirmation"}
AFTER_COMMIT = {"approval_committed"}
# The messages of the turn, and the kill point reached when each has been handled.
STEPS = ("go", "approve", "confirm")
IDLE_AFTER = {"go": "paused_for_approval", "approve": "paused_for_confirmation"}


def _last_response(request: LlmRequest) -> types.FunctionResponse | None:
    for content in reversed(request.contents):
        if content.parts:
            return content.parts[-1].function_response
    return None


class _ApprovalCommitted(BasePlugin):
    """Reaches ``approval_committed`` right after request_approval's waiting record commits."""

    def __init__(self, probe: Probe) -> None:
        super().__init__("approval_committed")
        self.probe = probe

    async def on_event_callback(self, *, invocation_context: Any, event: Event) -> None:
        if (event.custom_metadata or {}).get(WAITING_KEY):
            self.probe.point("approval_committed")


def build_app(probe: Probe) -> App:
    """The app above, logging to (and stopping at the kill points of) ``probe``."""

    def model_for(agent_name: str) -> FunctionModel:
        def answer(request: LlmRequest) -> LlmResponse:
            n = probe.model_calls.get(agent_name, 0) + 1
            probe.model_calls[agent_name] = n
            probe.log(f"model {agent_name} {n}")
            response = _last_response(request)
            name = response.name if response is not None else None
            if agent_name == "clerk":
                if name == "request_approval":
                    probe.point("after_approval_committed")
                    return tool_call_response(("refund", {"amount": 40}))
                if name == "refund":
                    probe.point("after_refund_committed")
                    return text_response("refunded 40")
                return tool_call_response(("request_approval", {"amount": 40}))
            if name == "notify":
                return text_response("closed")
            return tool_call_response(("notify", {}))

        return FunctionModel(function=answer)

    def request_approval(amount: int, tool_context: ToolContext) -> None:
        """Ask a manager to approve a refund; the approval arrives later."""
        call_id = tool_context.function_call_id
        probe.log(f"start request_approval {call_id}")
        tool_context.state["ticket"] = f"open:{amount}"
        probe.point("approval_running")
        probe.log(f"end request_approval {call_id}")

    def refund(amount: int, tool_context: ToolContext) -> dict[str, Any]:
        """Refund an amount."""
        call_id = tool_context.function_call_id
        probe.log(f"start refund {call_id}")
        probe.point("refund_running")
        tool_context.state["refunded"] = amount
        probe.log(f"end refund {call_id}")
        return {"refunded": amount}

    def notify(tool_context: ToolContext) -> dict[str, Any]:
        """Tell the customer."""
        call_id = tool_context.function_call_id
        probe.log(f"start notify {call_id}")
        probe.point("notify_running")
        tool_context.state["notified"] = True
        probe.log(f"end notify {call_id}")
        return {"sent": True}

    clerk = LlmAgent(
        name="clerk",
        model=model_for("clerk"),
        tools=[
            LongRunningFunctionTool(request_approval),
            FunctionTool(refund, require_confirmation=True),
        ],
    )
    closer = LlmAgent(name="closer", model=model_for("closer"), tools=[notify])
    return App(
        name="paused_app",
        root_agent=SequentialAgent(name="desk", sub_agents=[clerk, closer]),
        plugins=[_ApprovalCommitted(probe)],
        resumability_config=ResumabilityConfig(is_resumable=True),
    )


def answer_for(step: str, events: list[Event]) -> types.Content:
    """The user's message of ``step`` ("approve" or "confirm"), answering the call the
    session's events paused for."""
    wanted = "request_approval" if step == "approve" else REQUEST_CONFIRMATION_FUNCTION
    call = next(c for e in reversed(events) for c in e.get_function_calls() if c.name == wanted)
    response: dict[str, Any] = (
        {"approved": True, "by": "manager"} if step == "approve" else {"confirmed": True}
    )
    return types.Content(
        role="user",
        parts=[
            types.Part(
                function_response=types.FunctionResponse(
                    id=call.id, name=call.name, response=response
                )
            )
        ],
    )
