"""Send the SSE frames that are ready together, in one write.

A turn's events often come in bursts: partial chunks a model delivered in one network read,
or a tool call, its response and the answer committed without any wait in between. Writing
each frame on its own costs a send system call, an HTTP chunk and a wake-up of the client
per frame. :func:`batch_ready_frames` reads the frames in a task of their own and hands the
response everything produced since its last write: a frame that arrives alone still goes
out at once (nothing waits for more), a burst goes out as one write.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator, AsyncIterator

import anyio

__all__ = ["batch_ready_frames"]


async def batch_ready_frames(frames: AsyncIterator[str]) -> AsyncGenerator[str, None]:
    """Yield ``frames`` joined into as few chunks as their timing allows, in order.

    The source is read in its own task; when this generator is closed early (the client
    left), that task is cancelled and its cleanup awaited before this one ends.
    """
    pending: list[str] = []
    ready = asyncio.Event()
    finished = False

    async def pump() -> None:
        nonlocal finished
        try:
            async for frame in frames:
                pending.append(frame)
                ready.set()
        finally:
            finished = True
            ready.set()

    task = asyncio.get_running_loop().create_task(pump())
    try:
        while True:
            if not pending:
                if finished:
                    break
                await ready.wait()
                ready.clear()
                continue
            chunk = "".join(pending)
            pending.clear()
            yield chunk
        await task  # re-raises what the source raised, if anything
    finally:
        if not task.done():
            task.cancel()
        # The source's own cleanup (closing the turn) must finish even though this
        # generator is being cancelled.
        with anyio.CancelScope(shield=True):
            await asyncio.gather(task, return_exceptions=True)
