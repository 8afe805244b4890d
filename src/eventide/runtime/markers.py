"""The markers a resumable invocation writes into its own committed events.

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
- a workflow agent commits ``actions.agent_state`` before each child it starts: a
  ``SequentialAgent`` ``{"current_sub_agent": name}``, a ``LoopAgent`` the same with
  ``"times_looped"``, a ``ParallelAgent`` ``{}`` before it fans out;
- every agent commits ``actions.end_of_agent = True`` when it finishes.

Everything else (which model responses and tool responses were committed) is read from the
events themselves (:mod:`eventide.runtime.replay`).

The ``agent_state`` markers have google-adk's shapes: :class:`BaseAgentState` (a fan-out's
``{}``), :class:`SequentialAgentState` and :class:`LoopAgentState`, the classes google-adk
apps import from the agents' modules; ``InvocationContext.agent_states`` holds them as dicts
(``set_agent_state``).
"""

from __future__ import annotations

from typing import cast

from pydantic import BaseModel, ConfigDict

from eventide.events import Event

__all__ = [
    "ANSWERED",
    "BaseAgentState",
    "LoopAgentState",
    "SequentialAgentState",
    "CALL_KEY",
    "ENDED",
    "FINISHED",
    "INVOCATION_KEY",
    "STARTED",
    "WAITING_KEY",
    "WARNING_KEY",
    "invocation_mark",
    "invocation_status",
    "is_log_maintenance",
    "mark",
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


class BaseAgentState(BaseModel):
    """An agent's resumable state, as its ``agent_state`` marker holds it (google-adk's
    name). A ``ParallelAgent``'s is this one, empty: it has fanned out."""

    model_config = ConfigDict(extra="forbid")


class SequentialAgentState(BaseAgentState):
    """A ``SequentialAgent``'s marker: the step in flight."""

    current_sub_agent: str = ""


class LoopAgentState(BaseAgentState):
    """A ``LoopAgent``'s marker: the step in flight and the rounds completed before it."""

    current_sub_agent: str = ""
    times_looped: int = 0


def invocation_mark(event: Event) -> str | None:
    """The invocation marker an event carries (``started``/``finished``/``ended``), if any."""
    metadata = event.custom_metadata
    if not metadata:
        return None
    value = metadata.get(INVOCATION_KEY)
    return value if isinstance(value, str) else None


def mark(event: Event, value: str) -> None:
    """Put the invocation marker ``value`` on ``event`` (its other metadata kept)."""
    event.custom_metadata = {**(event.custom_metadata or {}), INVOCATION_KEY: value}


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
