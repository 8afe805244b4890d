"""``McpToolset``: the tools of an MCP server (stdio or streamable HTTP) as Eventide tools.

Needs the ``mcp`` extra (``pip install eventide[mcp]``); the SDK is imported on first
connection, so importing this module is cheap.

Lifecycle. The MCP SDK's client is a stack of anyio context managers (task groups, cancel
scopes) that must be entered and exited by the same task. So each connection has a
dedicated *owner task* that enters the client, publishes it, then waits for a stop signal and
exits it; callers in any task send requests through the published client (the SDK supports
concurrent requests) and never touch its context managers. The connection is made on first
use, reused by every later call, replaced when it breaks (a killed stdio server, an HTTP
server that went away), and ended by ``await toolset.close()``, which the Runner's ``close()``
reaches through ``LlmAgent.close()``.
"""

from __future__ import annotations

import asyncio
import importlib
import logging
import sys
from collections.abc import Awaitable, Callable, Mapping, Sequence
from contextlib import AsyncExitStack
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TextIO, TypeVar, cast

from pydantic import BaseModel, ConfigDict, Field

from eventide.errors import ConfigurationError, McpConnectionError
from eventide.tools.base_toolset import BaseToolset, ToolPredicate

if TYPE_CHECKING:
    from eventide.auth.auth_config import AuthConfig
    from eventide.contexts import ReadonlyContext
    from eventide.tools.base_tool import BaseTool

__all__ = ["MCPToolset", "McpToolset", "StdioConnectionParams", "StreamableHTTPConnectionParams"]

logger = logging.getLogger(__name__)

_T = TypeVar("_T")

# JSON-RPC error codes the SDK reports when the connection itself is gone (not the tool).
_CONNECTION_CLOSED = -32000
_INVALID_REQUEST = -32600


