"""One reading of an invocation's committed events, for everything that resumes from them.

A resumed invocation asks its log two questions: where an agent stopped (its events, its
latest step marker, whether it ended; asked by author and branch) and what a workflow's
node runs left (output, route, requests, error, done; asked by node path). A
:class:`ReplayIndex` reads the events once, into a table per question, and answers both:
:class:`~eventide.runtime.replay.ResumeScope` is a view on it (an agent's part of the log)
and :func:`eventide.workflow.replay.read_run` its path half (a workflow run's records).
"""

from __future__ import annotations

from bisect import bisect_left
from dataclasses import dataclass, field
from typing import Any

from eventide.events import Event
from eventide.protocol import USER_AUTHOR

__all__ = ["DONE_KEY", "AgentProgress", "NodeRecord", "ReplayIndex"]

DONE_KEY = "eventide:node_done"
"""``custom_metadata`` key of the marker a node that finished without an output commits
(resumable apps only): it tells a finished node from one that was running at a crash."""


@dataclass(slots=True)
class AgentProgress:
    """What the log says about one agent (on one branch) inside a scope.

    Attributes:
        events: the agent's own events, as (position in the invocation, event), up to and
            including its first transfer (later ones belong to a run it was transferred back to).
        ended: the agent committed ``end_of_agent``.
        marked_transfer: the agent transferred and committed the end marker that follows a
            transfer (google-adk's shape: before the target runs); it still continues, by
            continuing the target.
        state: its latest ``agent_state`` marker and that marker's position.
    """

    events: list[tuple[int, Event]] = field(default_factory=list)
    ended: bool = False
    marked_transfer: bool = False
    state: dict[str, Any] | None = None
    state_position: int = -1

    @property
    def started(self) -> bool:
        """The agent committed at least one event in the scope (or its state was restored
        from ``InvocationContext.agent_states``)."""
        return bool(self.events) or self.state is not None

    @property
    def committed_output(self) -> bool:
        """The agent committed something beyond markers (content, or actions)."""
        return any(e.content is not None or not e.actions.is_empty() for _, e in self.events)


@dataclass(slots=True, kw_only=True)
class NodeRecord:
    """What the log says about one run of one node (one path)."""

    output: Any = None
    has_output: bool = False
    route: Any = None
    interrupts: list[str] = field(default_factory=list)
    error: str | None = None
    done: bool = False
    ended: list[str] = field(default_factory=list)
    """Authors of the ``end_of_agent`` markers committed at the path (an agent node's agent)."""


class ReplayIndex:
    """``events`` (from position ``start`` on) read once: positions by agent (author; the
    branch is checked when asked), by workflow run (the first segment of the node path,
    ``wf@1``), and the user's own messages (no node path). Positions are indexes into
    ``events``."""

    __slots__ = ("_agents", "_finished", "_runs", "events", "start", "users")

    def __init__(self, events: list[Event], start: int = 0) -> None:
        self.events = events
        self.start = start
        agents: dict[str, list[int]] = {}
        runs: dict[str, list[int]] = {}
        users: list[int] = []
        for position in range(start, len(events)):
            event = events[position]
            author = event.author
            found = agents.get(author)
            if found is None:
                agents[author] = [position]
            else:
                found.append(position)
            path = event.node_info.path
            if path:
                cut = path.find("/")
                root = path if cut < 0 else path[:cut]
                found = runs.get(root)
                if found is None:
                    runs[root] = [position]
                else:
                    found.append(position)
            elif author == USER_AUTHOR:
                users.append(position)
        self._agents = agents
        self._runs = runs
        self._finished: dict[str, int] = {}
        self.users = users
        """Positions of the user's own messages (answers included; a node's input to an
        agent, which has a node path, is not one)."""

    # --- the agent half ---
    def progress(self, name: str, branch: str | None, since: int = 0) -> AgentProgress:
        """Where agent ``name`` on ``branch`` stopped in the events from ``since`` on."""
        progress = AgentProgress()
        positions = self._agents.get(name)
        if not positions:
            return progress
        events = self.events
        for i in range(bisect_left(positions, since), len(positions)):
            position = positions[i]
            event = events[position]
            if event.branch != branch:
                continue
            progress.events.append((position, event))
            actions = event.actions
            if actions.end_of_agent:
                progress.ended = True
            if actions.agent_state is not None:
                progress.state = actions.agent_state
                progress.state_position = position
            if actions.transfer_to_agent:
                progress.marked_transfer = self._marked_after(positions, i, branch)
                break
        return progress

    def _marked_after(self, positions: list[int], i: int, branch: str | None) -> bool:
        """Whether the agent's next event on ``branch`` after ``positions[i]`` is its end
        marker (no content)."""
        events = self.events
        for j in range(i + 1, len(positions)):
            event = events[positions[j]]
            if event.branch == branch:
                return bool(event.actions.end_of_agent) and event.content is None
        return False

    # --- the path half ---
    def run_events(self, path: str, since: int = 0) -> list[Event]:
        """The events of the node run at ``path`` and below it (``"wf@1"``: a workflow run,
        its own events and its nodes'), from position ``since`` on."""
        cut = path.find("/")
        positions = self._runs.get(path if cut < 0 else path[:cut])
        if not positions:
            return []
        events = self.events
        first = bisect_left(positions, since)
        if cut < 0:  # a whole run: every event of its table
            return [events[positions[i]] for i in range(first, len(positions))]
        prefix = path + "/"
        found: list[Event] = []
        for i in range(first, len(positions)):
            event = events[positions[i]]
            at = event.node_info.path
            if at == path or at.startswith(prefix):
                found.append(event)
        return found

    def finished(self, root_path: str, since: int = 0) -> bool:
        """Whether run ``root_path`` committed its output at or after position ``since``."""
        return self._finished_at(root_path) >= since

    def _finished_at(self, root_path: str) -> int:
        """The position of the latest event carrying run ``root_path``'s output (-1: none)."""
        found = self._finished.get(root_path)
        if found is None:
            found = -1
            events = self.events
            for position in reversed(self._runs.get(root_path, ())):
                event = events[position]
                if event.output is not None and root_path in (event.node_info.output_for or ()):
                    found = position
                    break
            self._finished[root_path] = found
        return found

    def records(self, root_path: str, since: int = 0) -> dict[str, NodeRecord]:
        """Node path -> its record, for every node run of run ``root_path`` (and its
        ancestors' paths) from ``since`` on."""
        records: dict[str, NodeRecord] = {}
        for event in self.run_events(root_path, since):
            _note(records, event)
        return records


def _note(records: dict[str, NodeRecord], event: Event) -> None:
    info = event.node_info
    path = info.path
    record = records.get(path)
    if record is None:
        record = records[path] = NodeRecord()
        parent = path.rpartition("/")[0]
        while parent and parent not in records:  # an ancestor's record says it ran too
            records[parent] = NodeRecord()
            parent = parent.rpartition("/")[0]
    if event.output is not None:
        for target in info.output_for or [path]:
            owner = _record(records, target)
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
    if event.actions.end_of_agent:
        record.ended.append(event.author)


def _record(records: dict[str, NodeRecord], path: str) -> NodeRecord:
    record = records.get(path)
    if record is None:
        record = records[path] = NodeRecord()
    return record
