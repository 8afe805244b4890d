"""Checking that an invocation can be resumed, and where the Runner starts again."""

from __future__ import annotations

from dataclasses import dataclass

from eventide import types
from eventide.agents.base_agent import BaseAgent
from eventide.errors import InvocationNotFoundError, ResumeError
from eventide.events import Event
from eventide.runtime.markers import (
    ANSWERED,
    ENDED,
    FINISHED,
    STARTED,
    invocation_status,
    is_log_maintenance,
)
from eventide.runtime.replay import ResumeScope
from eventide.sessions.session import Session

__all__ = [
    "Pickup",
    "ResumePlan",
    "paused_invocation",
    "pickup",
    "plan_resume",
    "unfinished_invocation",
]

_RUNNING = (STARTED, ANSWERED)


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


@dataclass(slots=True, frozen=True)
class Pickup:
    """An unfinished invocation that a ``run_async`` call continues (a resumable app).

    Attributes:
        invocation_id: the invocation.
        answers: the new message answers the calls it paused for: it is committed in it
            (on ``branch``, the calls' branch) and the invocation goes on from its log.
        then_new: after it, the new message runs in a new invocation (``resume_unfinished``).
    """

    invocation_id: str
    answers: bool = False
    branch: str | None = None
    then_new: bool = False


def pickup(
    session: Session,
    message: types.Content | str | None,
    has_state_delta: bool,
    invocation_id: str | None,
    resume_unfinished: bool,
) -> Pickup | None:
    """The invocation a ``run_async`` call continues, if any: the paused one the message
    answers; the one ``invocation_id`` names (with no message and no state); with
    ``resume_unfinished``, the session's latest if it did not finish."""
    if message is not None:
        paused = paused_invocation(session, _answer_ids(types.to_content(message)))
        if paused is not None:
            return Pickup(paused[0], answers=True, branch=paused[1])
    if invocation_id is not None and message is None and not has_state_delta:
        if any(e.invocation_id == invocation_id for e in session.events):
            return Pickup(invocation_id)
    elif resume_unfinished:
        unfinished = unfinished_invocation(session)
        if unfinished is not None:
            return Pickup(unfinished, then_new=unfinished != invocation_id)
    return None


def _answer_ids(content: types.Content) -> set[str]:
    """The ids of the function responses in a message (answers to paused calls)."""
    return {
        p.function_response.id
        for p in content.parts or []
        if p.function_response is not None and p.function_response.id
    }


def plan_resume(root: BaseAgent, session: Session, invocation_id: str | None) -> ResumePlan:
    """Where to resume ``invocation_id`` (default: the session's latest invocation).

    Raises:
        InvocationNotFoundError: the session has no such invocation (or none at all).
        ResumeError: the invocation is not the session's latest, finished, ended waiting
            for the user, was not run resumably, or names agents the tree no longer has.
    """
    latest = latest_invocation(session)
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
        if all(is_log_maintenance(e) for e in events):
            raise ResumeError(
                f"{invocation_id!r} is the invocation of a rewind or a compaction of session "
                f"{session.id!r}, not of a turn; there is nothing to resume.",
                invocation_id=invocation_id,
            )
        if _rewound(session, invocation_id):
            raise ResumeError(
                f"Invocation {invocation_id!r} of session {session.id!r} was rewound (a "
                "rewind took the session back to before it); it cannot be resumed. Send a "
                "new message to start a new turn.",
                invocation_id=invocation_id,
            )
        raise ResumeError(
            f"Invocation {invocation_id!r} is not the latest of session {session.id!r} "
            f"(later turns ran after it, the latest is {latest!r}); only the latest "
            "invocation can be resumed.",
            invocation_id=invocation_id,
        )
    status = invocation_status(events)
    if status is None:
        raise ResumeError(
            f"Invocation {invocation_id!r} was not run with resumability on, so its events "
            "do not record where it was. Run the app as App(..., resumability_config="
            "ResumabilityConfig(is_resumable=True)) for future turns; start a new turn now.",
            invocation_id=invocation_id,
        )
    if status == FINISHED:
        raise ResumeError(
            f"Invocation {invocation_id!r} finished; there is nothing to resume. Send a new "
            "message to start the next turn.",
            invocation_id=invocation_id,
        )
    if status == ENDED:
        raise ResumeError(
            f"Invocation {invocation_id!r} ended early (it paused for the user's answer to "
            "a tool call, or a callback ended it); there is nothing to resume. Answer the "
            "paused call (a message with a function response of the call's id) to continue "
            "it.",
            invocation_id=invocation_id,
        )
    for event in events:
        # A workflow's node (an agent node's agent, a dynamic child) is found by the
        # workflow, from its node path: the tree of agents does not list it.
        if event.author != "user" and root.find_agent(_agent_of(event)) is None:
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
    first_agent = next((_agent_of(e) for e in events if e.author != "user"), None)
    start_agent = root.find_agent(first_agent) if first_agent is not None else None
    return ResumePlan(invocation_id, ResumeScope.of(events), user_content, start_agent)


def _agent_of(event: Event) -> str:
    """The agent of the tree that committed ``event``: its author, or for an event of a
    workflow's node, the workflow at the root of its node path (``wf@1/writer@1``: ``wf``)."""
    path = event.node_info.path
    if path:
        return path.split("/", 1)[0].rsplit("@", 1)[0]
    return event.author


def unfinished_invocation(session: Session) -> str | None:
    """The session's latest invocation if it was run resumably and did not finish."""
    latest = latest_invocation(session)
    if latest is None:
        return None
    events = [e for e in session.events if e.invocation_id == latest]
    return latest if invocation_status(events) in _RUNNING else None


def paused_invocation(session: Session, answer_ids: set[str]) -> tuple[str, str | None] | None:
    """The session's latest invocation if it paused waiting for the user and the calls
    ``answer_ids`` (the ids of the function responses of a new message) are its own; with
    the branch the answer belongs on (the calls' branch when they share one)."""
    if not answer_ids:  # the common case, checked first: latest_invocation reads the whole log
        return None
    latest = latest_invocation(session)
    if latest is None:
        return None
    events = [e for e in session.events if e.invocation_id == latest]
    if invocation_status(events) != ENDED:
        return None
    branches = {e.branch for e in events for c in e.get_function_calls() if c.id in answer_ids}
    found = {c.id for e in events for c in e.get_function_calls() if c.id in answer_ids}
    if found != answer_ids:
        return None
    return latest, branches.pop() if len(branches) == 1 else None


def latest_invocation(session: Session) -> str | None:
    """The invocation of the session's latest turn: rewinds and compactions are not turns,
    and an invocation a rewind took back is not in the history any more."""
    from eventide.history.model_view import rewound_positions

    events = session.events
    hidden = rewound_positions(events)
    for position in range(len(events) - 1, -1, -1):
        event = events[position]
        if event.invocation_id and position not in hidden and not is_log_maintenance(event):
            return event.invocation_id
    return None


def _rewound(session: Session, invocation_id: str) -> bool:
    from eventide.history.model_view import rewound_positions

    hidden = rewound_positions(session.events)
    positions = [i for i, e in enumerate(session.events) if e.invocation_id == invocation_id]
    return bool(positions) and all(i in hidden for i in positions)
