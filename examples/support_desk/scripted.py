"""The offline, scripted conversation: one ``ScriptedModel`` per agent plays what a real
model would answer, while tools, state, transfers, the review loop and the session store
are all real.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

from eventide import Event, LlmAgent, Runner, types
from eventide.testing import ScriptedModel, tool_call_response
from examples.support_desk.agent import build_root_agent

__all__ = ["APP_NAME", "USER_ID", "USER_MESSAGES", "build_scripted_desk", "run_conversation"]

APP_NAME = "support_desk"
USER_ID = "customer-7"

USER_MESSAGES = [
    "Hi, I think I was charged twice for invoice INV-1001.",
    "Yes please, open a refund ticket.",
    "Also, your API has been returning errors all morning.",
    "Thanks, that's all!",
]


def _transfer(name: str) -> object:
    return tool_call_response(("transfer_to_agent", {"agent_name": name}))


def scripted_models() -> dict[str, ScriptedModel]:
    """Each agent's answers, in the order the conversation asks for them."""
    return {
        "triage": ScriptedModel(
            responses=[
                _transfer("billing"),
                "You're welcome! Tickets T-1 (refund) and T-2 (API errors) are open; we will "
                "keep you posted.",
            ]
        ),
        "billing": ScriptedModel(
            responses=[
                tool_call_response(("look_up_invoice", {"invoice_number": 1001})),
                "Invoice INV-1001 ($120.00) was indeed paid twice on 2026-11-02. Shall I open "
                "a refund ticket?",
                tool_call_response(
                    (
                        "open_ticket",
                        {"summary": "Refund duplicate payment of INV-1001", "priority": "normal"},
                    )
                ),
                "Done: ticket T-1 is open; the refund takes 3-5 business days.",
                _transfer("tech"),
            ]
        ),
        "tech": ScriptedModel(
            responses=[
                tool_call_response(("check_service_status", {"service": "api"})),
                tool_call_response(
                    ("open_ticket", {"summary": "API returning errors", "priority": "high"})
                ),
                _transfer("notice_review"),
                _transfer("triage"),
            ]
        ),
        "drafter": ScriptedModel(
            responses=[
                "We are aware of API errors and are working on a fix.",
                "We are aware of API errors (ticket T-2) and are working on a fix. Next "
                "update by 12:00 UTC.",
            ]
        ),
        "critic": ScriptedModel(
            responses=[
                "Name the ticket and say when the next update comes.",
                tool_call_response(("exit_loop", {})),
            ]
        ),
    }


def build_scripted_desk() -> tuple[LlmAgent, dict[str, ScriptedModel]]:
    """The desk wired to fresh scripted models, and the models (to inspect requests)."""
    models = scripted_models()
    return build_root_agent(dict(models)), models


async def run_conversation(
    runner: Runner, session_id: str, user_id: str = USER_ID
) -> AsyncIterator[tuple[int, Event]]:
    """Send the four user messages; yield ``(turn, event)`` for every committed event."""
    for turn, text in enumerate(USER_MESSAGES, start=1):
        message = types.Content(role="user", parts=[types.Part(text=text)])
        async for event in runner.run_async(
            user_id=user_id, session_id=session_id, new_message=message
        ):
            yield turn, event
