"""Driving a graph loop from a generator: the loop runs in the task reading the events.

A graph loop (:mod:`eventide.runtime.graph_loop`: a workflow's, or a workflow agent's
shape) is a coroutine. Run in a task of its own, it would hand every event to its generator
through the :class:`~eventide.runtime.commit_channel.CommitChannel`: a future and two
event-loop passes per event. Here the generator drives the coroutine itself, step by step,
as a task would. What the coroutine awaits decides the path of its events:

- :func:`commit` (a :class:`_Commit`): one event from the coroutine itself (a lone node of
  a workflow, a fan-out's step marker): yielded up through its awaits; the generator yields
  it to the Runner and resumes the coroutine after the commit;
- anything else is what the coroutine would hand a task (a future to wait on, or None for
  one event-loop pass); the generator waits for it on the coroutine's behalf, and meanwhile
  forwards the events node tasks (a fan-out, a node with a timeout) put on the channel, each
  committed before its producer resumes. ``exits(event)``, checked after each such commit,
  ends the run there: the fan-out's siblings are cancelled (an escalation reaching a
  ``ParallelAgent``). A producer's error handed over on the channel (a ``Done``) is raised
  where it stands among the events (a ``ParallelAgent``'s branch: the events its siblings
  queued before it are committed, none after).

A workflow's coroutine runs in a copy of the context variables (``isolated``: a task gives
one); an agent shape's runs in the reader's own, as generators nested in it do.
"""

from __future__ import annotations

import asyncio
import contextvars
from collections.abc import AsyncGenerator, Callable, Coroutine, Generator
from typing import Any, cast

from eventide.events import Event
from eventide.runtime.commit_channel import CommitChannel

__all__ = ["InlineEmitter", "commit", "drive"]


_once = cast("Callable[[tuple[Any]], Generator[Any, None, None]]", iter)
"""``iter``, typed as what an ``__await__`` returns (an iterator is what ``await`` needs)."""


class _Commit:
    """An event emitted by the driven coroutine: yielded up through its awaits to
    :func:`drive`, which resumes it once the Runner committed the event."""

    __slots__ = ("event",)

    def __init__(self, event: Event) -> None:
        self.event = event

    def __await__(self) -> Generator[Any, None, None]:
        # Yields this once: an iterator of one, not a generator (no frame to make and
        # resume per event). drive resumes it with None (send) or throws a cancellation
        # in, which an await of an iterator without ``throw`` raises at the await itself.
        return _once((self,))


def commit(event: Event) -> _Commit:
    """Await it in the driven coroutine: returns once the Runner committed ``event``."""
    return _Commit(event)


class InlineEmitter:
    """``NodeRunner``'s emit for a top workflow: inline from the driven coroutine, through
    the channel from any other task.

    ``stepping`` is true while :func:`drive` runs a step of the coroutine: code running
    then is the coroutine's own (a node task's steps run in the event loop, never inside
    another task's step), so it tells the two apart as the current task would, without a
    call to ``asyncio.current_task`` per step and per event."""

    __slots__ = ("channel", "stepping")

    def __init__(self, channel: CommitChannel) -> None:
        self.channel = channel
        self.stepping = False

    def emit(self, event: Event) -> _Commit | asyncio.Future[None]:
        """What the emitter awaits: done once the Runner committed ``event``."""
        if self.stepping:
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
    coro: Coroutine[Any, Any, Any],
    channel: CommitChannel | None,
    *,
    emitter: InlineEmitter | None = None,
    isolated: bool = True,
    exits: Callable[[Event], bool] | None = None,
) -> AsyncGenerator[Event, None]:
    """Run ``coro`` in the current task, yielding every event it or the channel's
    producers emit (see the module docstring); its exceptions propagate. A cancellation
    of the task is thrown into ``coro`` as into a task's coroutine; closed at a yield, it
    cancels ``coro`` and runs it to its end (its node tasks cancelled and awaited).

    Args:
        channel: where node tasks put their events (None: ``coro`` starts none).
        emitter: told when a step of ``coro`` runs (a workflow's ``NodeRunner`` emits through it).
        isolated: run ``coro`` in a copy of the context variables, as a task would.
        exits: whether a channel event, once committed, ends the run.
    """
    run: Any = contextvars.copy_context().run if isolated else None
    method: Any = coro.send
    value: Any = None
    try:
        while True:
            try:
                if emitter is None:  # (one check a step where no emitter asks)
                    signal = run(method, value) if run is not None else method(value)
                else:
                    emitter.stepping = True
                    try:
                        signal = run(method, value) if run is not None else method(value)
                    finally:
                        emitter.stepping = False
            except StopIteration:
                method = None
                return
            except BaseException:
                method = None  # it ended: nothing to unwind
                raise
            method, value = coro.send, None
            kind = type(signal)  # pyright: ignore[reportUnknownVariableType]
            if kind is _Commit:
                yield signal.event
                continue
            if signal is None or not _is_future(signal):
                try:
                    await _Pass(signal)  # a bare yield: one pass (the task rejects others)
                except asyncio.CancelledError as error:
                    method, value = coro.throw, error  # as a task throws it in
                continue
            if channel is None:
                channel = CommitChannel(asyncio.get_running_loop())
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
                        if exits is not None and exits(event):
                            return  # committed; the run ends here (finally: cancel the rest)
                        if not committed.done():
                            committed.set_result(None)
                    elif item.error is not None:
                        raise item.error  # a producer's, where it stands among the events
            except asyncio.CancelledError as error:
                # As a cancelled task: cancel what it waits on and throw the cancellation
                # in; the coroutine may take it (a node's asyncio.timeout) and go on.
                future.cancel()
                method, value = coro.throw, error
            finally:
                future.remove_done_callback(channel.wake)
    finally:
        if method is not None:  # closed at a yield: cancel it, as cancelling its task did
            await _unwind(coro, run, asyncio.CancelledError(), emitter)


async def _unwind(
    coro: Coroutine[Any, Any, Any],
    run: Any,
    error: BaseException,
    emitter: InlineEmitter | None,
) -> None:
    """Throw ``error`` into ``coro`` (a cancellation, as a task's) and run it to its end;
    its events are no longer committed (the generator is done)."""
    method: Any = coro.throw
    value: Any = error
    while True:
        if emitter is not None:
            emitter.stepping = True  # (closing: a rare path, the checks' cost does not matter)
        try:
            signal = run(method, value) if run is not None else method(value)
        except BaseException:  # noqa: BLE001 - it ended (the generator raises its own)
            return
        finally:
            if emitter is not None:
                emitter.stepping = False
        kind = type(signal)  # pyright: ignore[reportUnknownVariableType]
        if kind is _Commit:
            method, value = coro.throw, asyncio.CancelledError()  # never committed
            continue
        try:
            await _Pass(signal)
        except BaseException as again:  # noqa: BLE001 - thrown in, as a task would
            method, value = coro.throw, again
        else:
            method, value = coro.send, None
