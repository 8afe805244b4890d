"""``EventideRequestHandler``: the A2A operations, answered by a Runner and its session log.

The official SDK's JSON-RPC dispatcher (``a2a.server.routes``) parses requests, checks the
protocol version, serves A2A 1.0 and 0.3 method names and writes SSE; this handler is what
it calls. It keeps no task store: a context is a session, a task is the invocation(s) tagged
with its id, and every answer about a task is read from the session's events
(:mod:`eventide.a2a.task_log`), so it survives a restart and any server process on the same
database gives it. What it holds is runtime state only: the runs this process drives
(:class:`eventide.a2a.task_runs.TaskRuns`).
"""

from __future__ import annotations

import asyncio
import base64
from collections.abc import AsyncGenerator
from typing import Any

from a2a.server.context import ServerCallContext
from a2a.server.events.event_queue import Event as A2AEvent
from a2a.server.request_handlers.request_handler import RequestHandler
from a2a.types import a2a_pb2
from a2a.utils.errors import (
    InvalidParamsError,
    PushNotificationNotSupportedError,
    TaskNotCancelableError,
    TaskNotFoundError,
    UnsupportedOperationError,
)
from a2a.utils.proto_utils import validate_proto_required_fields

from eventide import types
from eventide.a2a.input_answers import answers_for
from eventide.a2a.part_conversion import to_eventide_parts
from eventide.a2a.stream_mapping import StreamMapper
from eventide.a2a.task_ids import (
    MESSAGE_KEY,
    TASK_KEY,
    context_of_task,
    new_context_id,
    new_task_id,
    user_for_context,
)
from eventide.a2a.task_log import (
    TERMINAL_STATES,
    FileLoader,
    build_task,
    read_task,
    task_events,
    task_ids_in,
)
from eventide.a2a.task_runs import RunEnd, TaskRun, TaskRuns
from eventide.errors import ProtocolInputError, UsageError
from eventide.events import Event
from eventide.run_config import RunConfig, StreamingMode
from eventide.runner import Runner
from eventide.sessions.session import Session

__all__ = ["EventideRequestHandler"]

_DEFAULT_PAGE_SIZE = 50
_MAX_PAGE_SIZE = 100
_REMOTE_POLL_SECONDS = 0.25
_STATE_WORDS: dict[int, str] = {
    a2a_pb2.TASK_STATE_COMPLETED: "completed",
    a2a_pb2.TASK_STATE_FAILED: "failed",
    a2a_pb2.TASK_STATE_CANCELED: "canceled",
    a2a_pb2.TASK_STATE_REJECTED: "rejected",
}


class _TaskFound:
    """A task read from the log."""

    __slots__ = ("context_id", "events", "session", "task_id", "user_id")

    def __init__(
        self, task_id: str, context_id: str, user_id: str, session: Session, events: list[Event]
    ) -> None:
        self.task_id = task_id
        self.context_id = context_id
        self.user_id = user_id
        self.session = session
        self.events = events


