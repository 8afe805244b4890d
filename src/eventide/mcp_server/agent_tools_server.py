"""An MCP server (the official ``mcp`` SDK's) whose tools are the root agents of apps.

- Tools: one per app, named after the app, described by the root agent's ``description``.
  Arguments: ``request`` (the user's message, required) and ``session_id`` (optional: the
  session to continue, created when missing; without it each call is a new session). The
  result's text is the agent's answer; its structured content is
  ``{"response": ..., "session_id": ...}`` so a client can go on in the same session; the
  artifacts the turn saved are listed as resource links.
- Progress: a ``notifications/progress`` per committed event (when the client asked for
  progress), saying which agent did what.
- Resources: the artifacts of the server's user's sessions, at
  ``eventide://apps/{app}/sessions/{session}/artifacts/{filename}`` (latest version).
- Errors: an unknown tool, a missing ``request``, a failing agent or a model's error event
  is a tool result with ``isError`` and a text saying what happened; what the turn committed
  before stays.

The server keeps nothing of its own: a conversation is a session of the server's user
(``"mcp"`` unless given).
"""

from __future__ import annotations

import base64
import logging
from collections.abc import AsyncGenerator
from typing import Any
from urllib.parse import quote, unquote

import mcp_types as mcp
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel.server import Server

from eventide import __version__, types
from eventide.errors import AppLoadError, AppNotFoundError
from eventide.events import Event
from eventide.server.app_registry import AppRegistry
from eventide.server.protocol_turns import TurnInput, collect_turn, open_session, turn_events

__all__ = ["DEFAULT_USER", "build_mcp_server"]

logger = logging.getLogger("eventide.mcp_server")

DEFAULT_USER = "mcp"
_SCHEME = "eventide://apps/"
_INPUT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "request": {"type": "string", "description": "What to ask the agent."},
        "session_id": {
            "type": "string",
            "description": "Continue this session (the session_id of an earlier answer); "
            "omit it to start a new one.",
        },
    },
    "required": ["request"],
}


def build_mcp_server(registry: AppRegistry, *, user_id: str = DEFAULT_USER) -> Server[Any]:
    """An MCP server serving every app of ``registry`` as a tool (see the module docstring).

    Run it with :func:`eventide.mcp_server.serve_stdio` or
    :func:`eventide.mcp_server.serve_http`.
    """
    handlers = _Handlers(registry, user_id)
    return Server(
        "eventide",
        version=__version__,
        instructions="Each tool is an agent: send it a request; pass the session_id of an "
        "earlier answer to go on with the same conversation.",
        on_list_tools=handlers.list_tools,
        on_call_tool=handlers.call_tool,
        on_list_resources=handlers.list_resources,
        on_read_resource=handlers.read_resource,
    )


