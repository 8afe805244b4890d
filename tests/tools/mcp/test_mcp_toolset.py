"""McpToolset against real MCP server processes: stdio and streamable HTTP."""

from __future__ import annotations

import asyncio
import os
import signal
import sys
from typing import Any

import pytest

from eventide.errors import ConfigurationError, McpConnectionError, ToolError
from eventide.tools.base_tool import BaseTool
from eventide.tools.mcp_tool import McpTool
from eventide.tools.mcp_toolset import (
    McpToolset,
    StdioConnectionParams,
    StreamableHTTPConnectionParams,
)
from tests.tools.mcp.conftest import HttpMcpServer, stdio_params

ALL_TOOLS = ["add", "shout", "forecast", "refuse", "whoami", "pause", "header"]


async def call(tools: list[BaseTool], name: str, /, **args: Any) -> Any:
    """Run one tool by name (MCP tools need no context unless they take an auth_config)."""
    tool = next(t for t in tools if t.name == name)
    return await tool.run_async(args=args, tool_context=None)  # type: ignore[arg-type]


def process_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


@pytest.mark.slow
async def test_stdio_lists_tools_with_schemas_and_calls_them() -> None:
    """Tools keep their names, descriptions and input JSON Schemas; results map to dicts:
    structured content as is, text as {"result": ...}, a tool error as {"error": ...};
    concurrent calls share the one session."""
    toolset = McpToolset(connection_params=stdio_params())
    try:
        tools = await toolset.get_tools()
        assert [t.name for t in tools] == ALL_TOOLS
        assert all(isinstance(t, McpTool) for t in tools)
        declaration = tools[2].get_declaration()
        assert declaration is not None
        assert declaration.model_dump(exclude_none=True) == {
            "name": "forecast",
            "description": "The weather forecast for a city.",
            "parameters_json_schema": {
                "type": "object",
                "title": "forecastArguments",
                "properties": {
                    "city": {"title": "City", "type": "string"},
                    "days": {"default": 1, "title": "Days", "type": "integer"},
                },
                "required": ["city"],
            },
            "response_json_schema": {
                "type": "object",
                "title": "Forecast",
                "properties": {
                    "city": {"title": "City", "type": "string"},
                    "temp_c": {"title": "Temp C", "type": "number"},
                    "conditions": {
                        "items": {"type": "string"},
                        "title": "Conditions",
                        "type": "array",
                    },
                },
                "required": ["city", "temp_c", "conditions"],
            },
        }
        results = [
            await call(tools, "add", a=2, b=3),
            await call(tools, "shout", text="hi"),
            await call(tools, "forecast", city="Lyon", days=2),
            await call(tools, "refuse", reason="no reason"),
        ]
        assert results == [
            {"result": 5},
            {"result": "HI"},
            {"city": "Lyon", "temp_c": 23.5, "conditions": ["sunny", "sunny"]},
            {"error": "Error executing tool refuse: refused: no reason"},
        ]
        bad = await call(tools, "add", a="two", b=3)
        assert set(bad) == {"error"} and "validation error" in bad["error"]
        # Calls made at once share the toolset's one session (one server process).
        sums = await asyncio.gather(*(call(tools, "add", a=i, b=i) for i in range(8)))
        pids = await asyncio.gather(*(call(tools, "whoami") for _ in range(4)))
        assert sums == [{"result": 2 * i} for i in range(8)]
        assert len({p["result"] for p in pids}) == 1
    finally:
        await toolset.close()


async def test_filter_by_names_and_predicate_and_prefix(http_server: HttpMcpServer) -> None:
    """tool_filter names the server's tools (before the prefix); get_tools lists them under
    their own names and get_tools_with_prefix (what agents offer) joins the prefix with '_';
    the call still reaches the server's own tool name."""
    params = StreamableHTTPConnectionParams(url=http_server.url)
    toolset = McpToolset(
        connection_params=params,
        tool_filter=["add", "shout", "no-such-tool"],
        tool_name_prefix="calc",
    )
    by_predicate = McpToolset(
        connection_params=params,
        tool_filter=lambda tool, _ctx: tool.name.startswith(("who", "sh")),
    )
    try:
        assert [t.name for t in await toolset.get_tools()] == ["add", "shout"]
        tools = await toolset.get_tools_with_prefix()
        assert [t.name for t in tools] == ["calc_add", "calc_shout"]
        declaration = tools[0].get_declaration()
        assert declaration is not None and declaration.name == "calc_add"
        assert await call(tools, "calc_add", a=1, b=1) == {"result": 2}
        assert [t.name for t in await by_predicate.get_tools()] == ["shout", "whoami"]
    finally:
        await toolset.close()
        await by_predicate.close()


@pytest.mark.slow
async def test_stdio_server_killed_is_reconnected_and_close_stops_it() -> None:
    """A killed stdio server is restarted on next use; close() ends the process and its owner
    task (no cancel-scope errors: warnings are errors here), and the toolset can be used again after close (it reconnects). The parameters are given as an
    mcp.StdioServerParameters, as google-adk code does."""
    from mcp import StdioServerParameters

    params = stdio_params()
    toolset = McpToolset(
        connection_params=StdioServerParameters(command=params.command or "", args=params.args),
        tool_filter=["add", "whoami"],
    )
    try:
        tools = await toolset.get_tools()
        first = (await call(tools, "whoami"))["result"]
        os.kill(first, signal.SIGKILL)
        assert await call(tools, "add", a=4, b=4) == {"result": 8}
        second = (await call(tools, "whoami"))["result"]
        assert second != first
        await toolset.close()
        assert not process_alive(second)
        assert not [t for t in asyncio.all_tasks() if t.get_name().startswith("eventide-mcp")]
        await toolset.close()  # idempotent
        third = (await call(await toolset.get_tools(), "whoami"))["result"]
        assert third not in (first, second)
    finally:
        await toolset.close()


