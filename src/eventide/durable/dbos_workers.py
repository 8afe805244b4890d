"""Invocations on DBOS workers: past one machine, over PostgreSQL (the ``dbos`` extra).

`DBOS Transact <https://docs.dbos.dev>`_ keeps durable workflows and queues in PostgreSQL and
runs inside the worker processes (no other server). Here each invocation is one DBOS workflow,
enqueued on the queue ``eventide_invocations`` (a global concurrency limit, and optionally a
per-worker one). Any number of :class:`DbosWorker` processes, on any machines, dequeue and run
them; a client (:class:`InvocationQueue`) enqueues and streams each invocation's events as
they are committed, by polling the session log (and, for a streaming turn, the model's partial
chunks, which the worker publishes with PostgreSQL ``NOTIFY``).

Steps: the workflow's step checkpoints are Eventide's own committed events. The invocation
runs resumably (the worker turns ``ResumabilityConfig(is_resumable=True)`` on), so when DBOS
runs a workflow again (its worker died) it calls ``Runner.resume_async``: committed model
responses are not requested again and committed tool responses are not re-run, the same
guarantee DBOS steps give, without a second copy of each model and tool result in DBOS's tables.
An invocation a later one overtook in its session while it waited for recovery is not
continued: it ends with an interruption event and its workflow fails
(:mod:`eventide.durable.dbos_invocation_log`).

Recovery across machines: DBOS recovers a dead executor's workflows when told to (Conductor, or
its admin API). Each worker holds a PostgreSQL advisory lock named after its executor id for
as long as it lives; every ``liveness_interval`` seconds a worker looks for pending invocation
workflows of other executors, and for an executor whose lock it can take (that process is
gone) it asks DBOS to resume them (``DBOS.resume_workflow``: DBOS re-enqueues each, and its
atomic dequeue lets exactly one worker run it).
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncGenerator, Callable
from dataclasses import dataclass
from typing import Any

import sqlalchemy as sa
from dbos import DBOS, DBOSClient, EnqueueOptions
from sqlalchemy.exc import OperationalError

from eventide import types
from eventide._ids import new_invocation_id
from eventide.durable.dbos_invocation_log import (
    interruption,
    interruption_of,
    workflow_events,
    workflow_tag,
)
from eventide.durable.dbos_partial_chunks import PartialListener, PartialPublisher
from eventide.durable.dbos_system_database import sync_url, unreachable
from eventide.errors import (
    BackendError,
    EventideError,
    InvocationFailedError,
    InvocationNotFoundError,
    ResumeError,
    UsageError,
)
from eventide.events import Event
from eventide.run_config import RunConfig, StreamingMode
from eventide.runner import Runner
from eventide.runtime.markers import ENDED, FINISHED, invocation_mark, invocation_status
from eventide.sessions.base_session_service import BaseSessionService

__all__ = [
    "QUEUE_NAME",
    "WORKFLOW_NAME",
    "DbosWorker",
    "InvocationFailedError",
    "InvocationQueue",
    "PartialListener",
    "PartialPublisher",
    "RunnerFactory",
]

WORKFLOW_NAME = "eventide_invocation"
QUEUE_NAME = "eventide_invocations"
_DBOS_APP_NAME = "eventide"
_LOCK_PREFIX = "eventide-worker:"

RunnerFactory = Callable[[str], Runner]
"""Builds the Runner of an app by name, on the worker's event loop (its session service
connects there); it must return a resumable Runner."""


# The worker's runners, built on DBOS's event loop on first use (one worker per process).
_factory: RunnerFactory | None = None
_runners: dict[str, Runner] = {}
# The invocations running in this process (what stop() would abandon).
_running: set[str] = set()
# Publishes partial chunks (set by DbosWorker.start).
_publisher: PartialPublisher | None = None


@DBOS.workflow(name=WORKFLOW_NAME)
async def _run_invocation(
    app_name: str,
    user_id: str,
    session_id: str,
    message: str | dict[str, Any] | None,
    invocation_id: str,
    state_delta: dict[str, Any] | None = None,
    stream: bool = False,
) -> int:
    """One invocation; on a second run (the first worker died) it resumes from the log.
    ``stream``: the model streams, and each partial chunk is published (``NOTIFY``) for the
    client following the invocation.

    A storage failure (a lost connection, a full server) does not fail the workflow at once:
    the invocation continues from its committed events after a pause, a few times.
    """
    runner = _runner(app_name)
    _running.add(invocation_id)
    try:
        count = await _with_storage_retries(
            runner, user_id, session_id, message, invocation_id, state_delta, stream
        )
    except asyncio.CancelledError:
        raise  # the worker shut down mid-invocation: it stays counted as abandoned
    except BaseException:
        _running.discard(invocation_id)
        raise
    _running.discard(invocation_id)
    return count


async def _with_storage_retries(
    runner: Runner,
    user_id: str,
    session_id: str,
    message: str | dict[str, Any] | None,
    invocation_id: str,
    state_delta: dict[str, Any] | None,
    stream: bool,
) -> int:
    for attempt in range(_STORAGE_ATTEMPTS):
        try:
            return await _run_or_resume(
                runner, user_id, session_id, message, invocation_id, state_delta, stream
            )
        except InvocationFailedError:
            raise  # the invocation ended (an interruption): running it again changes nothing
        except BackendError:
            if attempt == _STORAGE_ATTEMPTS - 1:
                raise
            await asyncio.sleep(0.5 * 2**attempt)
    raise AssertionError("unreachable")


_STORAGE_ATTEMPTS = 5
# The DBOS statuses of a workflow that will not run again (unless resumed by hand).
_OVER = frozenset({"SUCCESS", "ERROR", "CANCELLED", "MAX_RECOVERY_ATTEMPTS_EXCEEDED"})


async def _run_or_resume(
    runner: Runner,
    user_id: str,
    session_id: str,
    message: str | dict[str, Any] | None,
    workflow_id: str,
    state_delta: dict[str, Any] | None,
    stream: bool,
) -> int:
    """Run the workflow's invocation, or continue it from the log when DBOS runs the
    workflow again; the number of events (partial chunks included) it yielded now.

    Raises:
        InvocationFailedError: it was interrupted and cannot be continued; it ended with an
            interruption event (see :mod:`eventide.durable.dbos_invocation_log`), so the
            workflow ends in ERROR, never in SUCCESS without finishing.
    """
    session = await runner.session_service.get_session(
        app_name=runner.app_name, user_id=user_id, session_id=session_id
    )
    if session is None:
        raise UsageError(
            f"Session {session_id!r} of app {runner.app_name!r} does not exist; create it "
            "before enqueueing an invocation in it."
        )
    committed = workflow_events(session.events, workflow_id)
    if not committed:
        content = types.Content.model_validate(message) if isinstance(message, dict) else message
        tag = workflow_tag(workflow_id, content)
        run_config = (
            RunConfig(
                streaming_mode=StreamingMode.SSE if stream else StreamingMode.NONE,
                custom_metadata=tag or {},
            )
            if stream or tag
            else None
        )
        events = runner.run_async(
            user_id=user_id,
            session_id=session_id,
            new_message=content,
            state_delta=state_delta,
            run_config=run_config,
            invocation_id=workflow_id,
        )
        return await _forward(events, workflow_id)
    invocation_id = committed[0].invocation_id
    status = invocation_status(committed)
    if status == FINISHED:
        return 0  # it finished before the worker that ran it died: nothing to do
    if status == ENDED:
        ended = interruption_of(committed)
        if ended is not None:  # ended by an earlier run of this workflow, which then died
            raise InvocationFailedError(ended.error_message or "")
        return 0  # it paused for the user (or a callback ended it): a new message goes on
    resumed = runner.resume_async(
        user_id=user_id,
        session_id=session_id,
        invocation_id=invocation_id,
        run_config=RunConfig(streaming_mode=StreamingMode.SSE) if stream else None,
    )
    try:
        return await _forward(resumed, workflow_id)
    except ResumeError as exc:
        # Not the session's latest any more (or rewound, or its agents are gone): it ends
        # here, with an event every follower receives, rather than in a silent success.
        raise await _interrupt(runner, user_id, session_id, invocation_id, exc) from exc


async def _forward(events: AsyncGenerator[Event, None], workflow_id: str) -> int:
    """Drive the invocation; publish its partial chunks for the workflow's followers."""
    count = 0
    async for event in events:
        count += 1
        if event.partial and _publisher is not None:
            await asyncio.to_thread(_publisher.publish, workflow_id, event)
    return count


