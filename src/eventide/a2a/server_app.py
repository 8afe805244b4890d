"""Serving an agent over A2A: :func:`to_a2a` (one agent, its own ASGI app) and
:class:`A2aApps` (every app of ``eventide api-server --a2a`` at ``/a2a/{app_name}``).

Each served agent has a JSON-RPC endpoint (the official SDK's dispatcher, A2A 1.0 and 0.3
method names, in front of :class:`~eventide.a2a.request_handler.EventideRequestHandler`)
and its agent card at ``<endpoint>/.well-known/agent-card.json`` (and the 0.3 name
``agent.json``). The card's URL is the one the client reached the server by, unless one is
given. A request body over the size limit gets a JSON-RPC error, not a server error.
"""

from __future__ import annotations

import json
from collections.abc import AsyncGenerator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from pathlib import Path
from typing import Any, cast

from a2a.server.request_handlers.response_helpers import agent_card_to_dict
from a2a.server.routes.jsonrpc_dispatcher import JsonRpcDispatcher
from a2a.types import a2a_pb2
from google.protobuf import json_format
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route
from starlette.types import Message, Receive

from eventide.a2a.agent_card import build_agent_card
from eventide.a2a.request_handler import EventideRequestHandler
from eventide.agents.base_agent import BaseAgent
from eventide.apps.app import App
from eventide.artifacts.base_artifact_service import BaseArtifactService
from eventide.artifacts.in_memory_artifact_service import InMemoryArtifactService
from eventide.errors import UsageError
from eventide.memory.base_memory_service import BaseMemoryService
from eventide.runner import Runner
from eventide.sessions.base_session_service import BaseSessionService
from eventide.sessions.in_memory_session_service import InMemorySessionService

__all__ = ["CARD_PATHS", "DEFAULT_MAX_MESSAGE_BYTES", "A2aEndpoint", "to_a2a"]

CARD_PATHS = ("/.well-known/agent-card.json", "/.well-known/agent.json")
"""Where an agent's card is served, under its endpoint (A2A 1.0's name, then 0.3's)."""

DEFAULT_MAX_MESSAGE_BYTES = 10 * 1024 * 1024
"""Request bodies over this size get a JSON-RPC error (-32600) before they are parsed."""


class A2aEndpoint:
    """One agent's A2A endpoint: the request handler, the SDK's dispatcher and the card.

    Args:
        runner: the Runner of the agent's app.
        send_wait: see :class:`EventideRequestHandler`.
        bearer_auth: the card declares a bearer token (the token is checked in front of
            the endpoint, by the server's auth middleware).
        agent_card: serve this card instead of one generated from the agent.
        url: the endpoint's public URL for the generated card (default: the URL the
            request for the card came to, without its card path).
        version: the agent's version in the generated card.
        max_message_bytes: see :data:`DEFAULT_MAX_MESSAGE_BYTES`.
    """

    def __init__(
        self,
        runner: Runner,
        *,
        send_wait: float | None = None,
        bearer_auth: bool = False,
        agent_card: a2a_pb2.AgentCard | None = None,
        url: str | None = None,
        version: str = "0.0.1",
        max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES,
    ) -> None:
        self.runner = runner
        self.handler = EventideRequestHandler(runner, send_wait=send_wait)
        self.dispatcher = JsonRpcDispatcher(request_handler=self.handler, enable_v0_3_compat=True)
        self._bearer_auth = bearer_auth
        self._card = agent_card
        self._url = url
        self._version = version
        self.max_message_bytes = max_message_bytes

    def card(self, endpoint_url: str) -> a2a_pb2.AgentCard:
        """The agent card, naming ``endpoint_url`` unless a URL or a card was given."""
        if self._card is not None:
            return self._card
        return build_agent_card(
            self.runner.agent,
            url=self._url or endpoint_url,
            version=self._version,
            bearer_auth=self._bearer_auth,
        )

    def card_json(self, endpoint_url: str) -> dict[str, Any]:
        """The agent card as JSON (A2A 1.0 fields with 0.3's beside them)."""
        return agent_card_to_dict(self.card(endpoint_url))

    async def serve_card(self, request: Request) -> Response:
        """GET ``<endpoint>/.well-known/agent-card.json``."""
        url = str(request.url.replace(query="", fragment=""))
        for path in CARD_PATHS:
            url = url.removesuffix(path)
        return JSONResponse(self.card_json(url))

    async def serve_rpc(self, request: Request) -> Response:
        """POST ``<endpoint>``: one JSON-RPC request (a JSON answer, or an SSE stream)."""
        body = await _read_limited(request, self.max_message_bytes)
        if body is None:
            return _too_large(self.max_message_bytes)
        response = await self.dispatcher.handle_requests(_replaying(request, body))
        if isinstance(response, JSONResponse) and _names_streaming_method(body):
            return _error_stream(response)
        return response

    async def close(self) -> None:
        """Stop the runs this endpoint drives."""
        await self.handler.close()


