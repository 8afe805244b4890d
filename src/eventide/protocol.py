"""The names Eventide puts on the wire and in the session log, defined once.

Models see the first two as tool names; clients see the last two as function calls they
answer with a function response of the same id. Every layer (flows, runner, auth, cli, the
demo model, the web UI's server side) imports them from here instead of re-typing them.
"""

from __future__ import annotations

from typing import Final

__all__ = [
    "FINISH_TASK",
    "FINISH_TASK_DONE",
    "REQUEST_CONFIRMATION_FUNCTION",
    "REQUEST_CREDENTIAL_FUNCTION",
    "SET_MODEL_RESPONSE",
    "SYNTHETIC_FUNCTIONS",
    "TRANSFER_TO_AGENT",
    "USER_AUTHOR",
]

TRANSFER_TO_AGENT: Final = "transfer_to_agent"
"""The tool an agent with transfer targets calls to hand the conversation over."""

SET_MODEL_RESPONSE: Final = "set_model_response"
"""The tool an agent with tools and an ``output_schema`` calls with its final answer."""

FINISH_TASK: Final = "finish_task"
"""The tool a ``mode="task"`` agent ends its task with (google-adk's Task API)."""

FINISH_TASK_DONE: Final = "Task completed."
"""The result of a ``finish_task`` call that ended the task (google-adk's text)."""

REQUEST_CONFIRMATION_FUNCTION: Final = "eventide_request_confirmation"
"""The function call asking the user to confirm or decline a tool call."""

REQUEST_CREDENTIAL_FUNCTION: Final = "eventide_request_credential"
"""The function call asking the user for a tool's credential."""

SYNTHETIC_FUNCTIONS: Final = frozenset({REQUEST_CONFIRMATION_FUNCTION, REQUEST_CREDENTIAL_FUNCTION})
"""The function calls the runtime writes for the user (never sent to the model)."""

USER_AUTHOR: Final = "user"
"""The author of the end user's events (no agent may have this name)."""