class EventideRequestHandler(RequestHandler):
    """Answers A2A requests with ``runner`` (see the module docstring).

    Args:
        runner: the Runner of the app served.
        streaming: answer ``message/stream`` and ``tasks/resubscribe`` (declared in the card).
        send_wait: how long a blocking ``message/send`` waits for the task to end or pause
            before it answers with the task still ``working`` (None: until it does). The
            invocation goes on either way; the client follows it with ``tasks/get``.
        card: the agent card served by ``GetExtendedAgentCard`` (not offered: None).
    """

    def __init__(
        self,
        runner: Runner,
        *,
        streaming: bool = True,
        send_wait: float | None = None,
    ) -> None:
        self.runner = runner
        self.runs = TaskRuns(runner)
        self.streaming = streaming
        self.send_wait = send_wait

    # --- reading tasks ---
    async def _find(self, task_id: str, call: ServerCallContext) -> _TaskFound:
        context_id = context_of_task(task_id)
        if context_id is None:
            raise TaskNotFoundError(
                message=f"Task {task_id!r} not found: no task of this agent has that id."
            )
        user_id = user_for_context(context_id, call)
        session = await self.runner.session_service.get_session(
            app_name=self.runner.app_name, user_id=user_id, session_id=context_id
        )
        events = task_events(session.events, task_id) if session is not None else []
        if session is None or not events:
            raise TaskNotFoundError(
                message=f"Task {task_id!r} not found: no task of this agent has that id."
            )
        return _TaskFound(task_id, context_id, user_id, session, events)

    def _file_loader(self, user_id: str, session_id: str) -> FileLoader | None:
        artifacts = self.runner.artifact_service
        if artifacts is None:
            return None
        app_name = self.runner.app_name

        async def load(name: str, version: int) -> types.Part | None:
            return await artifacts.load_artifact(
                app_name=app_name,
                user_id=user_id,
                session_id=session_id,
                filename=name,
                version=version,
            )

        return load

    async def _task(
        self, found: _TaskFound, history_length: int | None = None, *, artifacts: bool = True
    ) -> a2a_pb2.Task:
        return await build_task(
            task_id=found.task_id,
            context_id=found.context_id,
            events=found.events,
            history_length=history_length,
            include_artifacts=artifacts,
            load_file=self._file_loader(found.user_id, found.context_id) if artifacts else None,
        )

    async def on_get_task(
        self, params: a2a_pb2.GetTaskRequest, context: ServerCallContext
    ) -> a2a_pb2.Task | None:
        """``GetTask`` / ``tasks/get``: the task as its log says."""
        validate_proto_required_fields(params)
        history = params.history_length if params.HasField("history_length") else None
        if history is not None and history < 0:
            raise InvalidParamsError(message="historyLength must be 0 or more.")
        return await self._task(await self._find(params.id, context), history)

    async def on_list_tasks(
        self, params: a2a_pb2.ListTasksRequest, context: ServerCallContext
    ) -> a2a_pb2.ListTasksResponse:
        """``ListTasks`` / ``tasks/list``: the tasks of the app's A2A sessions, the most
        recently updated first, ``pageSize`` at a time (default 50, at most 100)."""
        size = params.page_size if params.HasField("page_size") else _DEFAULT_PAGE_SIZE
        if size < 1 or size > _MAX_PAGE_SIZE:
            raise InvalidParamsError(
                message=f"pageSize must be between 1 and {_MAX_PAGE_SIZE}; got {size}."
            )
        history = params.history_length if params.HasField("history_length") else None
        if history is not None and history < 0:
            raise InvalidParamsError(message="historyLength must be 0 or more.")
        after = (
            params.status_timestamp_after.ToNanoseconds() / 1e9
            if params.HasField("status_timestamp_after")
            else None
        )
        found: list[tuple[float, str, _TaskFound]] = []
        for session in await self._sessions(params.context_id, context):
            for task_id in task_ids_in(session.events):
                events = task_events(session.events, task_id)
                snapshot = read_task(events)
                if params.status and snapshot.state != params.status:
                    continue
                if after is not None and snapshot.updated < after:
                    continue
                task = _TaskFound(task_id, session.id, session.user_id, session, events)
                found.append((snapshot.updated, task_id, task))
        found.sort(key=lambda item: (-item[0], item[1]))
        start = _page_start(params.page_token, found)
        page = found[start : start + size]
        tasks = [
            await self._task(item[2], history, artifacts=params.include_artifacts) for item in page
        ]
        more = start + size < len(found)
        return a2a_pb2.ListTasksResponse(
            tasks=tasks,
            next_page_token=_page_token(page[-1]) if more and page else "",
            page_size=len(tasks),
            total_size=len(found),
        )

    async def _sessions(self, context_id: str, call: ServerCallContext) -> list[Session]:
        service = self.runner.session_service
        app_name = self.runner.app_name
        if context_id:
            user_id = user_for_context(context_id, call)
            one = await service.get_session(
                app_name=app_name, user_id=user_id, session_id=context_id
            )
            return [one] if one is not None else []
        listed = await service.list_sessions(app_name=app_name)
        sessions: list[Session] = []
        for summary in listed.sessions:
            if summary.user_id != user_for_context(summary.id, call):
                continue  # not an A2A context this caller can see
            session = await service.get_session(
                app_name=app_name, user_id=summary.user_id, session_id=summary.id
            )
            if session is not None:
                sessions.append(session)
        return sessions

    # --- sending messages ---
    async def _start(
        self, params: a2a_pb2.SendMessageRequest, call: ServerCallContext, *, streaming: bool
    ) -> TaskRun:
        validate_proto_required_fields(params)
        message = params.message
        if message.role == a2a_pb2.ROLE_AGENT:
            raise InvalidParamsError(message="A message to an agent must have role 'user'.")
        content = types.Content(role="user", parts=to_eventide_parts(message.parts))
        if not content.parts:
            raise InvalidParamsError(
                message="The message has no content: send at least one text, file or data part."
            )
        invocation_id: str | None
        if message.task_id:
            found = await self._find(message.task_id, call)
            if message.context_id and message.context_id != found.context_id:
                raise InvalidParamsError(
                    message=f"Task {found.task_id!r} belongs to context {found.context_id!r}, "
                    f"not {message.context_id!r}: send its contextId or none."
                )
            snapshot = read_task(found.events)
            if snapshot.state in TERMINAL_STATES and self.runs.active(found.task_id) is None:
                raise UnsupportedOperationError(
                    message=f"Task {found.task_id!r} is {_STATE_WORDS[snapshot.state]} and takes "
                    "no more messages: send the message without taskId (with the same "
                    "contextId) to start a new task in the conversation."
                )
            if snapshot.pending_calls:
                try:
                    content = answers_for(snapshot.pending_calls, content)
                except ProtocolInputError as exc:
                    raise InvalidParamsError(message=str(exc)) from exc
            task_id, context_id = found.task_id, found.context_id
            user_id, session = found.user_id, found.session
            invocation_id = None
        else:
            context_id = message.context_id or new_context_id()
            user_id = user_for_context(context_id, call)
            session = await self._session_for(context_id, user_id, given=bool(message.context_id))
            task_id = new_task_id(context_id)
            invocation_id = task_id
        run_config = RunConfig(
            streaming_mode=StreamingMode.SSE if streaming else StreamingMode.NONE,
            custom_metadata={TASK_KEY: task_id, MESSAGE_KEY: message.message_id},
        )
        return self.runs.start(
            task_id=task_id,
            context_id=context_id,
            user_id=user_id,
            session=session,
            content=content,
            run_config=run_config,
            invocation_id=invocation_id,
        )

    async def _session_for(self, context_id: str, user_id: str, *, given: bool) -> Session:
        service = self.runner.session_service
        app_name = self.runner.app_name
        if given:
            session = await service.get_session(
                app_name=app_name, user_id=user_id, session_id=context_id
            )
            if session is not None:
                return session
        try:
            return await service.create_session(
                app_name=app_name, user_id=user_id, session_id=context_id
            )
        except UsageError:
            # Another request created it first: use that one.
            session = await service.get_session(
                app_name=app_name, user_id=user_id, session_id=context_id
            )
            if session is None:
                raise
            return session

    async def on_message_send(
        self, params: a2a_pb2.SendMessageRequest, context: ServerCallContext
    ) -> a2a_pb2.Task | a2a_pb2.Message:
        """``SendMessage`` / ``message/send``: start (or continue) the task; answer when it
        ends or pauses, or at once with ``returnImmediately``."""
        run = await self._start(params, context, streaming=False)
        config = params.configuration
        if not config.return_immediately:
            try:
                await asyncio.wait_for(asyncio.shield(run.finished.wait()), self.send_wait)
            except TimeoutError:
                pass  # answered as working; the run goes on
        history = config.history_length if config.HasField("history_length") else None
        try:
            found = await self._find(run.task_id, context)
        except TaskNotFoundError:
            if run.finished.is_set():
                raise
            return _submitted(run, params.message)  # not even its message is committed yet
        return await self._task(found, history)

    async def on_message_send_stream(
        self, params: a2a_pb2.SendMessageRequest, context: ServerCallContext
    ) -> AsyncGenerator[A2AEvent, None]:
        """``SendStreamingMessage`` / ``message/stream``: the task, then its updates as the
        invocation commits events, ending with its final status."""
        if not self.streaming:
            raise UnsupportedOperationError(message="This agent does not stream.")
        run = await self._start(params, context, streaming=True)
        queue = run.subscribe()  # before the run's first event: nothing is missed
        try:
            yield _submitted(run, params.message)
            mapper = StreamMapper(
                run.task_id, run.context_id, self._file_loader(run.user_id, run.context_id)
            )
            yield mapper.status(a2a_pb2.TASK_STATE_WORKING)
            async for update in self._follow(queue, mapper):
                yield update
        finally:
            run.unsubscribe(queue)

    async def _follow(
        self, queue: asyncio.Queue[Event | RunEnd], mapper: StreamMapper
    ) -> AsyncGenerator[A2AEvent, None]:
        while True:
            item = await queue.get()
            if isinstance(item, RunEnd):
                yield mapper.final(item.state, item.error)
                return
            for update in await mapper.updates(item):
                yield update

    async def on_subscribe_to_task(
        self, params: a2a_pb2.SubscribeToTaskRequest, context: ServerCallContext
    ) -> AsyncGenerator[A2AEvent, None]:
        """``SubscribeToTask`` / ``tasks/resubscribe``: the task now, then its updates until it
        ends or pauses."""
        if not self.streaming:
            raise UnsupportedOperationError(message="This agent does not stream.")
        validate_proto_required_fields(params)
        found = await self._find(params.id, context)
        snapshot = read_task(found.events)
        if snapshot.state in TERMINAL_STATES:
            raise UnsupportedOperationError(
                message=f"Task {found.task_id!r} is {_STATE_WORDS[snapshot.state]}: there is "
                "nothing to subscribe to; read it with GetTask."
            )
        run = self.runs.active(found.task_id)
        queue = run.subscribe() if run is not None else None
        try:
            yield await self._task(found)
            mapper = StreamMapper(
                found.task_id, found.context_id, self._file_loader(found.user_id, found.context_id)
            )
            if queue is not None:
                async for update in self._follow(queue, mapper):
                    yield update
            elif snapshot.state != a2a_pb2.TASK_STATE_INPUT_REQUIRED:
                async for update in self._poll(found, mapper, context):
                    yield update
        finally:
            if run is not None and queue is not None:
                run.unsubscribe(queue)

    async def _poll(
        self, found: _TaskFound, mapper: StreamMapper, call: ServerCallContext
    ) -> AsyncGenerator[A2AEvent, None]:
        """Follow a task another process runs, by reading its log until it ends or pauses."""
        seen = {event.id for event in found.events}
        while True:
            await asyncio.sleep(_REMOTE_POLL_SECONDS)
            found = await self._find(found.task_id, call)
            for event in found.events:
                if event.id not in seen:
                    seen.add(event.id)
                    for update in await mapper.updates(event):
                        yield update
            snapshot = read_task(found.events)
            if snapshot.state in TERMINAL_STATES or snapshot.pending_calls:
                yield mapper.status(snapshot.state, snapshot.status_message)
                return

    # --- cancelling ---
    async def on_cancel_task(
        self, params: a2a_pb2.CancelTaskRequest, context: ServerCallContext
    ) -> a2a_pb2.Task | None:
        """``CancelTask`` / ``tasks/cancel``: stop the task's invocation and mark it canceled."""
        validate_proto_required_fields(params)
        found = await self._find(params.id, context)
        snapshot = read_task(found.events)
        if snapshot.state in TERMINAL_STATES:
            raise TaskNotCancelableError(
                message=f"Task {found.task_id!r} is already {_STATE_WORDS[snapshot.state]}."
            )
        if not await self.runs.cancel(found.task_id, found.session):
            # Paused, or run by another process: the marker is what cancels it.
            run = TaskRun(
                task_id=found.task_id,
                context_id=found.context_id,
                user_id=found.user_id,
                session_id=found.context_id,
                session=found.session,
                invocation_id=found.events[-1].invocation_id,
            )
            await self.runs.commit_canceled(run)
        return await self._task(await self._find(found.task_id, context))

    # --- what is not offered ---
    async def on_create_task_push_notification_config(
        self, params: a2a_pb2.TaskPushNotificationConfig, context: ServerCallContext
    ) -> a2a_pb2.TaskPushNotificationConfig:
        """Push notifications are not offered."""
        raise PushNotificationNotSupportedError(message=_NO_PUSH)

    async def on_get_task_push_notification_config(
        self, params: a2a_pb2.GetTaskPushNotificationConfigRequest, context: ServerCallContext
    ) -> a2a_pb2.TaskPushNotificationConfig:
        """Push notifications are not offered."""
        raise PushNotificationNotSupportedError(message=_NO_PUSH)

    async def on_list_task_push_notification_configs(
        self, params: a2a_pb2.ListTaskPushNotificationConfigsRequest, context: ServerCallContext
    ) -> a2a_pb2.ListTaskPushNotificationConfigsResponse:
        """Push notifications are not offered."""
        raise PushNotificationNotSupportedError(message=_NO_PUSH)

    async def on_delete_task_push_notification_config(
        self, params: a2a_pb2.DeleteTaskPushNotificationConfigRequest, context: ServerCallContext
    ) -> None:
        """Push notifications are not offered."""
        raise PushNotificationNotSupportedError(message=_NO_PUSH)

    async def on_get_extended_agent_card(
        self, params: a2a_pb2.GetExtendedAgentCardRequest, context: ServerCallContext
    ) -> a2a_pb2.AgentCard:
        """The extended card is not offered."""
        raise UnsupportedOperationError(
            message="This agent has no extended agent card: read its public card."
        )

    async def close(self) -> None:
        """Stop the runs this process drives (their tasks stay ``working`` in the log)."""
        await self.runs.close()


