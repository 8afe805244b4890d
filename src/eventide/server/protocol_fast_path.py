"""``ProtocolFastPath``: the protocol adapters' turn routes served without FastAPI's router.

The adapters' turn handlers (``POST /v1/chat/completions``, ``POST /v1/responses``,
``POST /ag-ui/{app}``) take a Starlette ``Request`` and return a ``Response``; FastAPI's
routing, dependency solving and per-request exception middleware cost more than a turn's
own HTTP work (as for ``/run`` and ``/run_sse``, see ``run_routes.TurnRoutes``). This ASGI
middleware, inside CORS, auth and the body limit, calls the handler for a matching POST
directly, and answers the exceptions it raises with the app's own handlers, looked up as
Starlette does. Everything else goes on to FastAPI, where the same handlers are registered
(for the OpenAPI spec).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from fastapi.exception_handlers import http_exception_handler
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import Response
from starlette.types import ASGIApp, Receive, Scope, Send

__all__ = ["ProtocolFastPath", "ProtocolHandler"]

ProtocolHandler = Callable[[Request, str], Awaitable[Response]]
"""A turn handler: the request and the path's last segment (the app name, for AG-UI)."""


class ProtocolFastPath:
    """Serves ``POST`` requests to ``exact`` paths and under ``prefixes`` (one more path
    segment) with their handlers; everything else goes to ``app``.

    Args:
        app: the wrapped ASGI app.
        exact: path -> handler.
        prefixes: path prefix (ending in ``/``) -> handler, given the segment after it.
        exception_handlers: the app's own handlers dict, read at each error.
    """

    def __init__(
        self,
        app: ASGIApp,
        *,
        exact: dict[str, ProtocolHandler],
        prefixes: dict[str, ProtocolHandler],
        exception_handlers: dict[Any, Callable[..., Any]],
    ) -> None:
        self.app = app
        self.exact = exact
        self.prefixes = prefixes
        self.handlers = exception_handlers

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        route: ProtocolHandler | None = None
        segment = ""
        # Requests FastAPI's own telemetry follows go through FastAPI (spans name the route).
        if (
            scope["type"] == "http"
            and scope["method"] == "POST"
            and "fastapi.telemetry" not in scope
        ):
            path: str = scope["path"]
            route = self.exact.get(path)
            if route is None:
                for prefix, handler in self.prefixes.items():
                    rest = path[len(prefix) :]
                    if path.startswith(prefix) and rest and "/" not in rest:
                        route, segment = handler, rest
                        break
        if route is None:
            await self.app(scope, receive, send)
            return
        request = Request(scope, receive, send)
        try:
            response = await route(request, segment)
        except Exception as exc:
            response = await self._answer(request, exc)
        await response(scope, receive, send)

    async def _answer(self, request: Request, exc: Exception) -> Response:
        handlers = self.handlers
        handler = None
        if isinstance(exc, HTTPException):
            handler = handlers.get(exc.status_code)
        if handler is None:
            for cls in type(exc).__mro__:
                handler = handlers.get(cls)
                if handler is not None:
                    break
        if handler is not None:
            answered: Response = await handler(request, exc)
            return answered
        if isinstance(exc, HTTPException):
            return await http_exception_handler(request, exc)
        raise exc
