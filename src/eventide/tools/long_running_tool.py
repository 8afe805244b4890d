"""``LongRunningFunctionTool``: a tool that starts work finishing after the turn."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from eventide import types
from eventide.tools.function_tool import FunctionTool

__all__ = ["LongRunningFunctionTool"]


class LongRunningFunctionTool(FunctionTool):
    """A function tool whose work completes later (an approval, a batch job).

    The function runs at once and returns an initial result (e.g. a ticket id). The call's id
    is put in the model event's ``long_running_tool_ids`` and the invocation pauses. To resume,
    send a user message holding a ``FunctionResponse`` with the same id and name; the agent
    that made the call continues with it.
    """

    def __init__(self, func: Callable[..., Any], **kwargs: Any) -> None:
        super().__init__(func, **kwargs)
        self.is_long_running = True

    def get_declaration(self) -> types.FunctionDeclaration:
        declaration = super().get_declaration()
        # The note google-adk gives the model, word for word: the same prompt on both
        # runtimes, and ADK tests and apps match on it.
        note = (
            "NOTE: This is a long-running operation. Do not call this tool again if it has "
            "already returned some intermediate or pending status."
        )
        if declaration.description and note not in declaration.description:
            declaration.description = f"{declaration.description}\n\n{note}"
        elif not declaration.description:
            declaration.description = note
        return declaration
