"""``A2aApps``: every app of an API server as an A2A agent at ``/a2a/{app_name}``.

``eventide api-server APPS_DIR --a2a`` (``create_app(a2a=True)``) adds these routes beside
the ADK routes. Each app's endpoint is made on its first request, on the app's Runner (the
server's session, artifact and memory services), and its card is generated from its agent:
no app is skipped for lacking a hand-written card. A server of one app also serves that
app's card at the host's own ``/.well-known/agent-card.json`` (where clients and the A2A TCK
look first); with several apps that path lists where their cards are.
"""

from __future__ import annotations

import asyncio
from typing import Protocol

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from eventide.a2a.server_app import CARD_PATHS, A2aEndpoint
from eventide.errors import AppLoadError, AppNotFoundError
from eventide.runner import Runner

__all__ = ["A2A_PREFIX", "A2aApps"]


def _base(request: Request) -> str:
    return str(request.base_url).rstrip("/")


A2A_PREFIX = "/a2a"


class _Runners(Protocol):
    async def runner(self, app_name: str) -> Runner: ...

    def names(self) -> list[str]: ...


class A2aApps:
    """The A2A endpoints of the apps a server serves, made on first use.

    Args:
        registry: resolves an app name to its Runner (the server's ``AppRegistry``).
        bearer_auth: the server checks a bearer token; the cards declare it.
        send_wait: see :class:`~eventide.a2a.request_handler.EventideRequestHandler`.
    """

    def __init__(
        self, registry: _Runners, *, bearer_auth: bool = False, send_wait: float | None = None
    ) -> None:
        self._registry = registry
        self._bearer_auth = bearer_auth
        self._send_wait = send_wait
        self._endpoints: dict[str, A2aEndpoint] = {}
        self._lock = asyncio.Lock()

    async def endpoint(self, app_name: str) -> A2aEndpoint:
        """The endpoint of ``app_name``.

        Raises:
            AppNotFoundError: the server serves no such app.
            AppLoadError: the app's code could not be loaded.
        """
        found = self._endpoints.get(app_name)
        if found is not None:
            return found
        runner = await self._registry.runner(app_name)
        async with self._lock:
            found = self._endpoints.get(app_name)
            if found is None:
                found = self._endpoints[app_name] = A2aEndpoint(
                    runner, send_wait=self._send_wait, bearer_auth=self._bearer_auth
                )
        return found

    async def serve_card(self, request: Request) -> Response:
        """GET ``/a2a/{app_name}/.well-known/agent-card.json``."""
        try:
            endpoint = await self.endpoint(request.path_params["app_name"])
        except (AppNotFoundError, AppLoadError) as exc:
            return JSONResponse({"detail": str(exc)}, status_code=404)
        return await endpoint.serve_card(request)

    async def serve_host_card(self, request: Request) -> Response:
        """GET ``/.well-known/agent-card.json``: the card of the server's only app."""
        names = self._registry.names()
        if len(names) != 1:
            paths = [f"{A2A_PREFIX}/{name}{CARD_PATHS[0]}" for name in names]
            return JSONResponse(
                {
                    "detail": f"This server serves {len(names)} A2A agents: read the card of "
                    f"one at {', '.join(paths) or '(none)'}."
                },
                status_code=404,
            )
        endpoint = await self.endpoint(names[0])
        return JSONResponse(endpoint.card_json(f"{_base(request)}{A2A_PREFIX}/{names[0]}"))

    async def serve_rpc(self, request: Request) -> Response:
        """POST ``/a2a/{app_name}``: a JSON-RPC request to the app's agent."""
        try:
            endpoint = await self.endpoint(request.path_params["app_name"])
        except (AppNotFoundError, AppLoadError) as exc:
            error = {"code": -32600, "message": f"{exc} (A2A agents are at /a2a/<app name>)"}
            return JSONResponse({"jsonrpc": "2.0", "id": None, "error": error}, status_code=404)
        return await endpoint.serve_rpc(request)

    def routes(self) -> list[Route]:
        """The routes to add to the server."""
        base = A2A_PREFIX + "/{app_name}"
        routes = [Route(base + path, self.serve_card, methods=["GET"]) for path in CARD_PATHS]
        routes.append(Route(base, self.serve_rpc, methods=["POST"]))
        routes.append(Route(base + "/", self.serve_rpc, methods=["POST"]))
        routes += [Route(path, self.serve_host_card, methods=["GET"]) for path in CARD_PATHS]
        return routes

    async def close(self) -> None:
        """Stop the runs every endpoint drives (before the server closes the Runners)."""
        endpoints = list(self._endpoints.values())
        self._endpoints.clear()
        for endpoint in endpoints:
            await endpoint.close()
