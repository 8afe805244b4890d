"""What the pure ASGI middlewares (auth, body limit, browser guard) share: a JSON error
answer sent straight to ``send``, and a ``send`` that remembers whether the response began.

They answer below FastAPI, where no exception handler runs, so they write the bytes
themselves; once a route has started its response, a late refusal can only be dropped.
"""

from __future__ import annotations

import json
from collections.abc import Iterable

from starlette.types import Message, Send

__all__ = ["TrackedSend", "send_json_error"]


async def send_json_error(
    send: Send, status: int, detail: str, headers: Iterable[tuple[bytes, bytes]] = ()
) -> None:
    """Answer ``{"detail": detail}`` with ``status``, as FastAPI's own errors read."""
    body = json.dumps({"detail": detail}).encode()
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(body)).encode()),
                *headers,
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})


class TrackedSend:
    """``send`` that notes when the response starts (after which no error can be sent)."""

    def __init__(self, send: Send) -> None:
        self._send = send
        self.started = False

    async def __call__(self, message: Message) -> None:
        if message["type"] == "http.response.start":
            self.started = True
        await self._send(message)
