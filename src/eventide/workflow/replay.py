"""Reading a workflow run back from the session's log, to resume it.

A workflow records everything it needs in its own committed events: each node's events
carry ``node_info.path`` (``wf@1/step@2``); an output event carries the output (and, in
``node_info.output_for``, every node it is the output of); a route is ``actions.route``; a
request for the user is a long-running function call; a failure is an event with an
``error_code``; in a resumable app, a node that finished with neither output nor route
commits a small marker (:data:`DONE_KEY`). The user's answers are function responses in
user events.

The events are read once, into a :class:`~eventide.runtime.replay_index.ReplayIndex` (the
reading agents resume from too). :func:`read_run` gathers the records of the run the latest
user message continues (or the run a crashed invocation left), so the workflow replays
finished nodes (their outputs, not their side effects) and runs again only what had not
finished.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from eventide import types
from eventide.events import Event
from eventide.protocol import USER_AUTHOR
from eventide.runtime.replay_index import DONE_KEY, NodeRecord, ReplayIndex
from eventide.workflow.answer_schema import validate_answer
from eventide.workflow.request_input import REQUEST_INPUT_FUNCTION, answer_value

__all__ = ["DONE_KEY", "NodeRecord", "RunLog", "read_index", "read_run"]


@dataclass(slots=True, kw_only=True)
class RunLog:
    """A workflow run as committed so far.

    Attributes:
        start: the user message that started the run (the workflow's input).
        records: node path -> its record.
        answers: interrupt id (function call id) -> the user's answer.
        index: the log the records were read from (None: a run with nothing to replay).
        since: the position in ``index`` of the run's first event.
    """

    start: types.Content | None = None
    records: dict[str, NodeRecord] = field(default_factory=dict)
    answers: dict[str, Any] = field(default_factory=dict)
    index: ReplayIndex | None = None
    since: int = 0

    @property
    def resuming(self) -> bool:
        """Whether there is anything to replay."""
        return bool(self.records)

    def record(self, path: str) -> NodeRecord | None:
        """The record of the node run at ``path``, or None when it left no event."""
        return self.records.get(path)

    def committed(self, path: str, invocation_id: str) -> list[Event]:
        """The events the node run at ``path`` committed in invocation ``invocation_id``
        (none when the log has no record of it: it starts afresh)."""
        index = self.index
        if index is None or path not in self.records:
            return []
        return [
            event
            for event in index.run_events(path, self.since)
            if event.node_info.path == path and event.invocation_id == invocation_id
        ]


def read_run(events: list[Event], root_path: str) -> RunLog:
    """The run of the workflow at ``root_path`` (``"wf@1"``) that the session's
    ``events`` end with.

    Walks back from the end to the run's start: the first user message that does not
    only answer requests (the answers after it belong to the run). Only that part of the
    log is read (:func:`read_index`).
    """
    position = len(events)
    while position > 0:
        position -= 1
        event = events[position]
        if event.author == USER_AUTHOR and not event.node_info.path and not _answers_only(event):
            break
    return read_index(ReplayIndex(events, position), root_path)


def read_index(index: ReplayIndex, root_path: str) -> RunLog:
    """The run of the workflow at ``root_path`` that ``index`` (a session's tail, or a
    resumed invocation's events) ends with.

    User messages that only answer requests are collected as answers, back to the run's
    start (the latest other user message: the workflow's input). A run that finished (the
    workflow's output was committed) or that has no event yet gives an empty log: the
    workflow starts afresh from that message.
    """
    log = RunLog()
    since = index.start
    events = index.events
    for position in reversed(index.users):
        event = events[position]
        if _answers_only(event):
            for response in event.get_function_responses():
                if response.id and response.id not in log.answers:
                    log.answers[response.id] = answer_value(response.response)
            continue
        log.start = event.content
        since = position
        break
    if index.finished(root_path, since):
        return RunLog(start=log.start)  # the run finished: start afresh
    log.records = index.records(root_path, since)
    log.index = index
    log.since = since
    if log.answers:
        _check_answers(log, index.run_events(root_path, since))
    return log


def _check_answers(log: RunLog, events: list[Event]) -> None:
    """Check each answer to a ``RequestInput`` of the run against the request's
    ``response_schema`` (coercing it as the schema says; see :mod:`answer_schema`)."""
    answers = log.answers
    for event in events:
        if not event.long_running_tool_ids:
            continue
        for call in event.get_function_calls():
            if call.name != REQUEST_INPUT_FUNCTION or call.id not in answers:
                continue
            schema = (call.args or {}).get("response_schema")
            if schema is not None:
                answers[call.id] = validate_answer(call.id, answers[call.id], schema)


def _answers_only(event: Event) -> bool:
    return bool(event.get_function_responses()) and not event.text