_NO_PUSH = (
    "This agent does not send push notifications (its card says pushNotifications: false): "
    "follow a task with message/stream, tasks/resubscribe or tasks/get."
)


def _submitted(run: TaskRun, message: a2a_pb2.Message) -> a2a_pb2.Task:
    """The task as it is before its message is committed: submitted."""
    task = a2a_pb2.Task(
        id=run.task_id,
        context_id=run.context_id,
        status=a2a_pb2.TaskStatus(state=a2a_pb2.TASK_STATE_SUBMITTED),
    )
    sent = task.history.add()
    sent.CopyFrom(message)
    sent.task_id, sent.context_id = run.task_id, run.context_id
    return task


def _page_token(item: tuple[float, str, Any]) -> str:
    raw = f"{item[0]!r}|{item[1]}".encode()
    return base64.urlsafe_b64encode(raw).decode()


def _page_start(token: str, found: list[tuple[float, str, _TaskFound]]) -> int:
    """Where the page after ``token`` (a cursor: the last task of the page before) starts."""
    if not token:
        return 0
    try:
        stamp_text, _, task_id = base64.urlsafe_b64decode(token.encode()).decode().partition("|")
        stamp = float(stamp_text)
    except (ValueError, UnicodeDecodeError) as exc:
        raise InvalidParamsError(
            message="pageToken is not one this server gave: pass the nextPageToken of the "
            "previous page, or none for the first page."
        ) from exc
    for index, (updated, other_id, _) in enumerate(found):
        if (-updated, other_id) > (-stamp, task_id):
            return index
    return len(found)
