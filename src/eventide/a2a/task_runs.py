"""``TaskRuns``: the invocations this server process drives for A2A tasks.

Each message for a task starts a run: a background asyncio task that iterates the Runner's
``run_async`` (so the invocation goes on when the HTTP request that started it returns, as
A2A's non-blocking sends and subscriptions need) and hands every event to the run's
subscribers (the streams of ``message/stream`` and ``tasks/resubscribe``). This registry is
runtime state, not a store: a task's state is always read back from the session log, and a
run leaves its outcome there as a marker event (:mod:`eventide.a2a.task_log`).

- A run ends with a marker: ``completed``, or ``failed`` (an error event or an exception,
  with its text); a run that paused for input leaves none (its pending calls say so).
- Runs of one task run one after the other: a message for a task whose run is still going
  waits for it.
- :meth:`TaskRuns.cancel` cancels the asyncio tasks driving the task's runs (the Runner's
  generator is closed at its current ``await``: what was committed stays committed) and then
  commits one ``canceled`` marker, so every process reads the task as canceled.
  Eventide's Runner has no cancellation API of its own yet; when it gets one, ``cancel``
  calls it instead of cancelling the asyncio task, and the marker stays the record.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator
from contextlib import aclosing
from dataclasses import dataclass, field
from typing import Any

from eventide import types
from eventide.a2a.task_ids import ERROR_KEY, STATE_KEY, TASK_KEY
from eventide.events import Event
from eventide.protocol import USER_AUTHOR
from eventide.run_config import RunConfig
from eventide.runner import Runner
from eventide.runtime.markers import ENDED, INVOCATION_KEY
from eventide.sessions.session import Session

__all__ = ["RunEnd", "TaskRun", "TaskRuns"]

logger = logging.getLogger("eventide.a2a")


@dataclass(slots=True, frozen=True)
class RunEnd:
    """Handed to subscribers when a run is over; the outcome is in the log."""

    state: str
    """``completed``, ``failed``, ``canceled``, or ``input-required`` (paused)."""
    error: str | None = None
    """What went wrong, for ``failed``."""


@dataclass(slots=True, kw_only=True)
class TaskRun:
    """One invocation driven for a task (see the module docstring)."""

    task_id: str
    context_id: str
    user_id: str
    session_id: str
    session: Session
    previous: TaskRun | None = None
    invocation_id: str = ""
    subscribers: list[asyncio.Queue[Event | RunEnd]] = field(default_factory=list)
    finished: asyncio.Event = field(default_factory=asyncio.Event)
    outcome: RunEnd | None = None
    cancelling: bool = False
    driver: asyncio.Task[None] | None = None

    def subscribe(self) -> asyncio.Queue[Event | RunEnd]:
        """A queue that gets every later event of the run, then a :class:`RunEnd`."""
        queue: asyncio.Queue[Event | RunEnd] = asyncio.Queue()
        if self.outcome is not None:
            queue.put_nowait(self.outcome)
        else:
            self.subscribers.append(queue)
        return queue

    def unsubscribe(self, queue: asyncio.Queue[Event | RunEnd]) -> None:
        """Stop handing events to ``queue``."""
        with contextlib.suppress(ValueError):
            self.subscribers.remove(queue)

    def publish(self, item: Event | RunEnd) -> None:
        """Hand ``item`` to every subscriber."""
        for queue in self.subscribers:
            queue.put_nowait(item)

    def end(self, outcome: RunEnd) -> None:
        """Mark the run over and tell the subscribers."""
        if self.outcome is not None:
            return
        self.outcome = outcome
        self.publish(outcome)
        self.subscribers.clear()
        self.finished.set()


class TaskRuns:
    """The runs this process drives, by task id.

    Args:
        runner: the Runner of the app the tasks belong to.
    """

    def __init__(self, runner: Runner) -> None:
        self.runner = runner
        self._runs: dict[str, list[TaskRun]] = {}

    def active(self, task_id: str) -> TaskRun | None:
        """The latest run of ``task_id`` that is not over, if this process drives one."""
        runs = self._runs.get(task_id)
        return runs[-1] if runs else None

    def start(
        self,
        *,
        task_id: str,
        context_id: str,
        user_id: str,
        session: Session,
        content: types.Content,
        run_config: RunConfig,
        invocation_id: str | None,
    ) -> TaskRun:
        """Start a run of ``task_id`` answering ``content`` (after the task's running run)."""
        runs = self._runs.setdefault(task_id, [])
        run = TaskRun(
            task_id=task_id,
            context_id=context_id,
            user_id=user_id,
            session_id=session.id,
            session=session,
            previous=runs[-1] if runs else None,
            invocation_id=invocation_id or "",
        )
        runs.append(run)
        run.driver = asyncio.create_task(
            self._drive(run, content, run_config, invocation_id),
            name=f"eventide-a2a-task-{task_id}",
        )
        return run

    async def _drive(
        self,
        run: TaskRun,
        content: types.Content,
        run_config: RunConfig,
        invocation_id: str | None,
    ) -> None:
        author: str | None = None
        error: str | None = None
        waiting: set[str] = set()
        try:
            if run.previous is not None:
                await run.previous.finished.wait()
            events = self.runner.run_async(
                user_id=run.user_id,
                session_id=run.session_id,
                new_message=content,
                run_config=run_config,
                invocation_id=invocation_id,
            )
            async with aclosing(events) as stream:
                async for event in stream:
                    if not event.partial:
                        run.invocation_id = event.invocation_id or run.invocation_id
                        if event.author == USER_AUTHOR:
                            for response in event.get_function_responses():
                                waiting.discard(response.id or "")
                        else:
                            author = event.author
                            if event.error_code or event.error_message:
                                error = event.error_message or f"error {event.error_code}"
                            if event.long_running_tool_ids:
                                waiting |= event.long_running_tool_ids
                    run.publish(event)
        except asyncio.CancelledError:
            if run.cancelling:
                raise  # cancel() commits the marker and ends the run
            run.end(RunEnd("canceled"))  # the server is stopping: the log says "working"
            raise
        except Exception as exc:  # a failing run must still end its task, with the reason
            logger.exception("A2A task %s failed", run.task_id)
            error = f"{type(exc).__name__}: {exc}"
        finally:
            self._forget(run)
        if error is not None:
            await self._commit_marker(run, "failed", author=author, error=error)
            run.end(RunEnd("failed", error))
        elif waiting:
            run.end(RunEnd("input-required"))
        else:
            await self._commit_marker(run, "completed", author=author)
            run.end(RunEnd("completed"))

    def _forget(self, run: TaskRun) -> None:
        runs = self._runs.get(run.task_id)
        if runs is not None and run in runs and not run.cancelling:
            runs.remove(run)
            if not runs:
                del self._runs[run.task_id]

    async def _commit_marker(
        self,
        run: TaskRun,
        state: str,
        *,
        author: str | None = None,
        error: str | None = None,
    ) -> None:
        metadata: dict[str, Any] = {TASK_KEY: run.task_id, STATE_KEY: state}
        if error is not None:
            metadata[ERROR_KEY] = error
        if state == "canceled" and self.runner.resumable:
            # A canceled invocation must not be picked up by resume_unfinished.
            metadata[INVOCATION_KEY] = ENDED
        marker = Event(
            invocation_id=run.invocation_id or run.task_id,
            # The latest author keeps the conversation (sticky routing reads authors).
            author=author or self.runner.agent.name,
            custom_metadata=metadata,
        )
        await self.runner.session_service.append_event(run.session, marker)

    async def cancel(self, task_id: str, session: Session) -> bool:
        """Cancel the runs of ``task_id`` this process drives and commit the ``canceled``
        marker; False when this process drives none (the caller commits the marker)."""
        runs = self._runs.pop(task_id, [])
        if not runs:
            return False
        for run in runs:
            run.cancelling = True
            if run.driver is not None:
                run.driver.cancel()
        drivers = [run.driver for run in runs if run.driver is not None]
        await asyncio.gather(*drivers, return_exceptions=True)
        latest = runs[-1]
        latest.session = session
        await self.commit_canceled(latest)
        for run in runs:
            run.end(RunEnd("canceled"))
        return True

    async def commit_canceled(self, run: TaskRun) -> None:
        """Commit the ``canceled`` marker of ``run``'s task."""
        await self._commit_marker(run, "canceled")

    async def events(self, run: TaskRun) -> AsyncIterator[Event | RunEnd]:
        """The events of ``run`` from now on, ending with its :class:`RunEnd`."""
        queue = run.subscribe()
        try:
            while True:
                item = await queue.get()
                yield item
                if isinstance(item, RunEnd):
                    return
        finally:
            run.unsubscribe(queue)

    async def close(self) -> None:
        """Cancel every run (the server is stopping); their tasks stay ``working``."""
        drivers = [run.driver for runs in self._runs.values() for run in runs if run.driver]
        self._runs.clear()
        for driver in drivers:
            driver.cancel()
        await asyncio.gather(*drivers, return_exceptions=True)