class StdioConnectionParams(BaseModel):
    """An MCP server run as a subprocess, spoken to over its stdin/stdout.

    Give either ``command`` (with ``args``, ``env``, ``cwd``) or ``server_params`` (an
    ``mcp.StdioServerParameters``, as google-adk takes it).

    Attributes:
        command: the executable to start.
        args: its arguments.
        env: extra environment variables, over the SDK's safe default environment.
        cwd: its working directory.
        server_params: an ``mcp.StdioServerParameters`` instead of the fields above.
        timeout: seconds allowed for starting the server and for each listing request.
        call_timeout: seconds allowed for each tool call (None: no limit).
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    command: str | None = None
    args: list[str] = Field(default_factory=list)
    env: dict[str, str] | None = None
    cwd: str | None = None
    server_params: Any | None = None
    timeout: float = 10.0
    call_timeout: float | None = None

    def describe(self) -> str:
        """The command line, for error messages."""
        if self.server_params is not None:
            parts = [self.server_params.command, *self.server_params.args]
        else:
            parts = [self.command or "", *self.args]
        return " ".join(parts)


class StreamableHTTPConnectionParams(BaseModel):
    """An MCP server reached over streamable HTTP.

    Attributes:
        url: the server's MCP endpoint, e.g. ``http://127.0.0.1:8000/mcp``.
        headers: HTTP headers sent with every request (e.g. a fixed API key).
        timeout: seconds allowed to connect, for the handshake and for each listing request.
        sse_read_timeout: seconds to wait for more data on a server-sent-event stream.
        call_timeout: seconds allowed for each tool call (None: no limit).
        terminate_on_close: end the server-side session when the toolset closes.
    """

    url: str
    headers: dict[str, str] | None = None
    timeout: float = 10.0
    sse_read_timeout: float = 300.0
    call_timeout: float | None = None
    terminate_on_close: bool = True

    def describe(self) -> str:
        """The URL, for error messages."""
        return self.url


ConnectionParams = StdioConnectionParams | StreamableHTTPConnectionParams


def _normalize_params(params: Any) -> ConnectionParams:
    if isinstance(params, StdioConnectionParams | StreamableHTTPConnectionParams):
        if isinstance(params, StdioConnectionParams):
            if params.command is None and params.server_params is None:
                raise ConfigurationError(
                    "StdioConnectionParams needs command=... (the server's executable) or "
                    "server_params=mcp.StdioServerParameters(...)."
                )
        return params
    # An ``mcp.StdioServerParameters`` given directly (duck-typed: the SDK is not imported).
    if hasattr(params, "command") and hasattr(params, "args"):
        return StdioConnectionParams(server_params=params)
    raise ConfigurationError(
        "McpToolset(connection_params=...) takes StdioConnectionParams(command=..., args=[...]), "
        "StreamableHTTPConnectionParams(url=...) or mcp.StdioServerParameters; got "
        f"{type(params).__name__}."
    )


def _import_mcp() -> Any:
    try:
        import mcp
    except ImportError as exc:  # pragma: no cover - the extra is installed in development
        raise ConfigurationError(
            "McpToolset needs the MCP SDK: pip install 'eventide[mcp]'."
        ) from exc
    return mcp


_SDK_MODULES = ("mcp", "mcp.client.stdio", "mcp.client.streamable_http", "httpx2")


async def _import_sdk_off_loop() -> None:
    """Import the MCP SDK in a worker thread: it takes seconds, which would stall every other
    task on the event loop if done inline."""
    if all(name in sys.modules for name in _SDK_MODULES):
        return

    def load() -> None:
        _import_mcp()
        for name in _SDK_MODULES:
            importlib.import_module(name)

    await asyncio.to_thread(load)


def _is_connection_lost(exc: BaseException) -> bool:
    """Whether ``exc`` means the connection is gone, so a new one may succeed."""
    error = getattr(exc, "error", None)
    code = getattr(error, "code", None)
    if code == _CONNECTION_CLOSED:
        return True
    # A streamable-HTTP server that restarted no longer knows our session id.
    message = str(getattr(error, "message", ""))
    return code == _INVALID_REQUEST and "Session terminated" in message


@dataclass(slots=True, kw_only=True)
class _Connection:
    """One live MCP client and the task that owns its context managers."""

    loop: asyncio.AbstractEventLoop
    ready: asyncio.Future[Any]
    stop: asyncio.Event = field(default_factory=asyncio.Event)
    task: asyncio.Task[None] | None = None

    def finished(self) -> bool:
        return self.task is not None and self.task.done()


class _McpSession:
    """The MCP connection for one set of HTTP headers (one per toolset without auth)."""

    def __init__(
        self,
        params: ConnectionParams,
        *,
        headers: Mapping[str, str],
        errlog: TextIO | None,
    ) -> None:
        self._params = params
        self._headers = dict(headers)
        self._errlog = errlog
        self._connection: _Connection | None = None
        # Set when the HTTP server last answered 401: the SDK reports that as a generic
        # error, and a tool with an auth_config must tell it apart to ask for a new credential.
        self.unauthorized = False

    @property
    def server(self) -> str:
        return self._params.describe()

    # --- the owner task ---
    async def _open_transport(self, stack: AsyncExitStack) -> Any:
        """The SDK transport for the parameters (HTTP: its httpx client entered on ``stack``)."""
        params = self._params
        if isinstance(params, StdioConnectionParams):
            from mcp import StdioServerParameters
            from mcp.client.stdio import stdio_client

            server_params = params.server_params or StdioServerParameters(
                command=params.command or "", args=params.args, env=params.env, cwd=params.cwd
            )
            return stdio_client(server_params, errlog=self._errlog or sys.stderr)
        import httpx2
        from mcp.client.streamable_http import streamable_http_client

        http_client = await stack.enter_async_context(
            httpx2.AsyncClient(
                headers={**(params.headers or {}), **self._headers},
                timeout=httpx2.Timeout(params.timeout, read=params.sse_read_timeout),
                event_hooks={"response": [self._note_status]},
            )
        )
        return streamable_http_client(
            params.url, http_client=http_client, terminate_on_close=params.terminate_on_close
        )

    async def _note_status(self, response: Any) -> None:
        if response.status_code == 401:
            self.unauthorized = True
        elif response.status_code < 300:
            self.unauthorized = False

    async def _own(self, connection: _Connection) -> None:
        """Enter the client, publish it, wait for the stop signal, exit it: all in one task."""
        from mcp import Client

        ready = connection.ready
        try:
            async with AsyncExitStack() as stack:
                transport = await self._open_transport(stack)
                client = await stack.enter_async_context(
                    Client(transport, read_timeout_seconds=self._params.timeout)
                )
                ready.set_result(client)
                await connection.stop.wait()
        except Exception as exc:
            if not ready.done():
                ready.set_exception(exc)
            else:
                # The connection broke while in use (the server died); the next request
                # sees CONNECTION_CLOSED and reconnects. Logged for the operator.
                logger.info("MCP connection to %s ended: %r", self.server, exc)
        finally:
            if not ready.done():  # cancelled before connecting: callers must not wait forever
                ready.set_exception(RuntimeError("the connection task ended before connecting"))

    def _current(self) -> _Connection:
        loop = asyncio.get_running_loop()
        connection = self._connection
        if connection is not None and connection.loop is not loop:
            # Used from a new event loop (e.g. the sync Runner.run after asyncio.run): the old
            # loop's tasks and pipes cannot be driven from here, so start afresh.
            logger.warning(
                "MCP connection to %s was made on another event loop; reconnecting.", self.server
            )
            connection = None
        if connection is None or connection.finished():
            connection = _Connection(loop=loop, ready=loop.create_future())
            # Mark a failure as seen even when every waiting caller was cancelled, so asyncio
            # does not log "exception was never retrieved".
            connection.ready.add_done_callback(_consume_exception)
            connection.task = loop.create_task(
                self._own(connection), name=f"eventide-mcp {self.server}"
            )
            self._connection = connection
        return connection

    async def _client(self, tool_name: str) -> tuple[_Connection, Any]:
        await _import_sdk_off_loop()
        connection = self._current()
        try:
            # Shielded: a cancelled caller must not cancel the owner task mid-handshake; the
            # connection it started is kept for the next caller.
            client = await asyncio.shield(connection.ready)
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            raise McpConnectionError(
                f"Could not connect to the MCP server {self.server!r}: "
                f"{type(exc).__name__}: {_describe(exc)}. Check that the server starts (run the "
                "command or open the URL yourself) and speaks MCP.",
                server=self.server,
                tool_name=tool_name,
            ) from exc
        return connection, client

    async def _retire(self, connection: _Connection) -> None:
        """Stop ``connection``'s owner task and wait for it to exit its context managers."""
        if self._connection is connection:
            self._connection = None
        connection.stop.set()
        task = connection.task
        if task is None or task.done() or connection.loop is not asyncio.get_running_loop():
            return
        await asyncio.shield(task)

    async def request(
        self, tool_name: str, send: Callable[[Any], Awaitable[_T]], *, what: str
    ) -> _T:
        """Run ``send(client)``; on a lost connection reconnect and try once more.

        A call retried this way may run twice on the server if it died after running it and
        before answering; that is the price of surviving a restarted server.
        """
        for attempt in (1, 2):
            connection, client = await self._client(tool_name)
            try:
                return await send(client)
            except Exception as exc:
                if not _is_connection_lost(exc) and not connection.finished():
                    raise
                await self._retire(connection)
                if attempt == 2:
                    raise McpConnectionError(
                        f"The connection to the MCP server {self.server!r} was lost during "
                        f"{what}, and again after reconnecting: {_describe(exc)}. Check that "
                        "the server is running.",
                        server=self.server,
                        tool_name=tool_name,
                    ) from exc
                logger.info("MCP connection to %s lost (%r); reconnecting.", self.server, exc)
        raise AssertionError("unreachable")  # pragma: no cover

    async def close(self) -> None:
        connection = self._connection
        if connection is not None:
            await self._retire(connection)


