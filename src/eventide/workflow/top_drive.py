"""The top workflow's generator mode: the graph loop runs in the Runner's own task.

A top-level workflow used to run its graph loop in a task of its own and hand every event
to its generator through the :class:`~eventide.runtime.commit_channel.CommitChannel`: a
future and two event-loop passes per event. Here the generator drives the graph loop's
coroutine itself, step by step, as a task would (in a copy of the context variables, as a
task gives). An event emitted from that coroutine (a lone node: the chain case) is a
:class:`_Commit` the coroutine yields up through its awaits; the generator yields the event
to the Runner and resumes the coroutine once the Runner asks for the next one, that is,
after the commit: what ``SequentialAgent`` does through its generators. Any other value the
coroutine yields is what it would hand a task (a future to wait on, or None for one
event-loop pass); the generator waits for it on the coroutine's behalf, and meanwhile
forwards the events of the node tasks (fan-out, a node with a timeout) that still come
through the channel, each committed before its producer resumes.

Which path an event takes is decided by who emits it: the coroutine driven here (the
task that drives it is the current task) or a task of its own.
"""

from __future__ import annotations

import asyncio
import contextvars
from collections.abc import AsyncGenerator, Coroutine, Generator
from typing import Any, cast

from eventide.events import Event
from eventide.runtime.commit_channel import CommitChannel

__all__ = ["InlineEmitter", "drive"]


class _Commit:
    """An event emitted by the driven coroutine: yielded up through its awaits to
    :func:`drive`, which resumes it once the Runner committed the event."""

    __slots__ = ("event",)

    def __init__(self, event: Event) -> None:
        self.event = event

    def __await__(self) -> Generator[Any, None, None]:
        yield self


class InlineEmitter:
    """``NodeRunner``'s emit for a top workflow: inline from the driven coroutine, through
    the channel from any other task."""

    __slots__ = ("channel", "driver")

    def __init__(self, channel: CommitChannel) -> None:
        self.channel = channel
        self.driver: asyncio.Task[Any] | None = None

    def emit(self, event: Event) -> _Commit | asyncio.Future[None]:
        """What the emitter awaits: done once the Runner committed ``event``."""
        if asyncio.current_task() is self.driver:
            return _Commit(event)
        return self.channel.commit(event)


class _Pass:
    """Yields ``signal`` to the task running the generator, as the driven coroutine would
    have yielded it to its own task (a bare ``yield``: one event-loop pass)."""

    __slots__ = ("signal",)

    def __init__(self, signal: Any) -> None:
        self.signal = signal

    def __await__(self) -> Generator[Any, None, None]:
        yield self.signal


def _is_future(signal: object) -> bool:
    return isinstance(signal, asyncio.Future)


def _future(signal: object) -> asyncio.Future[Any]:
    """``signal`` as what it is (a future the driven coroutine waits on)."""
    return cast("asyncio.Future[Any]", signal)


async def drive(
    coro: Coroutine[Any, Any, Any], emitter: InlineEmitter
) -> AsyncGenerator[Event, None]:
    """Run ``coro`` in the current task, yielding every event it or the channel's
    producers emit (see the module docstring); its exceptions propagate. A cancellation
    of the task is thrown into ``coro`` as into a task's coroutine; closed at a yield, it
    cancels ``coro`` and runs it to its end (its node tasks cancelled and awaited)."""
    channel = emitter.channel
    run = contextvars.copy_context().run
    method: Any = coro.send
    value: Any = None
    try:
        while True:
            emitter.driver = asyncio.current_task()
            try:
                signal = run(method, value)
            except StopIteration:
                method = None
                return
            except BaseException:
                method = None  # it ended: nothing to unwind
                raise
            method, value = coro.send, None
            if type(signal) is _Commit:
                yield signal.event
                continue
            if signal is None or not _is_future(signal):
                try:
                    await _Pass(signal)  # a bare yield: one pass (the task rejects others)
                except asyncio.CancelledError as error:
                    method, value = coro.throw, error  # as a task throws it in
                continue
            future: asyncio.Future[Any] = _future(signal)
            future._asyncio_future_blocking = False  # pyright: ignore[reportPrivateUsage]
            future.add_done_callback(channel.wake)  # once per wait, not per event
            try:
                while not future.done():
                    item = channel.take()
                    if item is None:
                        await channel.wait()
                    elif isinstance(item, tuple):
                        event, committed = item
                        yield event
                        if not committed.done():
                            committed.set_result(None)
            except asyncio.CancelledError as error:
                # As a cancelled task: cancel what it waits on and throw the cancellation
                # in; the coroutine may take it (a node's asyncio.timeout) and go on.
                future.cancel()
                method, value = coro.throw, error
            finally:
                future.remove_done_callback(channel.wake)
    finally:
        if method is not None:  # closed at a yield: cancel it, as cancelling its task did
            await _unwind(coro, run, asyncio.CancelledError())


async def _unwind(coro: Coroutine[Any, Any, Any], run: Any, error: BaseException) -> None:
    """Throw ``error`` into ``coro`` (a cancellation, as a task's) and run it to its end;
    its events are no longer committed (the generator is done)."""
    method: Any = coro.throw
    value: Any = error
    while True:
        try:
            signal = run(method, value)
        except BaseException:  # noqa: BLE001 - it ended (the generator raises its own)
            return
        if type(signal) is _Commit:
            method, value = coro.throw, asyncio.CancelledError()  # never committed
            continue
        try:
            await _Pass(signal)
        except BaseException as again:  # noqa: BLE001 - thrown in, as a task would
            method, value = coro.throw, again
        else:
            method, value = coro.send, None