async def _read_limited(request: Request, limit: int) -> bytes | None:
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > limit:
        return None
    chunks: list[bytes] = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            return None
        chunks.append(chunk)
    return b"".join(chunks)


def _replaying(request: Request, body: bytes) -> Request:
    sent = False

    async def receive() -> Message:
        nonlocal sent
        if sent:
            return {"type": "http.disconnect"}
        sent = True
        return {"type": "http.request", "body": body, "more_body": False}

    replay: Receive = receive
    return Request(request.scope, replay)


_STREAMING_METHODS = (
    "SendStreamingMessage",
    "SubscribeToTask",
    "message/stream",
    "tasks/resubscribe",
)


def _names_streaming_method(body: bytes) -> bool:
    """Whether a request asked for a stream (read only when it got a JSON answer: an error)."""
    if not any(name.encode() in body for name in _STREAMING_METHODS):
        return False
    try:
        request: object = json.loads(body)
    except ValueError:
        return False
    if not isinstance(request, dict):
        return False
    method = cast("dict[str, object]", request).get("method")
    return method in _STREAMING_METHODS


def _error_stream(response: JSONResponse) -> Response:
    """A streaming call refused before its stream began, answered as a stream holding the
    error, as errors during a stream are: a streaming client reads it the same way."""
    from sse_starlette.sse import EventSourceResponse

    data = bytes(response.body).decode()

    async def events() -> AsyncGenerator[dict[str, str], None]:
        yield {"event": "error", "data": data}

    return EventSourceResponse(events())


def _too_large(limit: int) -> Response:
    error = {
        "code": -32600,
        "message": f"The request is larger than this agent accepts ({limit} bytes): send a "
        "smaller message (large files as URLs, not inline bytes).",
    }
    return JSONResponse({"jsonrpc": "2.0", "id": None, "error": error}, status_code=413)


def endpoint_routes(prefix: str, endpoint: A2aEndpoint) -> list[Route]:
    """The routes of one endpoint under ``prefix`` (``""`` for the root)."""
    base = prefix.rstrip("/")
    routes = [Route(base + path, endpoint.serve_card, methods=["GET"]) for path in CARD_PATHS]
    routes.append(Route(base or "/", endpoint.serve_rpc, methods=["POST"]))
    if base:
        routes.append(Route(base + "/", endpoint.serve_rpc, methods=["POST"]))
    return routes


def _load_card(agent_card: a2a_pb2.AgentCard | str | Path | None) -> a2a_pb2.AgentCard | None:
    if agent_card is None or isinstance(agent_card, a2a_pb2.AgentCard):
        return agent_card
    path = Path(agent_card)
    try:
        card = a2a_pb2.AgentCard()
        json_format.ParseDict(
            json.loads(path.read_text(encoding="utf-8")), card, ignore_unknown_fields=True
        )
        return card
    except (OSError, ValueError, json_format.ParseError) as exc:
        raise UsageError(
            f"Cannot read the agent card {str(path)!r}: {exc}. Pass an A2A agent card (JSON) "
            "or leave agent_card out to generate one from the agent."
        ) from exc


