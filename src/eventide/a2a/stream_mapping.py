"""``StreamMapper``: the A2A stream updates of a task's events, as its run yields them.

- a partial text chunk: an artifact update of the answer's artifact (the event's id), the
  first chunk starting it and the next ones appended (``last_chunk`` false);
- the committed answer: the same artifact, whole, replacing the chunks (``last_chunk``);
- a saved file: an artifact update carrying the file;
- calls and responses: a ``working`` status update whose message holds them (the call that
  pauses the task is left to the final ``input-required`` update);
- the end of the run: the final status update (``completed``, ``input-required`` with the
  pending calls, ``failed`` with the error, ``canceled``).

The answers and files are the artifacts :func:`eventide.a2a.task_log.build_task` reads from
the log, with the same ids.
"""

from __future__ import annotations

from a2a.types import a2a_pb2
from google.protobuf import timestamp_pb2

from eventide.a2a.part_conversion import to_a2a_parts
from eventide.a2a.task_log import FileLoader, file_artifact, pieces_of
from eventide.events import Event
from eventide.protocol import USER_AUTHOR

__all__ = ["StreamMapper", "StreamUpdate"]

StreamUpdate = a2a_pb2.TaskStatusUpdateEvent | a2a_pb2.TaskArtifactUpdateEvent

_FINAL_STATES = {
    "completed": a2a_pb2.TASK_STATE_COMPLETED,
    "failed": a2a_pb2.TASK_STATE_FAILED,
    "canceled": a2a_pb2.TASK_STATE_CANCELED,
    "input-required": a2a_pb2.TASK_STATE_INPUT_REQUIRED,
}


class StreamMapper:
    """Maps one run's events to A2A updates (see the module docstring).

    Args:
        task_id: the task.
        context_id: its context.
        load_file: loads a saved file's content (None: saved files are not streamed).
    """

    def __init__(self, task_id: str, context_id: str, load_file: FileLoader | None) -> None:
        self.task_id = task_id
        self.context_id = context_id
        self._load_file = load_file
        self._started: set[str] = set()
        self._pause: a2a_pb2.Message | None = None
        self.error: str | None = None

    def status(
        self, state: a2a_pb2.TaskState, message: a2a_pb2.Message | None = None
    ) -> a2a_pb2.TaskStatusUpdateEvent:
        """A status update of the task."""
        stamp = timestamp_pb2.Timestamp()
        stamp.GetCurrentTime()
        status = a2a_pb2.TaskStatus(state=state, timestamp=stamp)
        if message is not None:
            status.message.CopyFrom(message)
            status.message.task_id = self.task_id
            status.message.context_id = self.context_id
        return a2a_pb2.TaskStatusUpdateEvent(
            task_id=self.task_id, context_id=self.context_id, status=status
        )

    def _artifact(
        self, artifact: a2a_pb2.Artifact, *, append: bool, last_chunk: bool
    ) -> a2a_pb2.TaskArtifactUpdateEvent:
        return a2a_pb2.TaskArtifactUpdateEvent(
            task_id=self.task_id,
            context_id=self.context_id,
            artifact=artifact,
            append=append,
            last_chunk=last_chunk,
        )

    async def updates(self, event: Event) -> list[StreamUpdate]:
        """The updates ``event`` gives rise to (none for the user's own message)."""
        if event.author == USER_AUTHOR:
            return []
        if event.partial:
            chunk = event.content.parts if event.content is not None else None
            parts = [p for p in chunk or () if p.text and not p.thought]
            if not parts:
                return []
            artifact = a2a_pb2.Artifact(
                artifact_id=event.id, name="answer", parts=to_a2a_parts(parts)
            )
            append = event.id in self._started
            self._started.add(event.id)
            return [self._artifact(artifact, append=append, last_chunk=False)]
        pieces = pieces_of(event)
        updates: list[StreamUpdate] = []
        if pieces.error is not None:
            self.error = pieces.error
        if pieces.answer is not None:
            updates.append(self._artifact(pieces.answer, append=False, last_chunk=True))
        elif pieces.message is not None:
            if event.long_running_tool_ids:
                self._pause = pieces.message
            else:
                updates.append(self.status(a2a_pb2.TASK_STATE_WORKING, pieces.message))
        if self._load_file is not None:
            for name, version in pieces.files:
                part = await self._load_file(name, version)
                saved = file_artifact(name, version, part) if part is not None else None
                if saved is not None:
                    updates.append(self._artifact(saved, append=False, last_chunk=True))
        return updates

    def final(self, state: str, error: str | None = None) -> a2a_pb2.TaskStatusUpdateEvent:
        """The status update that ends a run that ended in ``state``."""
        code = _FINAL_STATES[state]
        message: a2a_pb2.Message | None = None
        if state == "input-required":
            message = self._pause
        elif state == "failed":
            text = error or self.error or "The agent failed."
            message = a2a_pb2.Message(
                message_id="", role=a2a_pb2.ROLE_AGENT, parts=[a2a_pb2.Part(text=text)]
            )
        return self.status(code, message)
