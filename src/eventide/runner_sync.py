"""``Runner.run``'s bridge from synchronous code to the Runner's async generators.

A script or a notebook iterates ``runner.run(...)``; each step of the async invocation runs on
an event loop the bridge keeps, so services that hold connections keep working across calls.
Called where an event loop is already running (a notebook cell, an async test), the bridge
runs its loop on a worker thread and blocks until each event is committed, as google-adk does.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncGenerator, Awaitable, Callable, Coroutine, Iterator
from typing import Any, TypeVar

__all__ = ["SyncBridge"]

_T = TypeVar("_T")


class SyncBridge:
    """The private event loop (or worker thread) one Runner's synchronous calls run on."""

    def __init__(self) -> None:
        self._loop: asyncio.AbstractEventLoop | None = None
        self._worker: _WorkerLoop | None = None

    def iterate(self, events: AsyncGenerator[_T, None]) -> Iterator[_T]:
        """Yield ``events``'s items synchronously. Breaking out of the loop early closes
        the generator (the invocation is cancelled cleanly)."""
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            loop = self._loop
            if loop is None or loop.is_closed():
                loop = self._loop = asyncio.new_event_loop()
            step: Callable[[Awaitable[Any]], Any] = loop.run_until_complete
        else:
            step = self._worker_loop().run
        try:
            while True:
                try:
                    item = step(anext(events))
                except StopAsyncIteration:
                    return
                yield item
        finally:
            step(events.aclose())
            # Let finalizers of generators the caller's code left open run now, on this
            # loop, rather than be destroyed pending.
            step(asyncio.sleep(0))

    def stop_worker(self) -> None:
        """Stop the worker thread's loop, if one was started."""
        worker = self._worker
        if worker is not None:
            self._worker = None
            worker.stop()

    def close(self, closing: Callable[[], Coroutine[Any, Any, None]]) -> None:
        """Run ``closing()`` (the Runner's ``close``) to the end, then close the loop."""
        loop = self._loop
        if loop is None or loop.is_closed():
            asyncio.run(closing())
            return
        loop.run_until_complete(closing())
        loop.run_until_complete(loop.shutdown_asyncgens())
        loop.run_until_complete(loop.shutdown_default_executor())
        loop.close()

    def _worker_loop(self) -> _WorkerLoop:
        worker = self._worker
        if worker is None or worker.closed:
            worker = self._worker = _WorkerLoop()
        return worker


class _WorkerLoop:
    """An event loop on its own thread, for ``Runner.run()`` called inside a running loop."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.closed = False
        self._thread = threading.Thread(
            target=self.loop.run_forever, name="eventide-runner-run", daemon=True
        )
        self._thread.start()

    def run(self, awaitable: Awaitable[Any]) -> Any:
        """Run ``awaitable`` on the worker loop and wait for its result."""

        async def wrapper() -> Any:
            return await awaitable

        return asyncio.run_coroutine_threadsafe(wrapper(), self.loop).result()

    def stop(self) -> None:
        """Stop the loop and its thread."""
        if self.closed:
            return
        self.closed = True
        self.run(self.loop.shutdown_asyncgens())
        self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join()
        self.loop.close()
