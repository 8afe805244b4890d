"""An MCP server whose tools are Eventide agents: Claude Desktop, IDEs and other agents can
call an app's root agent as a tool (``eventide mcp-server APPS_DIR``; stdio by default,
``--http PORT`` for streamable HTTP). Needs the ``mcp`` extra. The rules:
:mod:`.agent_tools_server`.
"""

from eventide.mcp_server.agent_tools_server import DEFAULT_USER, build_mcp_server
from eventide.mcp_server.serving import http_app, mcp_registry, serve_http, serve_stdio

__all__ = [
    "DEFAULT_USER",
    "build_mcp_server",
    "http_app",
    "mcp_registry",
    "serve_http",
    "serve_stdio",
]
