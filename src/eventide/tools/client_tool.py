"""``ClientTool``: a tool the client declares and runs itself (a front end's tool).

Protocols such as AG-UI and the OpenAI APIs let the caller pass tools with the request
(``RunConfig.client_tools``): the model may call them, and the caller runs them and sends
the result with its next request. In Eventide such a tool is long-running and does nothing
on the server: the model's call event lists the call in ``long_running_tool_ids``, the
invocation ends there, and the client's answer (a ``FunctionResponse`` with the call's id,
in the next user message) goes back to the agent that made the call, as for any
long-running tool.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from eventide import types
from eventide.tools.base_tool import BaseTool

if TYPE_CHECKING:
    from eventide.contexts import ToolContext

__all__ = ["ClientTool"]


class ClientTool(BaseTool):
    """A tool declared by the client: the model sees ``declaration``; the client runs it."""

    def __init__(self, declaration: types.FunctionDeclaration) -> None:
        super().__init__(
            name=declaration.name,
            description=declaration.description or "",
            is_long_running=True,
        )
        self.declaration = declaration

    def get_declaration(self) -> types.FunctionDeclaration:
        return self.declaration

    async def run_async(self, *, args: dict[str, Any], tool_context: ToolContext) -> Any:
        """Nothing runs here: the call waits for the client's result (None: no initial
        result, so the invocation pauses at once)."""
        return None