class _Handlers:
    def __init__(self, registry: AppRegistry, user_id: str) -> None:
        self.registry = registry
        self.user_id = user_id

    async def list_tools(
        self, ctx: ServerRequestContext[Any], params: mcp.PaginatedRequestParams | None
    ) -> mcp.ListToolsResult:
        tools: list[mcp.Tool] = []
        for name in self.registry.names():
            try:
                runner = await self.registry.runner(name)
            except AppLoadError:
                logger.exception("App %r will not load; it is left out of the tools", name)
                continue
            agent = runner.agent
            description = agent.description or f"The agent {agent.name!r} of the app {name!r}."
            tools.append(mcp.Tool(name=name, description=description, input_schema=_INPUT_SCHEMA))
        return mcp.ListToolsResult(tools=tools)

    async def call_tool(
        self, ctx: ServerRequestContext[Any], params: mcp.CallToolRequestParams
    ) -> mcp.CallToolResult:
        args = params.arguments or {}
        request = args.get("request")
        if not isinstance(request, str) or not request:
            return _error("The argument 'request' is required: give the message for the agent.")
        session_arg = args.get("session_id")
        if session_arg is not None and not isinstance(session_arg, str):
            return _error("The argument 'session_id' must be a string (or left out).")
        try:
            runner = await self.registry.runner(params.name)
        except AppNotFoundError as exc:
            return _error(f"No tool named {params.name!r}: {exc}")
        except AppLoadError as exc:
            return _error(str(exc))
        session, _ = await open_session(runner, self.user_id, session_arg or None)
        session_id = session.id
        message = types.Content(role="user", parts=[types.Part(text=request)])
        turn = TurnInput(user_id=self.user_id, session=session, new_message=message)
        events = turn_events(runner, turn)
        progress = _Progress(ctx)
        collected, failure = await collect_turn(
            _reporting(events, progress), label=f"MCP call of app {params.name!r}"
        )
        answer = "\n\n".join(e.text for e in collected if e.text and not e.partial)
        links = _artifact_links(runner.app_name, session_id, collected)
        model_error = next((e for e in collected if e.error_code), None)
        if failure is not None or model_error is not None:
            reason = (
                f"{model_error.error_code}: {model_error.error_message}"
                if model_error is not None
                else f"{type(failure).__name__}: {failure}"
            )
            text = f"The agent failed: {reason}. Session {session_id} keeps what it did before."
            return mcp.CallToolResult(
                content=[mcp.TextContent(type="text", text=text), *links],
                structured_content={"response": answer, "session_id": session_id, "error": reason},
                is_error=True,
            )
        return mcp.CallToolResult(
            content=[mcp.TextContent(type="text", text=answer), *links],
            structured_content={"response": answer, "session_id": session_id},
        )

    async def list_resources(
        self, ctx: ServerRequestContext[Any], params: mcp.PaginatedRequestParams | None
    ) -> mcp.ListResourcesResult:
        resources: list[mcp.Resource] = []
        for name in self.registry.names():
            try:
                runner = await self.registry.runner(name)
            except AppLoadError:
                continue
            artifacts = runner.artifact_service
            if artifacts is None:
                continue
            listed = await runner.session_service.list_sessions(app_name=name, user_id=self.user_id)
            for session in listed.sessions:
                keys = await artifacts.list_artifact_keys(
                    app_name=name, user_id=self.user_id, session_id=session.id
                )
                for filename in keys:
                    resources.append(
                        mcp.Resource(
                            name=filename,
                            uri=_artifact_uri(name, session.id, filename),
                            description=f"Artifact of app {name!r}, session {session.id}",
                        )
                    )
        return mcp.ListResourcesResult(resources=resources)

    async def read_resource(
        self, ctx: ServerRequestContext[Any], params: mcp.ReadResourceRequestParams
    ) -> mcp.ReadResourceResult:
        uri = str(params.uri)
        parsed = _parse_artifact_uri(uri)
        if parsed is None:
            raise ValueError(
                f"Unknown resource {uri!r}: this server's resources are "
                f"{_SCHEME}APP/sessions/SESSION/artifacts/FILENAME."
            )
        app_name, session_id, filename = parsed
        try:
            runner = await self.registry.runner(app_name)
        except AppNotFoundError as exc:
            raise ValueError(f"Unknown resource {uri!r}: {exc}") from exc
        artifacts = runner.artifact_service
        part = (
            await artifacts.load_artifact(
                app_name=app_name, user_id=self.user_id, session_id=session_id, filename=filename
            )
            if artifacts is not None
            else None
        )
        if part is None:
            raise ValueError(f"Unknown resource {uri!r}: no such artifact.")
        if part.text is not None:
            return mcp.ReadResourceResult(
                contents=[mcp.TextResourceContents(uri=uri, mime_type="text/plain", text=part.text)]
            )
        blob = part.inline_data
        data = blob.data if blob is not None and blob.data is not None else b""
        mime_type = blob.mime_type if blob is not None else None
        return mcp.ReadResourceResult(
            contents=[
                mcp.BlobResourceContents(
                    uri=uri,
                    mime_type=mime_type or "application/octet-stream",
                    blob=base64.b64encode(data).decode(),
                )
            ]
        )


class _Progress:
    """Sends a progress notification per committed event (a no-op unless asked for)."""

    def __init__(self, ctx: ServerRequestContext[Any]) -> None:
        self.ctx = ctx
        self.count = 0

    async def report(self, event: Event) -> None:
        self.count += 1
        await self.ctx.session.report_progress(self.count, None, _describe(event))


async def _reporting(
    events: AsyncGenerator[Event, None], progress: _Progress
) -> AsyncGenerator[Event, None]:
    async for event in events:
        if not event.partial:
            await progress.report(event)
        yield event


def _describe(event: Event) -> str:
    calls = event.get_function_calls()
    if calls:
        return f"{event.author}: calling {', '.join(c.name or '?' for c in calls)}"
    responses = event.get_function_responses()
    if responses:
        return f"{event.author}: {', '.join(r.name or '?' for r in responses)} answered"
    if event.text:
        return f"{event.author}: answered"
    return f"{event.author}: working"


def _artifact_links(app_name: str, session_id: str, events: list[Event]) -> list[mcp.ResourceLink]:
    names: list[str] = []
    for event in events:
        for filename in event.actions.artifact_delta or {}:
            if filename not in names:
                names.append(filename)
    return [
        mcp.ResourceLink(
            type="resource_link", name=name, uri=_artifact_uri(app_name, session_id, name)
        )
        for name in names
    ]


def _artifact_uri(app_name: str, session_id: str, filename: str) -> str:
    parts = (quote(app_name, safe=""), quote(session_id, safe=""), quote(filename, safe=""))
    return f"{_SCHEME}{parts[0]}/sessions/{parts[1]}/artifacts/{parts[2]}"


def _parse_artifact_uri(uri: str) -> tuple[str, str, str] | None:
    if not uri.startswith(_SCHEME):
        return None
    pieces = uri[len(_SCHEME) :].split("/")
    if len(pieces) != 5 or pieces[1] != "sessions" or pieces[3] != "artifacts":
        return None
    return unquote(pieces[0]), unquote(pieces[2]), unquote(pieces[4])


def _error(text: str) -> mcp.CallToolResult:
    return mcp.CallToolResult(content=[mcp.TextContent(type="text", text=text)], is_error=True)
