"""Commit before resume, for concurrent producers: the one mechanism a ``ParallelAgent``'s
fan-out and a ``Workflow``'s graph loop share.

Each producer (a branch's task, a node's run) hands an event to :meth:`CommitChannel.commit`,
which queues it with a future and returns that future for the producer to wait on. The one
consumer, the agent's generator, takes items with :meth:`CommitChannel.get`, yields each
event to the Runner and resolves its future once the Runner has committed it (the generator
resumes only then). So a producer waits for its own commit, never its siblings', and events
commit in the order they reach the Runner. A producer that ends puts a :class:`Done` (with
its error, if any).

An unbounded queue with one reader: ``asyncio.Queue``'s work, without its getter
bookkeeping (it is paid per event). Scheduling is the same as ``asyncio.Queue``'s: ``get``
returns at once while items wait, and ``put`` wakes the waiting reader.
"""

from __future__ import annotations

import asyncio
from collections import deque

from eventide.events import Event

__all__ = ["CommitChannel", "Done", "Item"]


class Done:
    """A producer ended: ``error`` is what it raised (None: it finished)."""

    __slots__ = ("error",)

    def __init__(self, error: BaseException | None) -> None:
        self.error = error


Item = tuple[Event, "asyncio.Future[None]"] | Done


class CommitChannel:
    """Events on their way to the Runner, each with the future its producer waits on."""

    __slots__ = ("items", "loop", "waiter")

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
        self.items: deque[Item] = deque()
        self.waiter: asyncio.Future[None] | None = None

    def put(self, item: Item) -> None:
        """Queue ``item`` and wake the reader."""
        self.items.append(item)
        waiter = self.waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    def wake(self, _: object = None) -> None:
        """Wake the reader without an item (a done callback: what else it waits for is
        done)."""
        waiter = self.waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    def commit(self, event: Event) -> asyncio.Future[None]:
        """Hand ``event`` to the reader; await the future returned: it is done once the
        Runner has committed the event. (The future itself, not a coroutine awaiting it: a
        producer waiting for its commit holds no frame of this, and costs one call less.)"""
        committed: asyncio.Future[None] = self.loop.create_future()
        self.put((event, committed))
        return committed

    async def get(self) -> Item:
        """The next item (waits while there is none)."""
        while not self.items:
            await self.wait()
        return self.items.popleft()

    async def wait(self) -> None:
        """Wait until an item is put or :meth:`wake` is called."""
        waiter = self.waiter = self.loop.create_future()
        try:
            await waiter
        finally:
            self.waiter = None

    def take(self) -> Item | None:
        """The next item if one is queued, else None (no wait)."""
        return self.items.popleft() if self.items else None