async def _interrupt(
    runner: Runner, user_id: str, session_id: str, invocation_id: str, reason: ResumeError
) -> InvocationFailedError:
    """Commit the event that ends an invocation that cannot be continued; the error the
    workflow fails with."""
    session = await runner.session_service.get_session(
        app_name=runner.app_name, user_id=user_id, session_id=session_id
    )
    if session is None:
        return InvocationFailedError(
            f"Invocation {invocation_id!r} was interrupted and its session {session_id!r} "
            "was deleted before it was recovered; there is nothing to continue."
        )
    event = interruption(session, invocation_id, runner.agent.name, str(reason))
    await runner.session_service.append_event(session, event)
    return InvocationFailedError(event.error_message or "")


def _runner(app_name: str) -> Runner:
    runner = _runners.get(app_name)
    if runner is None:
        if _factory is None:
            raise UsageError("No DbosWorker was started in this process.")
        runner = _runners[app_name] = _factory(app_name)
        if not runner.resumable:
            raise UsageError(
                f"The runner of app {app_name!r} is not resumable; a DBOS worker needs "
                "App(..., resumability_config=ResumabilityConfig(is_resumable=True)) so a "
                "recovered invocation continues from its committed events."
            )
    return runner


@dataclass(slots=True, kw_only=True)
class DbosWorker:
    """A worker process's DBOS executor: dequeues invocations and runs them.

    Attributes:
        runner_factory: builds the resumable Runner of an app by name.
        system_database_url: PostgreSQL database of DBOS's tables (schema ``dbos``); every
            worker and client of one deployment uses the same one.
        executor_id: unique per worker process (DBOS tags the workflows it runs with it).
        concurrency: the most invocations running at once across all workers (None: no limit).
        worker_concurrency: the most on this worker at once (None: no limit).
        polling_interval: seconds between this worker's looks at the queue.
        liveness_interval: seconds between this worker's looks for dead workers' invocations.
        pool_size: connections DBOS keeps to its database (the worker also holds 2 for its
            liveness lock and checks; size PostgreSQL's max_connections for every worker).
        stop_grace: whole seconds :meth:`stop` waits for the invocations in flight to finish.
    """

    runner_factory: RunnerFactory
    system_database_url: str
    executor_id: str
    concurrency: int | None = None
    worker_concurrency: int | None = None
    polling_interval: float = 0.1
    liveness_interval: float = 1.0
    pool_size: int = 4
    stop_grace: int = 5
    _engine: sa.Engine | None = None
    _lock_connection: sa.Connection | None = None
    _stop: threading.Event | None = None
    _thread: threading.Thread | None = None

    def start(self) -> None:
        """Take this worker's liveness lock, launch DBOS, start dequeuing and watching."""
        global _factory
        url = sync_url(self.system_database_url)
        self._engine = sa.create_engine(
            url.replace("postgresql://", "postgresql+psycopg://"), pool_size=3, max_overflow=0
        )
        try:
            self._lock_connection = self._engine.connect()
        except OperationalError as exc:
            raise unreachable(self.system_database_url, exc) from exc
        # Held for the life of the process: PostgreSQL releases it when the process dies.
        self._lock_connection.execute(
            sa.text("SELECT pg_advisory_lock(hashtext(:key))"),
            {"key": _LOCK_PREFIX + self.executor_id},
        )
        self._lock_connection.commit()
        _factory = self.runner_factory
        global _publisher
        _publisher = PartialPublisher(self._engine)
        DBOS(
            config={
                "name": _DBOS_APP_NAME,
                "system_database_url": url,
                "executor_id": self.executor_id,
                "sys_db_pool_size": self.pool_size,
            }
        )
        DBOS.launch()
        DBOS.register_queue(
            QUEUE_NAME,
            global_concurrency=self.concurrency,
            worker_concurrency=self.worker_concurrency,
            polling_interval_sec=self.polling_interval,
        )
        self._stop = threading.Event()
        self._thread = threading.Thread(
            target=self._watch, name="eventide-dbos-liveness", daemon=True
        )
        self._thread.start()

    def stop(self) -> int:
        """Stop dequeuing, give the invocations in flight ``stop_grace`` seconds, shut DBOS
        down; the number of invocations still running (abandoned), each recovered by another
        worker once this process has exited.

        A running tool cannot be interrupted (a thread cannot be killed), so with abandoned
        invocations the liveness lock is kept until the process exits (no other worker
        starts them while this one still runs them), and the process should exit right away
        without waiting for its threads (``os._exit``, as ``eventide worker`` does).
        """
        global _factory
        if self._stop is not None:
            self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=10)
        # DBOS stops dequeuing, waits up to stop_grace, then cancels what still runs.
        DBOS.destroy(workflow_completion_timeout_sec=self.stop_grace if _running else 0)
        abandoned = len(_running)
        _running.clear()
        _factory = None
        global _publisher
        _publisher = None
        _runners.clear()
        if abandoned:
            return abandoned
        if self._lock_connection is not None:
            self._lock_connection.close()
        if self._engine is not None:
            self._engine.dispose()
        return 0

    def recover_dead_workers(self) -> list[str]:
        """Resume the pending invocations of workers whose process is gone; their ids."""
        assert self._engine is not None
        pending = DBOS.list_workflows(
            status="PENDING", name=WORKFLOW_NAME, load_input=False, load_output=False
        )
        others = {w.executor_id for w in pending if w.executor_id} - {self.executor_id}
        resumed: list[str] = []
        for executor_id in sorted(others):
            key = {"key": _LOCK_PREFIX + executor_id}
            with self._engine.connect() as connection:
                alive = not connection.execute(
                    sa.text("SELECT pg_try_advisory_lock(hashtext(:key))"), key
                ).scalar()
                if alive:
                    continue
                try:
                    # Listed again under the lock: only the dead worker's own workflows.
                    for workflow in DBOS.list_workflows(
                        status="PENDING",
                        name=WORKFLOW_NAME,
                        executor_id=executor_id,
                        load_input=False,
                        load_output=False,
                    ):
                        DBOS.resume_workflow(workflow.workflow_id)
                        resumed.append(workflow.workflow_id)
                finally:
                    connection.execute(sa.text("SELECT pg_advisory_unlock(hashtext(:key))"), key)
                    connection.commit()
        return resumed

    def _watch(self) -> None:
        assert self._stop is not None
        while not self._stop.wait(self.liveness_interval):
            try:
                self.recover_dead_workers()
            except Exception as exc:  # the next round tries again
                DBOS.logger.warning(f"eventide: looking for dead workers failed: {exc}")


