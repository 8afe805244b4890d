"""SSE frames that are ready together go out in one write; none waits for another; a client
that hangs up stops the producer."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

import pytest
from starlette.responses import StreamingResponse
from starlette.types import Message

from eventide.server.sse_batching import SSE_HEADERS, send_batched

Emit = Callable[[bytes], None]


class _Client:
    """The ASGI side of one request: what was sent, and a hang-up on demand."""

    def __init__(self) -> None:
        self.sent: list[Message] = []
        self.chunk_sent = asyncio.Event()
        self._gone = asyncio.Event()

    async def receive(self) -> Message:
        await self._gone.wait()
        return {"type": "http.disconnect"}

    async def send(self, message: Message) -> None:
        self.sent.append(message)
        if message.get("body"):
            self.chunk_sent.set()

    def hang_up(self) -> None:
        self._gone.set()

    @property
    def chunks(self) -> list[bytes]:
        return [m["body"] for m in self.sent if m["type"] == "http.response.body" and m["body"]]


async def test_a_burst_is_one_chunk_and_a_later_frame_its_own() -> None:
    """Frames produced without a wait between them are joined, in order; a frame that
    comes after a real wait is sent alone, as soon as it exists; the body then ends."""

    async def produce(emit: Emit) -> None:
        for i in range(3):
            emit(f"data: {i}\n\n".encode())
        await asyncio.sleep(0.05)
        emit(b"data: late\n\n")

    client = _Client()
    await send_batched(produce, client.receive, client.send)
    assert client.sent[0] == {"type": "http.response.start", "status": 200, "headers": SSE_HEADERS}
    assert client.chunks == [b"data: 0\n\ndata: 1\n\ndata: 2\n\n", b"data: late\n\n"]
    assert client.sent[-1] == {"type": "http.response.body", "body": b"", "more_body": False}


async def test_a_frame_is_not_held_back_waiting_for_the_next() -> None:
    """The first frame reaches the client while the producer is still waiting for more."""
    release = asyncio.Event()

    async def produce(emit: Emit) -> None:
        emit(b"data: first\n\n")
        await release.wait()
        emit(b"data: second\n\n")

    client = _Client()
    sending = asyncio.create_task(send_batched(produce, client.receive, client.send))
    await asyncio.wait_for(client.chunk_sent.wait(), 5)
    assert client.chunks == [b"data: first\n\n"]
    release.set()
    await asyncio.wait_for(sending, 5)
    assert client.chunks == [b"data: first\n\n", b"data: second\n\n"]


async def test_a_hang_up_cancels_the_producer_and_waits_for_its_cleanup() -> None:
    """A client that leaves: the producer is cancelled, its cleanup (closing the turn) and
    ``on_close`` have run when send_batched returns, and the body is not ended."""
    cleaned = asyncio.Event()
    closed: list[bool] = []

    async def produce(emit: Emit) -> None:
        try:
            emit(b"data: 0\n\n")
            await asyncio.sleep(3600)
        finally:
            await asyncio.sleep(0)  # cleanup that itself awaits
            cleaned.set()

    async def on_close() -> None:
        closed.append(cleaned.is_set())

    client = _Client()
    sending = asyncio.create_task(
        send_batched(produce, client.receive, client.send, on_close=on_close)
    )
    await asyncio.wait_for(client.chunk_sent.wait(), 5)
    client.hang_up()
    await asyncio.wait_for(sending, 5)
    assert cleaned.is_set()
    assert closed == [True]
    assert client.chunks == [b"data: 0\n\n"]
    assert not any(m.get("more_body") is False for m in client.sent)


async def test_cancelling_the_response_still_waits_for_the_producers_cleanup() -> None:
    """A server shutdown cancels the request's task: the producer's cleanup still runs to
    its end (even when it awaits), then the cancellation goes on."""
    cleaned = asyncio.Event()

    async def produce(emit: Emit) -> None:
        try:
            emit(b"data: 0\n\n")
            await asyncio.sleep(3600)
        finally:
            await asyncio.sleep(0.01)
            cleaned.set()

    client = _Client()
    sending = asyncio.create_task(send_batched(produce, client.receive, client.send))
    await asyncio.wait_for(client.chunk_sent.wait(), 5)
    sending.cancel()
    with pytest.raises(asyncio.CancelledError):
        await sending
    assert cleaned.is_set()


async def test_a_cancellation_arriving_as_the_cleanup_ends_is_not_lost() -> None:
    """The request's task cancelled at the very moment the shielded cleanup finishes (a
    server shutdown): the cancellation is still raised, not swallowed."""
    sending: asyncio.Task[None] | None = None

    async def produce(emit: Emit) -> None:
        emit(b"data: 0\n\n")
        await asyncio.sleep(3600)

    async def on_close() -> None:
        this = asyncio.current_task()
        assert this is not None and sending is not None
        # Runs after the shield's own callback has woken send_batched with the result.
        this.add_done_callback(lambda _: sending.cancel() if sending else None)

    client = _Client()
    sending = asyncio.create_task(
        send_batched(produce, client.receive, client.send, on_close=on_close)
    )
    await asyncio.wait_for(client.chunk_sent.wait(), 5)
    client.hang_up()
    with pytest.raises(asyncio.CancelledError):
        await asyncio.wait_for(sending, 5)


async def test_on_close_runs_even_if_the_producer_never_started() -> None:
    """Cancelled before the producer ran a step: ``on_close`` still ends the turn."""
    started: list[bool] = []
    closed: list[bool] = []

    async def produce(emit: Emit) -> None:
        started.append(True)

    async def on_close() -> None:
        closed.append(True)

    async def refusing_send(message: Message) -> None:
        raise OSError("connection reset")

    client = _Client()
    with pytest.raises(OSError, match="connection reset"):
        await send_batched(produce, client.receive, refusing_send, on_close=on_close)
    assert (started, closed) == ([], [True])


async def test_an_error_in_the_producer_is_raised_after_the_frames_before_it() -> None:
    """What the producer raises is raised once the frames emitted before it are sent."""

    async def produce(emit: Emit) -> None:
        emit(b"data: 0\n\n")
        raise RuntimeError("producer failed")

    client = _Client()
    with pytest.raises(RuntimeError, match="producer failed"):
        await send_batched(produce, client.receive, client.send)
    assert client.chunks == [b"data: 0\n\n"]


def test_the_headers_are_starlettes_for_an_event_stream() -> None:
    """The same header bytes as the StreamingResponse the route answered with before."""
    reference = StreamingResponse(
        iter(()),
        media_type="text/event-stream",
        headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"},
    )
    assert reference.raw_headers == SSE_HEADERS