async def test_a_server_that_cannot_start_is_a_clear_error() -> None:
    """A missing executable raises McpConnectionError naming the command and what to check."""
    toolset = McpToolset(
        connection_params=StdioConnectionParams(command="/nonexistent/mcp-server", args=["x"])
    )
    with pytest.raises(McpConnectionError) as caught:
        await toolset.get_tools()
    assert "/nonexistent/mcp-server x" in str(caught.value)
    assert "Check that the server starts" in str(caught.value)
    assert isinstance(caught.value, ToolError)
    await toolset.close()


async def test_a_server_that_exits_at_once_is_a_clear_error() -> None:
    """A process that exits instead of speaking MCP fails the handshake with a clear error."""
    toolset = McpToolset(
        connection_params=StdioConnectionParams(command=sys.executable, args=["-c", "pass"])
    )
    with pytest.raises(McpConnectionError, match="Could not connect to the MCP server"):
        await toolset.get_tools()
    await toolset.close()


def test_bad_connection_params_are_rejected() -> None:
    """Wrong parameter types are usage errors, found at construction."""
    with pytest.raises(ConfigurationError, match="StdioConnectionParams"):
        McpToolset(connection_params="python server.py")
    with pytest.raises(ConfigurationError, match="command="):
        McpToolset(connection_params=StdioConnectionParams())


async def test_http_lists_and_calls_with_headers(http_server: HttpMcpServer) -> None:
    """Over streamable HTTP: the same tools, structured results, and the configured
    headers on every request."""
    toolset = McpToolset(
        connection_params=StreamableHTTPConnectionParams(
            url=http_server.url, headers={"X-Api-Key": "k-123"}
        ),
        tool_name_prefix="remote",
    )
    try:
        tools = await toolset.get_tools_with_prefix()
        assert [t.name for t in tools] == [f"remote_{name}" for name in ALL_TOOLS]
        assert await call(tools, "remote_forecast", city="Oslo") == {
            "city": "Oslo",
            "temp_c": 22.5,
            "conditions": ["sunny"],
        }
        assert await call(tools, "remote_header", name="X-Api-Key") == {"result": "k-123"}
        assert await call(tools, "remote_refuse", reason="http") == {
            "error": "Error executing tool refuse: refused: http"
        }
        sums = await asyncio.gather(*(call(tools, "remote_add", a=i, b=1) for i in range(5)))
        assert sums == [{"result": i + 1} for i in range(5)]
    finally:
        await toolset.close()


@pytest.mark.slow
async def test_http_server_down_then_back(own_http_server: HttpMcpServer) -> None:
    """While the server is down, calls fail with McpConnectionError naming the URL; once it
    is back (a new process on the same port), the next call reconnects."""
    toolset = McpToolset(
        connection_params=StreamableHTTPConnectionParams(url=own_http_server.url),
        tool_filter=["whoami"],
    )
    try:
        tools = await toolset.get_tools()
        first = (await call(tools, "whoami"))["result"]
        own_http_server.kill()
        with pytest.raises(McpConnectionError) as caught:
            await call(tools, "whoami")
        assert own_http_server.url in str(caught.value)
        assert caught.value.tool_name == "whoami"
        own_http_server.start()
        second = (await call(tools, "whoami"))["result"]
        assert second != first
    finally:
        await toolset.close()


async def test_http_unreachable_is_a_clear_error() -> None:
    """Nothing listening at the URL: McpConnectionError with the URL in the message."""
    from tests.tools.mcp.conftest import free_port

    url = f"http://127.0.0.1:{free_port()}/mcp"
    toolset = McpToolset(connection_params=StreamableHTTPConnectionParams(url=url, timeout=5))
    with pytest.raises(McpConnectionError, match="127.0.0.1"):
        await toolset.get_tools()
    await toolset.close()


async def test_a_cancelled_call_leaves_the_session_usable(http_server: HttpMcpServer) -> None:
    """Cancelling a caller mid-call (e.g. a timeout around the tool) does not break the
    shared session: the next calls work, and close() is clean with the call abandoned."""
    toolset = McpToolset(
        connection_params=StreamableHTTPConnectionParams(url=http_server.url),
        tool_filter=["pause", "add"],
    )
    try:
        tools = await toolset.get_tools()
        with pytest.raises(TimeoutError):
            await asyncio.wait_for(call(tools, "pause", seconds=30), timeout=0.5)
        assert await call(tools, "add", a=1, b=2) == {"result": 3}
        slow = asyncio.ensure_future(call(tools, "pause", seconds=30))
        assert await call(tools, "add", a=2, b=2) == {"result": 4}
        slow.cancel()
        with pytest.raises(asyncio.CancelledError):
            await slow
    finally:
        await toolset.close()


def test_importing_the_modules_loads_no_sdk() -> None:
    """DESIGN 4: importing eventide, the MCP toolset and the auth package loads neither the
    MCP SDK nor an HTTP client; they load on first connection or exchange."""
    import subprocess

    code = (
        "import sys, eventide, eventide.auth, eventide.tools.mcp_toolset, "
        "eventide.tools.mcp_tool; "
        "print(sorted(m for m in ('mcp', 'httpx', 'httpx2', 'anyio') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
