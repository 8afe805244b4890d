"""Resuming agents: an invocation's committed events read as a checkpoint.

A :class:`ResumeScope` (a view on the invocation's
:class:`~eventide.runtime.replay_index.ReplayIndex`) is the part of the log an agent resumes
from (the events after its parent's latest marker); :meth:`ResumeScope.progress` says where
one agent stopped in it. A workflow agent asks :func:`continuation` which child was in
flight: the children before it completed (their outputs are in the log and are not run
again), that child continues from its own part of the log, and the ones after it run as
usual. The markers themselves are
described in :mod:`eventide.runtime.markers`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from eventide.errors import ResumeError
from eventide.events import Event, EventActions
from eventide.runtime.markers import ENDED, FINISHED, INVOCATION_KEY, on_branch
from eventide.runtime.replay_index import AgentProgress, ReplayIndex

__all__ = [
    "AgentProgress",
    "Continuation",
    "Place",
    "ReplayIndex",
    "ResumeScope",
    "continuation",
    "end_marker",
    "invocation_end",
    "step_marker",
]


class Place(Protocol):
    """Where an agent runs: an ``InvocationContext`` (only these two fields are read, so
    this module needs nothing from the context's module)."""

    @property
    def invocation_id(self) -> str: ...

    @property
    def branch(self) -> str | None: ...


@dataclass(slots=True, frozen=True)
class ResumeScope:
    """The committed events of one invocation, from ``since`` on: a view on their
    :class:`ReplayIndex` (read once, shared by every agent and node that resumes from it).

    Attributes:
        index: the invocation's committed events, read.
        since: the position where the resuming agent's part starts (its parent's marker).
    """

    index: ReplayIndex
    since: int = 0

    @classmethod
    def of(cls, events: list[Event]) -> ResumeScope:
        """The scope of all of ``events`` (read into their index now)."""
        return cls(ReplayIndex(events))

    @property
    def events(self) -> list[Event]:
        """Every event of the invocation committed before the resume, in order."""
        return self.index.events

    def at(self, position: int) -> ResumeScope:
        """The same log, from ``position`` on (for a child agent)."""
        return ResumeScope(self.index, position)

    def progress(self, name: str, branch: str | None) -> AgentProgress:
        """Where agent ``name`` on ``branch`` stopped inside this scope."""
        return self.index.progress(name, branch, self.since)

    def after(self, position: int, branch: str | None) -> list[Event]:
        """The events after ``position`` on ``branch`` or below it."""
        return [e for e in self.events[position + 1 :] if on_branch(e.branch, branch)]


@dataclass(slots=True, frozen=True)
class Continuation:
    """Where a workflow agent picks up again.

    Attributes:
        start: the index of the child that was in flight (0 when no child had started).
        scope: that child's part of the log; None when it starts afresh.
        state: the workflow's latest marker (``{}`` when it had committed none).
        escalated: an escalation that ends the workflow was committed after that marker.
    """

    start: int = 0
    scope: ResumeScope | None = None
    state: dict[str, Any] = field(default_factory=lambda: {})
    escalated: bool = False


def continuation(
    name: str,
    children: Sequence[str],
    scope: ResumeScope,
    progress: AgentProgress,
    *,
    branch: str | None,
    invocation_id: str,
    ends_on: Callable[[str], bool] | None = None,
) -> Continuation:
    """Where workflow ``name`` (children named ``children``, run on ``branch``) continues.

    Its latest marker names the child in flight (``"current_sub_agent"``; a fan-out's ``{}``
    names none: every child continues from its own events). ``ends_on(author)``: whether an
    escalation by ``author`` ends the workflow (checked on the events after the marker).

    Raises:
        ResumeError: the marker names a child the workflow no longer has.
    """
    state = progress.state
    if state is None:  # only a callback's event: no child had started
        return Continuation()
    position = progress.state_position
    escalated = ends_on is not None and any(
        event.actions.escalate and ends_on(event.author) for event in scope.after(position, branch)
    )
    child = state.get("current_sub_agent")
    start = 0
    if child is not None:
        if child not in children:
            raise ResumeError(
                f"Invocation {invocation_id} stopped in step {child!r} of {name!r}, but "
                f"{name!r} has no sub-agent {child!r} now (renamed or removed since). Resume "
                "with the agent tree that started the invocation, or start a new turn (the "
                "committed events stay in the session).",
                invocation_id=invocation_id,
            )
        start = list(children).index(child)
    return Continuation(start, scope.at(position), state, escalated)


def step_marker(author: str, ctx: Place, state: dict[str, Any]) -> Event:
    """The marker a workflow commits before it starts a child (``state`` names it)."""
    return Event(
        invocation_id=ctx.invocation_id,
        author=author,
        branch=ctx.branch,
        actions=EventActions(agent_state=state),
    )


def end_marker(
    author: str, ctx: Place, event: Event | None, *, top: bool, end: bool = True
) -> Event:
    """``event`` (a new empty one when None) marked as the agent's last: ``end_of_agent``
    (unless ``end`` is False: an agent that commits none, or had committed it already),
    and the invocation's ``finished`` marker when the agent is the one the turn started."""
    if event is None:
        event = Event(invocation_id=ctx.invocation_id, author=author, branch=ctx.branch)
    if end:
        event.actions.end_of_agent = True
    if top:
        event.custom_metadata = {**(event.custom_metadata or {}), INVOCATION_KEY: FINISHED}
    return event


def ends_at_transfer(agent: object) -> bool:
    """Whether ``agent`` (an ``LlmAgent`` that transfers, in a resumable app) commits its end
    marker right after its transfer, before the target runs, as google-adk does for an agent
    that only ``LlmAgent``s lead to from the root (the Runner's transfer chain). One that a
    workflow agent or a custom agent runs ends after the target, which runs inside it (a
    sequence's step that hands over to its sub-agent ends when that one has)."""
    parent = getattr(agent, "parent_agent", None)
    while parent is not None:
        if not callable(getattr(parent, "transfer_targets", None)):
            return False
        parent = getattr(parent, "parent_agent", None)
    return True


def invocation_end(author: str, ctx: Place) -> Event:
    """The marker of an invocation that ended early (paused for the user, or stopped)."""
    return Event(
        invocation_id=ctx.invocation_id,
        author=author,
        branch=ctx.branch,
        custom_metadata={INVOCATION_KEY: ENDED},
    )