class InvocationQueue:
    """The client side: enqueue invocations for the workers, follow their events.

    Args:
        system_database_url: the DBOS system database the workers use.
    """

    def __init__(self, system_database_url: str) -> None:
        self._url = system_database_url
        try:
            self._client = DBOSClient(
                system_database_url=sync_url(system_database_url), system_database_pool_size=2
            )
        except OperationalError as exc:
            raise unreachable(system_database_url, exc) from exc

    def enqueue(
        self,
        *,
        app_name: str,
        user_id: str,
        session_id: str,
        new_message: types.Content | str,
        state_delta: dict[str, Any] | None = None,
        invocation_id: str | None = None,
        stream: bool = False,
    ) -> str:
        """Enqueue one invocation (the session must exist); returns its invocation id, which
        is also its DBOS workflow id (enqueueing the same id again does nothing).
        ``state_delta`` is committed with the user's message, as ``Runner.run_async`` does;
        with ``stream`` the model streams and the worker publishes each partial chunk (follow
        them with :meth:`partials`, opened before enqueueing)."""
        invocation_id = invocation_id or new_invocation_id()
        message: str | dict[str, Any] = (
            new_message
            if isinstance(new_message, str)
            else new_message.model_dump(mode="json", exclude_none=True)
        )
        options: EnqueueOptions = {
            "workflow_name": WORKFLOW_NAME,
            "queue_name": QUEUE_NAME,
            "workflow_id": invocation_id,
            "workflow_id_reuse_policy": "return-existing",
            "application_name": _DBOS_APP_NAME,
        }
        try:
            self._client.enqueue(
                options, app_name, user_id, session_id, message, invocation_id, state_delta, stream
            )
        except OperationalError as exc:
            raise unreachable(self._url, exc) from exc
        return invocation_id

    def status(self, invocation_id: str) -> str | None:
        """The workflow's DBOS status (ENQUEUED, PENDING, SUCCESS, ERROR, ...), or None."""
        found = self._client.list_workflows(
            workflow_ids=[invocation_id], load_input=False, load_output=False
        )
        return str(found[0].status) if found else None

    async def events(
        self,
        session_service: BaseSessionService,
        *,
        app_name: str,
        user_id: str,
        session_id: str,
        invocation_id: str,
        poll_interval: float = 0.05,
        partials: PartialListener | None = None,
    ) -> AsyncGenerator[Event, None]:
        """Yield the invocation's events as they are committed, until it finishes (or
        pauses for the user, or ends with an error event); with ``partials`` (from
        :meth:`partials`), the partial chunks the worker publishes too, as they come (a
        chunk arriving after its complete event is dropped).

        A message that answers a paused invocation's calls goes on in that invocation: its
        events from the answer on are yielded (they carry the paused invocation's id). An
        invocation interrupted and recovered when it could not be continued (a later
        invocation started in the session meanwhile) ends with an event whose
        ``error_code`` is ``INVOCATION_INTERRUPTED``, yielded last.

        Raises:
            InvocationFailedError: its workflow ended in error or was cancelled without
                ending the invocation in the log.
            InvocationNotFoundError: no invocation of that id was ever enqueued.
        """
        seen: set[str] = set()
        last_look = False
        status: str | None = None
        while True:
            session = await session_service.get_session(
                app_name=app_name, user_id=user_id, session_id=session_id
            )
            for event in workflow_events(session.events, invocation_id) if session else ():
                if event.id in seen:
                    continue
                seen.add(event.id)
                yield event
                if invocation_mark(event) in (FINISHED, ENDED):
                    return  # later events of a paused invocation belong to its answers
            if last_look:
                raise self._stopped(invocation_id, status)
            status = await asyncio.to_thread(self.status, invocation_id)
            if status is None or status in _OVER:
                last_look = True  # its last events were committed before it ended: read once more
                continue
            if partials is None:
                await asyncio.sleep(poll_interval)
                continue
            async for chunk in partials.chunks(poll_interval):
                if chunk.id not in seen:
                    yield chunk

    @staticmethod
    def _stopped(invocation_id: str, status: str | None) -> EventideError:
        if status is None:
            return InvocationNotFoundError(
                f"No invocation {invocation_id!r} was enqueued on the DBOS queue; follow the "
                "id InvocationQueue.enqueue returned.",
                invocation_id=invocation_id,
            )
        if status == "SUCCESS":
            # Only a worker of an Eventide before issue 31's fix ends a workflow so.
            return InvocationFailedError(
                f"Invocation {invocation_id!r} did not finish, yet its DBOS workflow is "
                "SUCCESS: a worker skipped it after a later invocation ran in its session. "
                "Its committed events stay in the session; send its message again as a new "
                "invocation."
            )
        return InvocationFailedError(
            f"Invocation {invocation_id!r} stopped on the workers: its DBOS workflow "
            f"is {status}. Its committed events stay in the session; resume it with "
            "Runner.resume_async or enqueue a new message."
        )

    def partials(self, invocation_id: str) -> PartialListener:
        """A listener for the invocation's partial chunks; open it (``async with``) before
        enqueueing, so no chunk is published before it listens."""
        return PartialListener(self._url, invocation_id)

    def close(self) -> None:
        """Close the client's database connections."""
        self._client.destroy()
