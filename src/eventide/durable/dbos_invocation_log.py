"""A DBOS invocation workflow's part of the session log, and how one that cannot go on ends.

A workflow's id is the invocation id it was enqueued with, and its events carry that id, with
one exception: a message that answers the calls a paused invocation waits for is committed in
that paused invocation, which goes on from there (as in process). The worker tags such a
run's events with ``custom_metadata[WORKFLOW_KEY] = <workflow id>``, so the workflow's
followers, and the workflow itself when DBOS runs it again, find where its events went.

A workflow that runs again (its worker died, or lost its database for a while) continues its
invocation from the log when the invocation can be resumed: it is still the session's latest.
When it cannot (a later invocation started in the session meanwhile, a rewind took it back,
its agents left the tree), the invocation ends with an *interruption*: an event of that
invocation, without content, whose ``error_code`` is :data:`INTERRUPTED` and whose
``error_message`` says what happened and what to do, marked ``ended`` (so every follower
stops there) and marked a runtime warning (so it is not a turn: the later invocation stays
the session's latest, and its own pause or resume is not disturbed).
"""

from __future__ import annotations

from eventide import types
from eventide.durable.plan import latest_invocation
from eventide.events import Event
from eventide.runtime.markers import ENDED, INVOCATION_KEY, WARNING_KEY, invocation_mark
from eventide.sessions.session import Session

__all__ = [
    "INTERRUPTED",
    "WORKFLOW_KEY",
    "interruption",
    "interruption_of",
    "workflow_events",
    "workflow_tag",
]

WORKFLOW_KEY = "eventide_dbos_workflow"
INTERRUPTED = "INVOCATION_INTERRUPTED"
"""The ``error_code`` of an invocation that was interrupted and could not be continued."""
_WARNING = "invocation_interrupted"


def workflow_tag(workflow_id: str, message: types.Content | str | None) -> dict[str, str] | None:
    """The run metadata that tags a workflow's events, needed only when its message may
    answer a paused invocation (it holds function responses)."""
    if isinstance(message, types.Content) and any(
        part.function_response is not None for part in message.parts or ()
    ):
        return {WORKFLOW_KEY: workflow_id}
    return None


def workflow_events(events: list[Event], workflow_id: str) -> list[Event]:
    """The workflow's part of a session's events: from its first committed event on, every
    event of the invocation that event belongs to, up to the answer another workflow
    committed in it (empty: it committed nothing yet).

    A paused invocation's part ends at its pause: when the answer's workflow continues the
    invocation, what follows is that workflow's. So the paused one, recovered after its
    worker died between the pause and DBOS recording its end, finds its part ``ended`` and
    stops, rather than resuming the invocation a second time beside the answer's workflow.
    """
    for position, event in enumerate(events):
        metadata = event.custom_metadata
        if event.invocation_id == workflow_id or (
            metadata is not None and metadata.get(WORKFLOW_KEY) == workflow_id
        ):
            invocation_id = event.invocation_id
            part = [event]
            for later in events[position + 1 :]:
                if later.invocation_id != invocation_id:
                    continue
                tag = later.custom_metadata.get(WORKFLOW_KEY) if later.custom_metadata else None
                if tag is not None and tag != workflow_id:
                    break  # another workflow's answer: the invocation is its from here
                part.append(later)
            return part
    return []


def interruption(session: Session, invocation_id: str, author: str, reason: str) -> Event:
    """The event that ends ``invocation_id``, interrupted and not continued because of
    ``reason`` (why it cannot be resumed). Its id is derived from the invocation's, so
    committing it twice stores it once."""
    latest = latest_invocation(session)
    if latest is not None and latest != invocation_id:
        why = (
            f"a later invocation, {latest!r}, started in session {session.id!r} before it "
            "was recovered, and an invocation is not continued after a later turn (its "
            "tool calls and answer would follow that turn's, which ran without them)"
        )
    else:
        why = f"it cannot be resumed: {reason}"
    message = (
        f"Invocation {invocation_id!r} was interrupted (the worker running it stopped or "
        f"lost its database) and is not continued: {why}. Its committed events stay in "
        "the session; to do what it was asked, send its message again as a new invocation."
    )
    return Event(
        id=f"{invocation_id}.interrupted",
        invocation_id=invocation_id,
        author=author,
        error_code=INTERRUPTED,
        error_message=message,
        custom_metadata={INVOCATION_KEY: ENDED, WARNING_KEY: _WARNING},
    )


def interruption_of(events: list[Event]) -> Event | None:
    """The interruption that ended an invocation whose events (in order) are ``events``."""
    for event in reversed(events):
        if invocation_mark(event) is not None:
            return event if event.error_code == INTERRUPTED else None
    return None
