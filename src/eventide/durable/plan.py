"""Checking that an invocation can be resumed, and where the Runner starts again."""

from __future__ import annotations

from dataclasses import dataclass

from eventide import types
from eventide.agents.base_agent import BaseAgent
from eventide.durable.log import ENDED, FINISHED, STARTED, ResumeScope, invocation_mark
from eventide.errors import InvocationNotFoundError, ResumeError
from eventide.sessions.session import Session

__all__ = ["ResumePlan", "plan_resume", "unfinished_invocation"]


@dataclass(slots=True, frozen=True)
class ResumePlan:
    """How to continue one unfinished invocation.

    Attributes:
        invocation_id: the invocation.
        scope: its committed events (the checkpoint).
        user_content: the user's message that started it, if any.
        start_agent: the agent the Runner started for the turn; None when nothing but the
            user's event was committed (the Runner picks the agent as for a new turn).
    """

    invocation_id: str
    scope: ResumeScope
    user_content: types.Content | None
    start_agent: BaseAgent | None


def plan_resume(root: BaseAgent, session: Session, invocation_id: str | None) -> ResumePlan:
    """Where to resume ``invocation_id`` (default: the session's latest invocation).

    Raises:
        InvocationNotFoundError: the session has no such invocation (or none at all).
        ResumeError: the invocation is not the session's latest, finished, ended waiting
            for the user, was not run resumably, or names agents the tree no longer has.
    """
    latest = _latest_invocation(session)
    if invocation_id is None:
        if latest is None:
            raise InvocationNotFoundError(
                f"Session {session.id!r} has no invocation to resume; send a message instead.",
                invocation_id="",
            )
        invocation_id = latest
    events = [e for e in session.events if e.invocation_id == invocation_id]
    if not events:
        raise InvocationNotFoundError(
            f"Session {session.id!r} has no invocation {invocation_id!r}. Resume one of its "
            "own invocations (an event's invocation_id), or omit invocation_id to resume "
            "the latest.",
            invocation_id=invocation_id,
        )
    if invocation_id != latest:
        raise ResumeError(
            f"Invocation {invocation_id!r} is not the latest of session {session.id!r} "
            f"(later turns ran after it, the latest is {latest!r}); only the latest "
            "invocation can be resumed.",
            invocation_id=invocation_id,
        )
    marks = {invocation_mark(e) for e in events}
    if STARTED not in marks:
        raise ResumeError(
            f"Invocation {invocation_id!r} was not run with resumability on, so its events "
            "do not record where it was. Run the app as App(..., resumability_config="
            "ResumabilityConfig(is_resumable=True)) for future turns; start a new turn now.",
            invocation_id=invocation_id,
        )
    if FINISHED in marks:
        raise ResumeError(
            f"Invocation {invocation_id!r} finished; there is nothing to resume. Send a new "
            "message to start the next turn.",
            invocation_id=invocation_id,
        )
    if ENDED in marks:
        raise ResumeError(
            f"Invocation {invocation_id!r} ended early (it paused for the user's answer to "
            "a tool call, or a callback ended it); there is nothing to resume. Answer the "
            "paused call (a function response with its id) in a new message.",
            invocation_id=invocation_id,
        )
    for event in events:
        if event.author != "user" and root.find_agent(event.author) is None:
            raise ResumeError(
                f"Invocation {invocation_id!r} was run by agent {event.author!r}, which is "
                f"not in the agent tree of {root.name!r} now (renamed or removed since). "
                "Resume with the agent tree that started the invocation, or start a new "
                "turn (the committed events stay in the session).",
                invocation_id=invocation_id,
            )
    user_content = next(
        (e.content for e in events if e.author == "user" and e.content is not None), None
    )
    first_agent = next((e.author for e in events if e.author != "user"), None)
    start_agent = root.find_agent(first_agent) if first_agent is not None else None
    return ResumePlan(invocation_id, ResumeScope(events), user_content, start_agent)


def unfinished_invocation(session: Session) -> str | None:
    """The session's latest invocation if it was run resumably and did not finish."""
    latest = _latest_invocation(session)
    if latest is None:
        return None
    marks: set[str | None] = set()
    for event in reversed(session.events):
        if event.invocation_id != latest:
            break
        marks.add(invocation_mark(event))
    if STARTED in marks and FINISHED not in marks and ENDED not in marks:
        return latest
    return None


def _latest_invocation(session: Session) -> str | None:
    for event in reversed(session.events):
        if event.invocation_id:
            return event.invocation_id
    return None