def _consume_exception(future: asyncio.Future[Any]) -> None:
    if not future.cancelled():
        future.exception()


def _describe(exc: BaseException) -> str:
    if isinstance(exc, BaseExceptionGroup):
        group = cast("BaseExceptionGroup[BaseException]", exc)
        return "; ".join(_describe(e) for e in group.exceptions)
    return str(exc) or type(exc).__name__


class McpToolset(BaseToolset):
    """The tools of one MCP server, offered to an agent as Eventide tools.

    Example::

        toolset = McpToolset(
            connection_params=StdioConnectionParams(command="python", args=["server.py"]),
            tool_filter=["add", "echo"],
            tool_name_prefix="calc",  # the model sees calc_add, calc_echo
        )
        agent = LlmAgent(name="assistant", model="gemini-2.5-flash", tools=[toolset])

    Args:
        connection_params: ``StdioConnectionParams``, ``StreamableHTTPConnectionParams`` or an
            ``mcp.StdioServerParameters``.
        tool_filter: the server's tool names to offer (before the prefix), or a predicate
            ``(tool, context) -> bool`` that sees the tool under its server name.
        tool_name_prefix: prepended with ``_`` to every tool name the model sees.
        errlog: where a stdio server's stderr goes (``sys.stderr`` by default).
        auth_config: a credential the server needs (HTTP only). Each tool asks the user
            for it on first use (see ``ToolContext.request_credential``) and sends it as a
            header: ``Authorization: Bearer <token>`` for HTTP bearer and OAuth2, the
            configured header for API keys.

    The toolset holds one MCP session (one per distinct credential with ``auth_config``),
    made on first use; ``await toolset.close()`` ends it.
    """

    def __init__(
        self,
        *,
        connection_params: ConnectionParams | Any,
        tool_filter: Sequence[str] | ToolPredicate | None = None,
        tool_name_prefix: str | None = None,
        errlog: TextIO | None = None,
        auth_config: AuthConfig | None = None,
    ) -> None:
        super().__init__(tool_filter=tool_filter, tool_name_prefix=tool_name_prefix)
        self.connection_params = _normalize_params(connection_params)
        if auth_config is not None and isinstance(self.connection_params, StdioConnectionParams):
            raise ConfigurationError(
                "McpToolset(auth_config=...) sends the credential as an HTTP header, so it needs "
                "StreamableHTTPConnectionParams; a stdio server takes secrets through env=...."
            )
        self.auth_config = auth_config
        self._errlog = errlog
        self._sessions: dict[tuple[tuple[str, str], ...], _McpSession] = {}

    def _session(self, headers: Mapping[str, str] | None = None) -> _McpSession:
        key = tuple(sorted((headers or {}).items()))
        session = self._sessions.get(key)
        if session is None:
            session = self._sessions[key] = _McpSession(
                self.connection_params, headers=headers or {}, errlog=self._errlog
            )
        return session

    async def get_tools(self, readonly_context: ReadonlyContext | None = None) -> list[BaseTool]:
        """List the server's tools (connecting on first use), filtered and prefixed.

        Raises:
            McpConnectionError: the server cannot be started or reached.
        """
        from eventide.tools.mcp_tool import McpTool

        session = self._session(await self._listing_headers(readonly_context))

        async def list_all(client: Any) -> list[Any]:
            listed: list[Any] = []
            cursor: str | None = None
            while True:
                page = await client.list_tools(cursor=cursor)
                listed.extend(page.tools)
                cursor = page.next_cursor
                if not cursor:
                    return listed

        mcp_tools = await session.request("", list_all, what="listing its tools")
        tools: list[BaseTool] = []
        for mcp_tool in mcp_tools:
            tool = McpTool(mcp_tool=mcp_tool, toolset=self)
            if self.is_tool_selected(tool, readonly_context):
                tools.append(tool)
        return tools

    async def _listing_headers(
        self, readonly_context: ReadonlyContext | None
    ) -> dict[str, str] | None:
        """With ``auth_config``, list with the user's credential when there is one already (a
        server may require it for listing too); otherwise without."""
        if self.auth_config is None or readonly_context is None:
            return None
        from eventide.auth import auth_headers, load_credential

        credential = await load_credential(readonly_context.invocation_context, self.auth_config)
        return auth_headers(self.auth_config, credential) if credential is not None else None

    async def call_tool(
        self,
        name: str,
        arguments: dict[str, Any],
        *,
        headers: Mapping[str, str] | None = None,
    ) -> Any:
        """Call the server's tool ``name`` (its server name) and return the SDK's result.

        Raises:
            McpConnectionError: the server cannot be reached, even after reconnecting once.
        """
        session = self._session(headers)
        call_timeout = self.connection_params.call_timeout

        async def call(client: Any) -> Any:
            return await client.call_tool(name, arguments, read_timeout_seconds=call_timeout)

        return await session.request(name, call, what=f"the call of tool {name!r}")

    def credential_refused(self, headers: Mapping[str, str] | None) -> bool:
        """Whether the HTTP server answered 401 to the session that sends ``headers``."""
        session = self._sessions.get(tuple(sorted((headers or {}).items())))
        return session is not None and session.unauthorized

    async def forget_session(self, headers: Mapping[str, str] | None) -> None:
        """Close and drop the session that sends ``headers`` (e.g. a refused credential)."""
        session = self._sessions.pop(tuple(sorted((headers or {}).items())), None)
        if session is not None:
            await session.close()

    async def close(self) -> None:
        """End every MCP session (stops stdio servers); the toolset reconnects if used again."""
        sessions = list(self._sessions.values())
        self._sessions.clear()
        for session in sessions:
            await session.close()


MCPToolset = McpToolset
"""The same class under google-adk's other spelling."""
