"""Reading a workflow run back from the session's log, to resume it.

A workflow records everything it needs in its own committed events: each node's events
carry ``node_info.path`` (``wf@1/step@2``); an output event carries the output (and, in
``node_info.output_for``, every node it is the output of); a route is ``actions.route``; a
request for the user is a long-running function call; a failure is an event with an
``error_code``; in a resumable app, a node that finished with neither output nor route
commits a small marker (:data:`DONE_KEY`). The user's answers are function responses in
user events.

:func:`read_run` gathers these for the run the latest user message continues (or the
run a crashed invocation left), so the workflow replays finished nodes (their outputs,
not their side effects) and runs again only what had not finished.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from eventide import types
from eventide.events import Event
from eventide.protocol import USER_AUTHOR
from eventide.workflow.request_input import answer_value

__all__ = ["DONE_KEY", "NodeRecord", "RunLog", "read_run"]

DONE_KEY = "eventide:node_done"
"""``custom_metadata`` key of the marker a node that finished without an output commits
(resumable apps only): it tells a finished node from one that was running at a crash."""


@dataclass(slots=True, kw_only=True)
class NodeRecord:
    """What the log says about one run of one node (one path)."""

    output: Any = None
    has_output: bool = False
    route: Any = None
    interrupts: list[str] = field(default_factory=list)
    error: str | None = None
    done: bool = False


@dataclass(slots=True, kw_only=True)
class RunLog:
    """A workflow run as committed so far.

    Attributes:
        start: the user message that started the run (the workflow's input).
        records: node path -> its record.
        answers: interrupt id (function call id) -> the user's answer.
    """

    start: types.Content | None = None
    records: dict[str, NodeRecord] = field(default_factory=dict)
    answers: dict[str, Any] = field(default_factory=dict)

    @property
    def resuming(self) -> bool:
        """Whether there is anything to replay."""
        return bool(self.records)

    def record(self, path: str) -> NodeRecord | None:
        """The record of the node run at ``path``, or None when it left no event."""
        return self.records.get(path)


def read_run(events: Sequence[Event], root_path: str) -> RunLog:
    """The run of the workflow at ``root_path`` (``"wf@1"``) that the log ends with.

    Walks back from the end: user messages that only answer requests are collected as
    answers; the first other user message is the run's start. A run that finished (the
    workflow's output was committed) or that has no event yet gives an empty log: the
    workflow starts afresh from that message.
    """
    log = RunLog()
    prefix = root_path + "/"
    mine: list[Event] = []
    for event in reversed(events):
        path = event.node_info.path
        if event.author == USER_AUTHOR and not path:
            responses = event.get_function_responses()
            if responses and not event.text:
                for response in responses:
                    if response.id and response.id not in log.answers:
                        log.answers[response.id] = answer_value(response.response)
                continue
            log.start = event.content
            break
        if path == root_path or path.startswith(prefix):
            mine.append(event)
    mine.reverse()
    for event in mine:
        if event.output is not None and root_path in (event.node_info.output_for or ()):
            return RunLog(start=log.start)  # the run finished: start afresh
    for event in mine:
        _note(log, event)
    return log


def _note(log: RunLog, event: Event) -> None:
    info = event.node_info
    path = info.path
    record = _record(log, path)
    for ancestor in _ancestors(path):
        _record(log, ancestor)
    if event.output is not None:
        for target in info.output_for or [path]:
            owner = _record(log, target)
            owner.output = event.output
            owner.has_output = True
            owner.error = None
    if event.actions.route is not None:
        record.route = event.actions.route
    if event.long_running_tool_ids:
        for call in event.get_function_calls():
            if call.id in event.long_running_tool_ids and call.id not in record.interrupts:
                record.interrupts.append(call.id)
    if event.error_code and event.output is None:
        record.error = event.error_code
    if event.custom_metadata and event.custom_metadata.get(DONE_KEY):
        record.done = True


def _record(log: RunLog, path: str) -> NodeRecord:
    record = log.records.get(path)
    if record is None:
        record = log.records[path] = NodeRecord()
    return record


def _ancestors(path: str) -> list[str]:
    parts = path.split("/")
    return ["/".join(parts[:i]) for i in range(1, len(parts))]
