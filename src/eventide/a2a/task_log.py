"""Reading an A2A task out of the session's event log.

The log is the only record of a task: its events (tagged with the task id, see
:mod:`eventide.a2a.task_ids`) give its state, its history and its artifacts. Every function
here is pure, so the server process that runs a task and any other one reading the same
database answer alike.

State, from the task's events in commit order:

- a marker with ``eventide_a2a_state`` ends the task (``completed``, ``failed``,
  ``canceled``); the first one wins, so a terminal task never changes again;
- otherwise calls the agent paused on (``long_running_tool_ids``: a long-running tool, a
  confirmation, a credential request) that no later user message answered make it
  ``input-required``;
- otherwise it is ``working``: its invocation is running (in some process), or the process
  running it died before it ended.

What each event becomes (:func:`pieces_of`): the user's messages and the agent's calls and
responses are history messages; an agent's text answer is an artifact (its id is the event
id, so a stream's chunks and the stored answer are one artifact); a file the agent saved
(``artifact_delta``) is an artifact of its own; an error event is the failure message.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field

from a2a.types import a2a_pb2
from google.protobuf import timestamp_pb2

from eventide import types
from eventide.a2a.part_conversion import to_a2a_part, to_a2a_parts
from eventide.a2a.task_ids import ERROR_KEY, MESSAGE_KEY, STATE_KEY, TASK_KEY
from eventide.events import Event
from eventide.protocol import USER_AUTHOR

__all__ = [
    "TERMINAL_STATES",
    "EventPieces",
    "FileLoader",
    "TaskSnapshot",
    "build_task",
    "file_artifact",
    "pieces_of",
    "read_task",
    "state_from_name",
    "task_events",
    "task_ids_in",
]

TERMINAL_STATES: frozenset[a2a_pb2.TaskState] = frozenset(
    {
        a2a_pb2.TASK_STATE_COMPLETED,
        a2a_pb2.TASK_STATE_FAILED,
        a2a_pb2.TASK_STATE_CANCELED,
        a2a_pb2.TASK_STATE_REJECTED,
    }
)
_STATE_NAMES = {
    "completed": a2a_pb2.TASK_STATE_COMPLETED,
    "failed": a2a_pb2.TASK_STATE_FAILED,
    "canceled": a2a_pb2.TASK_STATE_CANCELED,
}

FileLoader = Callable[[str, int], Awaitable[types.Part | None]]
"""Loads version ``int`` of the session artifact ``str`` (None when it is gone)."""


def state_from_name(name: str) -> a2a_pb2.TaskState:
    """The task state a marker's ``eventide_a2a_state`` value names."""
    return _STATE_NAMES[name]


def task_of(event: Event) -> str | None:
    """The task an event belongs to, if any."""
    metadata = event.custom_metadata
    if not metadata:
        return None
    value = metadata.get(TASK_KEY)
    return value if isinstance(value, str) else None


def task_events(events: Sequence[Event], task_id: str) -> list[Event]:
    """The events of ``task_id``, in commit order."""
    return [event for event in events if task_of(event) == task_id]


def task_ids_in(events: Sequence[Event]) -> list[str]:
    """The tasks of a session, in the order they started."""
    seen: dict[str, None] = {}
    for event in events:
        task_id = task_of(event)
        if task_id is not None:
            seen.setdefault(task_id, None)
    return list(seen)


@dataclass(slots=True, kw_only=True)
class TaskSnapshot:
    """Where a task stands, read from its events."""

    state: a2a_pb2.TaskState
    pending_calls: list[types.FunctionCall] = field(default_factory=list)
    """The calls the task waits on (``input-required``), oldest first."""
    status_message: a2a_pb2.Message | None = None
    updated: float = 0.0
    """When its latest event was committed (seconds since the epoch)."""


def read_task(events: Sequence[Event]) -> TaskSnapshot:
    """The state of the task whose events (in commit order) are ``events``."""
    terminal: a2a_pb2.TaskState | None = None
    terminal_text: str | None = None
    pending: dict[str, types.FunctionCall] = {}
    pause_event: Event | None = None
    updated = 0.0
    for event in events:
        updated = max(updated, event.timestamp)
        if terminal is not None:
            continue
        metadata = event.custom_metadata or {}
        marker = metadata.get(STATE_KEY)
        if isinstance(marker, str) and marker in _STATE_NAMES:
            terminal = _STATE_NAMES[marker]
            text = metadata.get(ERROR_KEY)
            terminal_text = text if isinstance(text, str) else None
            continue
        if event.author == USER_AUTHOR:
            for response in event.get_function_responses():
                if response.id is not None:
                    pending.pop(response.id, None)
            continue
        if event.long_running_tool_ids:
            for call in event.get_function_calls():
                if call.id is not None and call.id in event.long_running_tool_ids:
                    pending[call.id] = call
            pause_event = event
    if terminal is not None:
        message = None
        if terminal_text:
            message = _agent_message([a2a_pb2.Part(text=terminal_text)], message_id="")
        return TaskSnapshot(state=terminal, status_message=message, updated=updated)
    if pending:
        message = None
        if pause_event is not None:
            pieces = pieces_of(pause_event)
            message = pieces.message
        return TaskSnapshot(
            state=a2a_pb2.TASK_STATE_INPUT_REQUIRED,
            pending_calls=list(pending.values()),
            status_message=message,
            updated=updated,
        )
    return TaskSnapshot(state=a2a_pb2.TASK_STATE_WORKING, updated=updated)