def to_a2a(
    agent_or_app: BaseAgent | App,
    *,
    host: str | None = None,
    port: int = 8000,
    protocol: str = "http",
    rpc_path: str = "",
    agent_card: a2a_pb2.AgentCard | str | Path | None = None,
    runner: Runner | None = None,
    session_service: BaseSessionService | None = None,
    artifact_service: BaseArtifactService | None = None,
    memory_service: BaseMemoryService | None = None,
    auth_token: str | None = None,
    send_wait: float | None = None,
    version: str = "0.0.1",
    max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES,
    lifespan: Callable[[Starlette], AbstractAsyncContextManager[None]] | None = None,
) -> Starlette:
    """Serve an agent (or an ``App``) over A2A: an ASGI app to run with uvicorn.

    The JSON-RPC endpoint is at ``/{rpc_path}`` and the agent card under it at
    ``.well-known/agent-card.json``. Tasks live in the sessions of ``session_service``
    (in memory by default): give several processes one database and any of them answers
    for any task.

    Args:
        agent_or_app: the root agent, or an ``App`` (its plugins, resumability and name).
        host: the host named in the generated card's URL, with ``port`` and ``protocol``;
            by default the card names the URL the client reached it by.
        port: see ``host``.
        protocol: see ``host``.
        rpc_path: serve under this path (e.g. ``"support"``) instead of the root.
        agent_card: serve this card (an ``AgentCard`` or the path of its JSON) instead of
            generating one.
        runner: run the agent with this Runner (its services) instead of a new one.
        session_service: the sessions of a new Runner (default: in memory).
        artifact_service: its artifacts (default: in memory).
        memory_service: its memory (default: none).
        auth_token: require ``Authorization: Bearer <auth_token>`` on every call (the card
            stays readable, and declares the scheme).
        send_wait: how long a blocking ``message/send`` waits before answering with the
            task still working (None: until it ends or pauses).
        version: the agent's version in the generated card.
        max_message_bytes: request bodies over this size get a JSON-RPC error.
        lifespan: your own start-up/shutdown code, run inside the app's.

    Raises:
        UsageError: the agent card file cannot be read.
    """
    if runner is None:
        sessions = session_service or InMemorySessionService()
        artifacts = artifact_service or InMemoryArtifactService()
        if isinstance(agent_or_app, App):
            runner = Runner(
                app=agent_or_app,
                session_service=sessions,
                artifact_service=artifacts,
                memory_service=memory_service,
            )
        else:
            runner = Runner(
                app_name=agent_or_app.name,
                agent=agent_or_app,
                session_service=sessions,
                artifact_service=artifacts,
                memory_service=memory_service,
            )
    prefix = "/" + rpc_path.strip("/") if rpc_path.strip("/") else ""
    url = f"{protocol}://{host}:{port}{prefix}" if host is not None else None
    endpoint = A2aEndpoint(
        runner,
        send_wait=send_wait,
        bearer_auth=auth_token is not None,
        agent_card=_load_card(agent_card),
        url=url,
        version=version,
        max_message_bytes=max_message_bytes,
    )

    @asynccontextmanager
    async def app_lifespan(app: Starlette) -> AsyncGenerator[None, None]:
        try:
            if lifespan is not None:
                async with lifespan(app):
                    yield
            else:
                yield
        finally:
            await endpoint.close()
            await runner.close()

    starlette = Starlette(routes=endpoint_routes(prefix, endpoint), lifespan=app_lifespan)
    starlette.state.eventide_a2a = endpoint
    if auth_token is not None:
        from eventide.server.bearer_auth import BearerAuthMiddleware

        starlette.add_middleware(
            BearerAuthMiddleware,
            token=auth_token,
            open_paths=tuple(prefix + path for path in CARD_PATHS),
        )
    return starlette
