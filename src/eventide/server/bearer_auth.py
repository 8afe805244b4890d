"""``BearerAuthMiddleware``: an optional shared bearer token in front of the API.

A pure ASGI middleware (it never buffers a body, so streamed responses pass through as they
are produced). CORS preflight requests and the open paths (health, the dev UI's static
files, the API docs) pass without a token.
"""

from __future__ import annotations

import hmac
from collections.abc import Iterable

from starlette.types import ASGIApp, Receive, Scope, Send

from eventide.server.asgi_answers import send_json_error

__all__ = ["BearerAuthMiddleware"]


class BearerAuthMiddleware:
    """Answers 401 to HTTP requests without ``Authorization: Bearer <token>``, and refuses
    websocket handshakes without it (``/run_live``).

    Args:
        app: the wrapped ASGI app.
        token: the token clients must present.
        open_paths: exact paths served without a token.
        open_prefixes: path prefixes served without a token.
        open_suffixes: path endings served without a token (an A2A agent's card under
            each ``/a2a/{app}``).
    """

    def __init__(
        self,
        app: ASGIApp,
        *,
        token: str,
        open_paths: Iterable[str] = (),
        open_prefixes: Iterable[str] = (),
        open_suffixes: Iterable[str] = (),
    ) -> None:
        if not token:
            raise ValueError("auth token must not be empty; pass None to turn auth off")
        self.app = app
        self._expected = f"Bearer {token}".encode()
        self._open_paths = frozenset(open_paths)
        self._open_prefixes = tuple(open_prefixes)
        self._open_suffixes = tuple(open_suffixes)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        kind = scope["type"]
        if kind not in ("http", "websocket") or self._is_open(scope) or self._authorized(scope):
            await self.app(scope, receive, send)
            return
        if kind == "websocket":  # refused before the handshake: the client sees a 403
            reason = "Missing or wrong bearer token"
            await send({"type": "websocket.close", "code": 1008, "reason": reason})
            return
        await send_json_error(
            send,
            401,
            "Missing or wrong bearer token: send the header 'Authorization: Bearer <token>' "
            "with the token the server was started with.",
            [(b"www-authenticate", b'Bearer realm="eventide"')],
        )

    def _is_open(self, scope: Scope) -> bool:
        if scope.get("method") == "OPTIONS":
            return True  # CORS preflights carry no credentials by design
        path: str = scope["path"]
        return (
            path in self._open_paths
            or path.startswith(self._open_prefixes)
            or (bool(self._open_suffixes) and path.endswith(self._open_suffixes))
        )

    def _authorized(self, scope: Scope) -> bool:
        for name, value in scope["headers"]:
            if name == b"authorization":
                # Constant-time comparison: the token must not leak through timing.
                return hmac.compare_digest(value, self._expected)
        return False
