"""A real MCP server (written with the ``mcp`` SDK) that the MCP tests start as a process.

Usage: ``python mcp_test_server.py stdio`` or ``python mcp_test_server.py http PORT``.
"""

from __future__ import annotations

import os
import sys
from typing import Any

import anyio
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from pydantic import BaseModel

server = MCPServer("eventide-test", log_level="WARNING")


class Forecast(BaseModel):
    city: str
    temp_c: float
    conditions: list[str]


@server.tool()
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@server.tool()
def shout(text: str) -> str:
    """Return the text in capitals."""
    return text.upper()


@server.tool()
def forecast(city: str, days: int = 1) -> Forecast:
    """The weather forecast for a city."""
    return Forecast(city=city, temp_c=21.5 + days, conditions=["sunny"] * days)


@server.tool()
def refuse(reason: str) -> str:
    """Always fails with the given reason."""
    raise ToolError(f"refused: {reason}")


@server.tool()
def whoami() -> int:
    """The server's process id (the tests kill it to check reconnection)."""
    return os.getpid()


@server.tool()
async def pause(seconds: float) -> str:
    """Wait, then answer (for cancellation tests)."""
    await anyio.sleep(seconds)
    return "done"


@server.tool()
def header(name: str, ctx: Context) -> str:
    """The value of an HTTP request header ('' when absent or not over HTTP)."""
    headers = ctx.headers or {}
    return headers.get(name.lower(), "")


def run_with_api_key(port: int, api_key: str) -> None:
    """Serve over HTTP, answering 401 to tool calls without ``X-Api-Key: <api_key>`` (the
    listing stays public, as on servers whose tools act for a signed-in user)."""
    import uvicorn
    from starlette.responses import JSONResponse

    app = server.streamable_http_app()

    async def guarded(scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            headers = dict(scope["headers"])
            is_call = headers.get(b"mcp-method") == b"tools/call"
            if is_call and headers.get(b"x-api-key") != api_key.encode():
                await JSONResponse({"error": "invalid api key"}, status_code=401)(
                    scope, receive, send
                )
                return
        await app(scope, receive, send)

    uvicorn.run(guarded, host="127.0.0.1", port=port, log_level="warning")


if __name__ == "__main__":
    if sys.argv[1:2] == ["http"]:
        server.run("streamable-http", host="127.0.0.1", port=int(sys.argv[2]))
    elif sys.argv[1:2] == ["http-key"]:
        run_with_api_key(int(sys.argv[2]), sys.argv[3])
    else:
        server.run()
