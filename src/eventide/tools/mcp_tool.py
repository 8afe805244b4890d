"""``McpTool``: one tool of an MCP server, as the model sees and calls it.

Made by :class:`~eventide.tools.mcp_toolset.McpToolset`; calls go through the toolset's
MCP session.
"""

from __future__ import annotations

import copy
import json
from typing import TYPE_CHECKING, Any

from eventide import types
from eventide.errors import McpConnectionError
from eventide.tools.base_tool import BaseTool

if TYPE_CHECKING:
    from eventide.contexts import ToolContext
    from eventide.tools.mcp_toolset import McpToolset

__all__ = ["McpTool", "call_result_to_response"]

_CREDENTIAL_REFUSED = (
    "The MCP server refused the user's credential (HTTP 401); a new one was requested. Wait "
    "for the user to provide it."
)
_NEEDS_CREDENTIAL = (
    "This tool needs the user's credential; it was requested. Wait for the user to provide it."
)


class McpTool(BaseTool):
    """A tool listed by an MCP server.

    Attributes:
        mcp_name: the tool's name on the server (``name`` may carry the toolset's prefix).
        input_schema: the tool's input JSON Schema, as the server gave it.
        output_schema: the JSON Schema of its structured results, when the server gives one.
    """

    def __init__(self, *, mcp_tool: Any, toolset: McpToolset) -> None:
        super().__init__(name=mcp_tool.name, description=mcp_tool.description or "")
        self.mcp_name: str = mcp_tool.name
        self.input_schema: dict[str, Any] = copy.deepcopy(dict(mcp_tool.input_schema or {}))
        output_schema = getattr(mcp_tool, "output_schema", None)
        self.output_schema: dict[str, Any] | None = (
            copy.deepcopy(dict(output_schema)) if output_schema else None
        )
        self._toolset = toolset

    def get_declaration(self) -> types.FunctionDeclaration:
        """The declaration with the server's input schema, unchanged."""
        return types.FunctionDeclaration(
            name=self.name,
            description=self.description,
            parameters_json_schema=self.input_schema or {"type": "object", "properties": {}},
            response_json_schema=self.output_schema,
        )

    async def run_async(self, *, args: dict[str, Any], tool_context: ToolContext) -> Any:
        """Call the tool on the server and map its result to a dict for the model.

        Returns ``structured_content`` when the server gives it, else ``{"result": text}``;
        a tool error (``isError``) or a protocol error becomes ``{"error": message}``. With
        an ``auth_config``, a missing credential is requested from the user, and one the
        server refuses (HTTP 401) is forgotten and requested again.

        Raises:
            McpConnectionError: the server cannot be reached, even after reconnecting once.
        """
        headers: dict[str, str] | None = None
        auth_config = self._toolset.auth_config
        if auth_config is not None:
            from eventide.auth import auth_headers

            credential = await tool_context.get_auth_response(auth_config)
            if credential is None:
                tool_context.request_credential(auth_config)
                return {"error": _NEEDS_CREDENTIAL}
            headers = auth_headers(auth_config, credential)
        from mcp import MCPError

        try:
            result = await self._toolset.call_tool(self.mcp_name, args, headers=headers)
        except (McpConnectionError, MCPError) as exc:
            if auth_config is not None and self._toolset.credential_refused(headers):
                # The server refused the stored credential (revoked, mistyped): forget it and
                # ask the user again, rather than failing every later call the same way.
                from eventide.auth import forget_credential

                await self._toolset.forget_session(headers)
                await forget_credential(tool_context.invocation_context, auth_config)
                tool_context.request_credential(auth_config)
                return {"error": _CREDENTIAL_REFUSED}
            if isinstance(exc, McpConnectionError):
                raise
            # The server refused the request (unknown tool, invalid arguments, a timeout):
            # the model can correct itself, so it gets the message rather than a crash.
            return {
                "error": f"The MCP server refused the call of tool {self.mcp_name!r}: "
                f"{exc.error.message} (code {exc.error.code})."
            }
        return call_result_to_response(result)


def call_result_to_response(result: Any) -> dict[str, Any]:
    """Map an MCP ``CallToolResult`` to a function response dict.

    * ``isError``: ``{"error": <the text content>}``.
    * ``structuredContent``: that object.
    * otherwise ``{"result": <text>}`` (several text blocks joined by newlines); non-text
      blocks (images, audio, resources) are listed under ``"content"`` as their JSON.
    """
    texts: list[str] = []
    others: list[dict[str, Any]] = []
    blocks: list[Any] = result.content or []
    for block in blocks:
        if getattr(block, "type", None) == "text":
            texts.append(block.text)
        else:
            others.append(block.model_dump(mode="json", by_alias=True, exclude_none=True))
    text = "\n".join(texts)
    if result.is_error:
        message = text or (json.dumps(others) if others else "")
        return {"error": message or "The MCP tool reported an error without a message."}
    structured = result.structured_content
    if structured is not None:
        return dict(structured)
    response: dict[str, Any] = {"result": text}
    if others:
        response["content"] = others
    return response
