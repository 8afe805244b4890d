"""Reading an invocation's committed events as a checkpoint: where each agent stopped.

A resumable invocation writes small markers into its own events:

- the first event the Runner commits carries ``custom_metadata["eventide_invocation"] =
  "started"``; the last carries ``"finished"`` (the agent that answered the turn ended) or
  ``"ended"`` (it stopped early: a pause for the user, or ``end_invocation``);
- the user's message that answers a paused invocation's calls (a long-running tool's result,
  a confirmation, a credential) is committed in that invocation, marked ``"answered"``: the
  invocation goes on from there. The latest marker says where an invocation is;
- a long-running tool that returned no initial result commits an event (no content) with
  ``custom_metadata["eventide_waiting"] = [call ids]``: those calls ran and wait for the
  user's answer, and resuming does not run them again;
- when one model response asks for several tools, each call that finishes commits a record
  at once, while its siblings still run: an event (no content) whose actions carry the
  call's state and artifact deltas and whose ``custom_metadata["eventide_call"]`` holds the
  call's id, name, response (None: a long-running tool that returned nothing) and its other
  actions. The event answering all the calls comes after the records (its actions without
  the deltas the records committed); resuming runs only the calls without a record;
- a ``SequentialAgent`` or ``LoopAgent`` commits ``actions.agent_state =
  {"current_sub_agent": name}`` (a loop adds ``"times_looped"``) before each step, a
  ``ParallelAgent`` ``actions.agent_state = {}`` before it fans out;
- every agent commits ``actions.end_of_agent = True`` when it finishes.

Everything else (which model responses and tool responses were committed) is read from the
events themselves. A :class:`ResumeScope` is the part of the log an agent resumes from: the
events after its parent's latest marker.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, cast

from eventide.events import Event

__all__ = [
    "ANSWERED",
    "CALL_KEY",
    "ENDED",
    "FINISHED",
    "INVOCATION_KEY",
    "STARTED",
    "WAITING_KEY",
    "WARNING_KEY",
    "AgentProgress",
    "ResumeScope",
    "invocation_mark",
    "invocation_status",
    "is_log_maintenance",
    "on_branch",
    "waiting_calls",
]

INVOCATION_KEY = "eventide_invocation"
STARTED = "started"
FINISHED = "finished"
ENDED = "ended"
ANSWERED = "answered"
WAITING_KEY = "eventide_waiting"
CALL_KEY = "eventide_call"
# A warning the runtime commits between turns (e.g. a compaction whose summarizer failed).
WARNING_KEY = "eventide_warning"


def invocation_mark(event: Event) -> str | None:
    """The invocation marker an event carries (``started``/``finished``/``ended``), if any."""
    metadata = event.custom_metadata
    if not metadata:
        return None
    value = metadata.get(INVOCATION_KEY)
    return value if isinstance(value, str) else None


def invocation_status(events: list[Event]) -> str | None:
    """The latest marker among an invocation's events (None: it was not run resumably)."""
    for event in reversed(events):
        mark = invocation_mark(event)
        if mark is not None:
            return mark
    return None


def waiting_calls(event: Event) -> set[str]:
    """The long-running calls an event says are waiting for the user's answer."""
    metadata = event.custom_metadata
    value: object = metadata.get(WAITING_KEY) if metadata else None
    if not isinstance(value, list):
        return set()
    return {str(item) for item in cast("list[object]", value)}


def is_log_maintenance(event: Event) -> bool:
    """A rewind, a compaction or a runtime warning (a compaction that failed): written to
    the log between turns, never part of one."""
    actions = event.actions
    if actions.rewind_before_invocation_id is not None or actions.compaction is not None:
        return True
    metadata = event.custom_metadata
    return metadata is not None and WARNING_KEY in metadata


def on_branch(event_branch: str | None, branch: str | None) -> bool:
    """Whether an event on ``event_branch`` belongs to ``branch`` or a branch below it."""
    if branch is None:
        return True
    return event_branch == branch or (
        event_branch is not None and event_branch.startswith(branch + ".")
    )


@dataclass(slots=True)
class AgentProgress:
    """What the log says about one agent (on one branch) inside a scope.

    Attributes:
        events: the agent's own events, as (position in the invocation, event), up to and
            including its first transfer (later ones belong to a run it was transferred back to).
        ended: the agent committed ``end_of_agent``.
        state: its latest ``agent_state`` marker and that marker's position.
    """

    events: list[tuple[int, Event]] = field(default_factory=list)
    ended: bool = False
    state: dict[str, Any] | None = None
    state_position: int = -1

    @property
    def started(self) -> bool:
        """The agent committed at least one event in the scope."""
        return bool(self.events)


@dataclass(slots=True, frozen=True)
class ResumeScope:
    """The committed events of one invocation, from ``since`` on.

    Attributes:
        events: every event of the invocation committed before the resume, in order.
        since: the position where the resuming agent's part starts (its parent's marker).
    """

    events: list[Event]
    since: int = 0

    def at(self, position: int) -> ResumeScope:
        """The same log, from ``position`` on (for a child agent)."""
        return ResumeScope(self.events, position)

    def progress(self, name: str, branch: str | None) -> AgentProgress:
        """Where agent ``name`` on ``branch`` stopped inside this scope."""
        progress = AgentProgress()
        events = self.events
        for position in range(self.since, len(events)):
            event = events[position]
            if event.author != name or event.branch != branch:
                continue
            progress.events.append((position, event))
            actions = event.actions
            if actions.end_of_agent:
                progress.ended = True
            if actions.agent_state is not None:
                progress.state = actions.agent_state
                progress.state_position = position
            if actions.transfer_to_agent:
                break
        return progress

    def after(self, position: int, branch: str | None) -> list[Event]:
        """The events after ``position`` on ``branch`` or below it."""
        return [e for e in self.events[position + 1 :] if on_branch(e.branch, branch)]
