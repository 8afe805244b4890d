"""SSE frames that are ready together go out in one write; none waits for another."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest

from eventide.server.sse_batching import batch_ready_frames


async def test_a_burst_is_one_chunk_and_a_later_frame_its_own() -> None:
    """Frames produced without a wait between them are joined, in order; a frame that
    comes after a real wait is sent alone, as soon as it exists."""

    async def frames() -> AsyncIterator[str]:
        for i in range(3):
            yield f"data: {i}\n\n"
        await asyncio.sleep(0.05)
        yield "data: late\n\n"

    chunks = [chunk async for chunk in batch_ready_frames(frames())]
    assert chunks == ["data: 0\n\ndata: 1\n\ndata: 2\n\n", "data: late\n\n"]


async def test_a_frame_is_not_held_back_waiting_for_the_next() -> None:
    """The first frame reaches the reader while the source is still waiting for more."""
    release = asyncio.Event()

    async def frames() -> AsyncIterator[str]:
        yield "data: first\n\n"
        await release.wait()
        yield "data: second\n\n"

    reader = batch_ready_frames(frames())
    assert await asyncio.wait_for(anext(reader), 5) == "data: first\n\n"
    release.set()
    assert await asyncio.wait_for(anext(reader), 5) == "data: second\n\n"
    with pytest.raises(StopAsyncIteration):
        await anext(reader)


async def test_closing_early_cancels_the_source_and_waits_for_its_cleanup() -> None:
    """A client that leaves closes the reader: the source is cancelled and its cleanup
    (closing the turn) has run when the close returns."""
    cleaned = asyncio.Event()

    async def frames() -> AsyncIterator[str]:
        try:
            yield "data: 0\n\n"
            await asyncio.sleep(3600)
            yield "never"
        finally:
            await asyncio.sleep(0)  # cleanup that itself awaits
            cleaned.set()

    reader = batch_ready_frames(frames())
    assert await anext(reader) == "data: 0\n\n"
    await reader.aclose()
    assert cleaned.is_set()


async def test_an_error_in_the_source_reaches_the_reader_after_the_frames_before_it() -> None:
    """What the source raises is raised to the reader once the frames before it are out."""

    async def frames() -> AsyncIterator[str]:
        yield "data: 0\n\n"
        raise RuntimeError("source failed")

    reader = batch_ready_frames(frames())
    assert await anext(reader) == "data: 0\n\n"
    with pytest.raises(RuntimeError, match="source failed"):
        await anext(reader)