@dataclass(slots=True, kw_only=True)
class EventPieces:
    """What one committed event is in A2A terms (see the module docstring)."""

    message: a2a_pb2.Message | None = None
    """A history message: the user's, or the agent's answer, calls and responses."""
    answer: a2a_pb2.Artifact | None = None
    """The agent's text answer, as an artifact whose id is the event's id."""
    files: list[tuple[str, int]] = field(default_factory=list)
    """Session artifacts the event saved: (file name, version)."""
    error: str | None = None
    """The error an error event reports."""


def _agent_message(parts: list[a2a_pb2.Part], *, message_id: str) -> a2a_pb2.Message:
    return a2a_pb2.Message(message_id=message_id, role=a2a_pb2.ROLE_AGENT, parts=parts)


def pieces_of(event: Event) -> EventPieces:
    """What ``event`` (committed, or a partial chunk) is in A2A terms."""
    pieces = EventPieces()
    if event.actions.artifact_delta:
        pieces.files = [
            (name, version)
            for name, version in event.actions.artifact_delta.items()
            if not name.startswith("user:")
        ]
    if event.error_code or event.error_message:
        pieces.error = event.error_message or f"The agent failed ({event.error_code})."
    content = event.content
    if content is None or not content.parts:
        return pieces
    parts = content.parts
    if event.author == USER_AUTHOR:
        metadata = event.custom_metadata or {}
        message_id = metadata.get(MESSAGE_KEY)
        pieces.message = a2a_pb2.Message(
            message_id=message_id if isinstance(message_id, str) else event.id,
            role=a2a_pb2.ROLE_USER,
            parts=to_a2a_parts(parts),
        )
        return pieces
    is_answer = all(
        part.text is not None or part.inline_data is not None or part.file_data is not None
        for part in parts
    )
    if is_answer:
        shown = [part for part in parts if not part.thought]
        if shown:
            pieces.answer = a2a_pb2.Artifact(
                artifact_id=event.id, name="answer", parts=to_a2a_parts(shown)
            )
        # In the history too: the history is the conversation, answers included.
        pieces.message = _agent_message(to_a2a_parts(parts), message_id=event.id)
        return pieces
    converted = [
        one
        for one in (to_a2a_part(part, event.long_running_tool_ids) for part in parts)
        if one is not None
    ]
    if converted:
        pieces.message = _agent_message(converted, message_id=event.id)
    return pieces


def file_artifact(name: str, version: int, part: types.Part) -> a2a_pb2.Artifact | None:
    """A saved session artifact as an A2A artifact (None when it has no content)."""
    converted = to_a2a_part(part)
    if converted is None:
        return None
    if not converted.filename and converted.WhichOneof("content") in ("raw", "url"):
        converted.filename = name
    return a2a_pb2.Artifact(artifact_id=f"file:{name}:{version}", name=name, parts=[converted])


def _timestamp(seconds: float) -> timestamp_pb2.Timestamp:
    stamp = timestamp_pb2.Timestamp()
    stamp.FromNanoseconds(int(seconds * 1_000_000_000))
    return stamp


async def build_task(
    *,
    task_id: str,
    context_id: str,
    events: Sequence[Event],
    history_length: int | None = None,
    include_artifacts: bool = True,
    load_file: FileLoader | None = None,
) -> a2a_pb2.Task:
    """The A2A ``Task`` whose events (in commit order) are ``events``.

    Args:
        task_id: the task's id.
        context_id: its context's id.
        events: the task's events (:func:`task_events`).
        history_length: keep only the latest this many history messages (None: all).
        include_artifacts: add the answers and saved files.
        load_file: loads a saved file's content; without it saved files are left out.
    """
    snapshot = read_task(events)
    status = a2a_pb2.TaskStatus(state=snapshot.state, timestamp=_timestamp(snapshot.updated))
    if snapshot.status_message is not None:
        status.message.CopyFrom(snapshot.status_message)
        status.message.task_id = task_id
        status.message.context_id = context_id
    task = a2a_pb2.Task(id=task_id, context_id=context_id, status=status)
    history: list[a2a_pb2.Message] = []
    for event in events:
        pieces = pieces_of(event)
        if pieces.message is not None:
            history.append(pieces.message)
        if not include_artifacts:
            continue
        if pieces.answer is not None:
            task.artifacts.append(pieces.answer)
        if load_file is not None:
            for name, version in pieces.files:
                part = await load_file(name, version)
                artifact = file_artifact(name, version, part) if part is not None else None
                if artifact is not None:
                    task.artifacts.append(artifact)
    if history_length is not None:
        history = history[-history_length:] if history_length > 0 else []
    for message in history:
        message.task_id = task_id
        message.context_id = context_id
    task.history.extend(history)
    return task
