"""Send a server-sent-event stream, the frames that are ready together in one write.

A turn's events often come in bursts: partial chunks a model delivered in one network read,
or a tool call, its response and the answer committed without any wait in between. Writing
each frame on its own costs a send system call, an HTTP chunk and a wake-up of the client
per frame. :func:`send_batched` runs the producer in a task of its own and sends everything
it produced since the last write: a frame that arrives alone still goes out at once (nothing
waits for more), a burst goes out as one write.

It is the whole response (Starlette's ``StreamingResponse`` is not used): a client that
hangs up is noticed by one task waiting for the ASGI ``http.disconnect`` message, and the
producer is then cancelled, without a task group or cancel scopes per response.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

from starlette.background import BackgroundTask
from starlette.responses import Response
from starlette.types import Message, Receive, Scope, Send

__all__ = ["SSE_HEADERS", "EventStreamResponse", "Produce", "send_batched"]

# What Starlette's StreamingResponse(media_type="text/event-stream", headers={"Cache-Control":
# "no-cache", "X-Accel-Buffering": "no"}) sends, byte for byte: no proxy buffering, no caching.
SSE_HEADERS: list[tuple[bytes, bytes]] = [
    (b"cache-control", b"no-cache"),
    (b"x-accel-buffering", b"no"),
    (b"content-type", b"text/event-stream; charset=utf-8"),
]

Produce = Callable[[Callable[[bytes], None]], Awaitable[None]]
"""A producer: called with ``emit``, it emits each frame (bytes) and returns at the end."""


class _Batch:
    """What the producer, the disconnect listener and the writer share."""

    __slots__ = ("disconnected", "finished", "pending", "waiter")

    def __init__(self) -> None:
        self.pending: list[bytes] = []
        self.finished = False
        self.disconnected = False
        self.waiter: asyncio.Future[None] | None = None

    def wake(self) -> None:
        waiter = self.waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    def emit(self, frame: bytes) -> None:
        self.pending.append(frame)
        self.wake()


async def send_batched(
    produce: Produce,
    receive: Receive,
    send: Send,
    *,
    status: int = 200,
    headers: list[tuple[bytes, bytes]] = SSE_HEADERS,
    on_close: Callable[[], Awaitable[None]] | None = None,
    on_disconnect: Callable[[], None] | None = None,
) -> None:
    """Answer with ``status`` and ``headers``, then each frame ``produce`` emits, bursts
    joined into one body chunk, in order.

    When the client hangs up, or this coroutine is cancelled (a server shutdown past its
    grace period), the producer is cancelled and its cleanup awaited (``on_disconnect``,
    when given, is called first when it is the client that hung up) before this returns
    or re-raises. ``on_close``, when given, is awaited last in every case, even when the
    producer was cancelled before it started (shielded from cancellation unless the stream
    ended normally). What the producer raises is raised here once
    the frames emitted before it are sent.
    """
    batch = _Batch()

    async def pump() -> None:
        try:
            await produce(batch.emit)
        finally:
            batch.finished = True
            batch.wake()

    async def listen() -> None:
        message: Message = await receive()
        while message["type"] != "http.disconnect":
            message = await receive()
        batch.disconnected = True
        batch.wake()

    loop = asyncio.get_running_loop()
    producer: asyncio.Task[None] | None = None
    listener: asyncio.Task[None] | None = None
    ended = False  # the producer ended on its own and the body was ended
    try:
        await send({"type": "http.response.start", "status": status, "headers": headers})
        producer = loop.create_task(pump())
        listener = loop.create_task(listen())
        pending = batch.pending
        while True:
            if pending:
                chunk = b"".join(pending)
                pending.clear()
                await send({"type": "http.response.body", "body": chunk, "more_body": True})
            elif batch.disconnected:
                if on_disconnect is not None:
                    on_disconnect()
                break
            elif batch.finished:
                await producer  # re-raises what the producer raised, if anything
                await send({"type": "http.response.body", "body": b"", "more_body": False})
                ended = True
                break
            else:
                batch.waiter = loop.create_future()
                await batch.waiter
                batch.waiter = None
    finally:
        if listener is not None and not listener.done():
            listener.cancel()
        if producer is not None and not producer.done():
            producer.cancel()
            await _uncancellable(asyncio.gather(producer, return_exceptions=True))
        if on_close is not None:
            # After a normal end nothing is cancelling this task: no shield (and no task).
            await (on_close() if ended else _uncancellable(on_close()))


async def _uncancellable(awaitable: Awaitable[object]) -> None:
    """Await ``awaitable`` to its end even if this task is cancelled meanwhile; a
    cancellation that arrived is raised afterwards."""
    inner = asyncio.ensure_future(awaitable)
    cancelled = False
    while not inner.done():
        try:
            await asyncio.shield(inner)
        except asyncio.CancelledError:
            cancelled = True  # raised once ``inner`` is over
    if cancelled:
        raise asyncio.CancelledError
    inner.result()


class EventStreamResponse(Response):
    """A response streaming what ``produce`` emits with :func:`send_batched`."""

    media_type = "text/event-stream"

    def __init__(
        self,
        produce: Produce,
        *,
        on_close: Callable[[], Awaitable[None]] | None = None,
        on_disconnect: Callable[[], None] | None = None,
    ) -> None:
        # Response.__init__ would render a body; this response has none of its own.
        self.produce = produce
        self.on_close = on_close
        self.on_disconnect = on_disconnect
        self.status_code = 200
        self.background: BackgroundTask | None = None
        self.raw_headers = list(SSE_HEADERS)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        await send_batched(
            self.produce,
            receive,
            send,
            headers=self.raw_headers,
            on_close=self.on_close,
            on_disconnect=self.on_disconnect,
        )
        if self.background is not None:
            await self.background()
