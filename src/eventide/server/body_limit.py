"""``BodyLimitMiddleware``: refuse request bodies over a size limit with a 413, before any
route reads (or stores) them."""

from __future__ import annotations

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from eventide.server.asgi_answers import TrackedSend, send_json_error

__all__ = ["DEFAULT_MAX_BODY_BYTES", "BodyLimitMiddleware"]

# Artifacts arrive base64-encoded inside JSON, so the limit is generous.
DEFAULT_MAX_BODY_BYTES = 32 * 1024 * 1024


class _TooLarge(Exception):
    pass


class BodyLimitMiddleware:
    """Answers 413 to any request whose body is longer than ``max_bytes``.

    A declared ``Content-Length`` over the limit is refused before the body is read (one
    within it is the body's length: the ASGI server reads no more); a chunked body is
    counted as it arrives and refused once it passes the limit (the route sees an error
    instead of the rest of the body, so nothing of it is stored).
    """

    def __init__(self, app: ASGIApp, *, max_bytes: int = DEFAULT_MAX_BODY_BYTES) -> None:
        self.app = app
        self.max_bytes = max_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        for name, value in scope.get("headers", ()):
            if name == b"content-length":
                try:
                    declared = int(value)
                except ValueError:
                    break  # not a length the server framed the body by: counted below
                if declared > self.max_bytes:
                    await self._refuse(send)
                    return
                # The ASGI server frames the body by its Content-Length: nothing to count
                # (and no wrapper around each receive and each frame sent).
                await self.app(scope, receive, send)
                return
        seen = 0
        tracked = TrackedSend(send)

        async def counting_receive() -> Message:
            nonlocal seen
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > self.max_bytes:
                    raise _TooLarge
            return message

        try:
            await self.app(scope, counting_receive, tracked)
        except _TooLarge:
            if not tracked.started:
                await self._refuse(send)

    async def _refuse(self, send: Send) -> None:
        await send_json_error(
            send,
            413,
            f"The request body is larger than this server accepts ({self.max_bytes} bytes); "
            "send a smaller body (large files as several artifacts, or raise the server's "
            "max_body_bytes).",
        )
