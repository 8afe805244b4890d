"""Rewind: take a session back to before one of its invocations, keeping its whole log.

``rewind_session`` appends one event, written by ``user`` under a new invocation id, whose
``actions`` say what it does:

- ``rewind_before_invocation_id``: the invocation rewound to. That invocation and every event
  after it (up to the rewind) stay in the log but no longer reach the model
  (:mod:`eventide.history.model_view`).
- ``state_delta``: every session-scoped state key those events changed, set back to the
  value it had before them (``None`` when it had none). The value "before" is read from this
  session's own log, starting from the state the session was created with
  (``get_initial_state``): a key set at ``create_session`` and overwritten later comes back
  with its initial value (``None`` only for a session whose initial state was never
  recorded). ``temp:`` keys are never stored, so there is nothing to restore.
- ``artifact_delta``: every session artifact those events saved, with the version that now
  holds its earlier content: the old version is saved again as a new version (no version is
  ever deleted). An artifact that did not exist before gets a tombstone version
  (:func:`~eventide.artifacts.base_artifact_service.tombstone`), so it loads as absent and
  is no longer listed.

Shared data is left as it is, as google-adk 2.x does: ``app:`` and ``user:`` state and
``user:`` artifacts belong to every session of the app or user, and other sessions may have
read or changed them since. A rewind takes back one conversation; it does not undo what
other conversations rely on. To undo a shared change too, write the old value explicitly
(``PATCH`` the session's state over HTTP, or a tool that sets it).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from eventide._ids import new_invocation_id
from eventide.artifacts.base_artifact_service import (
    BaseArtifactService,
    is_user_scoped,
    tombstone,
)
from eventide.errors import InvocationNotFoundError, SessionNotFoundError, UsageError
from eventide.events import Event, EventActions
from eventide.sessions.base_session_service import BaseSessionService
from eventide.sessions.session import Session
from eventide.state import State

__all__ = ["RestorePoint", "Turn", "find_turn", "restore_point", "rewind_session", "turns_of"]

# State scopes a rewind leaves as they are: shared with other sessions, or never stored.
_NOT_RESTORED = (State.APP_PREFIX, State.USER_PREFIX, State.TEMP_PREFIX)


@dataclass(slots=True, kw_only=True)
class RestorePoint:
    """What the events from a position on changed, and what it was before them.

    Attributes:
        state: key -> the value before (``None`` when the key had none), for every
            session-scoped key the later events changed.
        artifacts: file name -> the version before (``None`` when the file had none), for
            every session artifact the later events saved.
    """

    state: dict[str, Any]
    artifacts: dict[str, int | None]


@dataclass(slots=True, kw_only=True)
class Turn:
    """One user turn still in a session's history (not rewound).

    Attributes:
        number: 1 for the session's first turn, 2 for the next, ...
        invocation_id: the invocation the user's message started.
        text: the user's message.
    """

    number: int
    invocation_id: str
    text: str


def turns_of(events: Sequence[Event]) -> list[Turn]:
    """The user turns of the session that are still in its history, in order."""
    from eventide.history.model_view import rewound_positions

    hidden = rewound_positions(events)
    turns: list[Turn] = []
    seen: set[str] = set()
    for index, event in enumerate(events):
        if (
            index in hidden
            or event.author != "user"
            or event.content is None
            or event.invocation_id in seen
        ):
            continue
        seen.add(event.invocation_id)
        text = " ".join(p.text for p in event.content.parts or () if p.text)
        turns.append(Turn(number=len(turns) + 1, invocation_id=event.invocation_id, text=text))
    return turns


def find_turn(events: Sequence[Event], target: str) -> Turn:
    """The turn ``target`` names: a turn number (``3``) or an invocation id.

    Raises:
        UsageError: no turn of the session has that number or invocation id.
    """
    turns = turns_of(events)
    for turn in turns:
        if target in (str(turn.number), turn.invocation_id):
            return turn
    if not turns:
        raise UsageError(f"Cannot rewind to {target!r}: the session has no turns yet.")
    raise UsageError(
        f"No turn {target!r} in this session: give a turn number from 1 to {len(turns)} "
        "or an invocation id of one of its turns."
    )


def restore_point(
    events: Sequence[Event], position: int, initial_state: dict[str, Any] | None = None
) -> RestorePoint:
    """What ``events[position:]`` changed in the session's own scope (not ``app:``/``user:``
    state, ``user:`` artifacts or ``temp:`` keys), with the values and versions from before.

    ``initial_state`` is the state the session was created with: a key no earlier event
    wrote had that value before (None when it is not given or lacks the key).
    """
    changed_keys: set[str] = set()
    changed_files: set[str] = set()
    for event in events[position:]:
        actions = event.actions
        changed_keys.update(k for k in actions.state_delta if not k.startswith(_NOT_RESTORED))
        changed_files.update(n for n in actions.artifact_delta if not is_user_scoped(n))
    initial = initial_state or {}
    state: dict[str, Any] = {key: initial.get(key) for key in changed_keys}
    artifacts: dict[str, int | None] = dict.fromkeys(changed_files)
    for event in events[:position]:
        actions = event.actions
        for key, value in actions.state_delta.items():
            if key in state:
                state[key] = value
        for name, version in actions.artifact_delta.items():
            if name in artifacts:
                artifacts[name] = version
    return RestorePoint(state=state, artifacts=artifacts)


def find_invocation(session: Session, invocation_id: str) -> int:
    """The position of the invocation's first event in the session's log.

    Raises:
        InvocationNotFoundError: the invocation is not in this session, or was rewound.
    """
    from eventide.history.model_view import rewound_positions

    events = session.events
    position = next((i for i, e in enumerate(events) if e.invocation_id == invocation_id), None)
    if position is None:
        raise InvocationNotFoundError(
            f"Invocation ID not found: {invocation_id}. Invocation {invocation_id!r} is not in "
            f"session {session.id!r} (it is unknown or belongs to another session); pick an "
            "invocation_id from this session's events.",
            session_id=session.id,
            invocation_id=invocation_id,
        )
    if position in rewound_positions(events):
        raise InvocationNotFoundError(
            f"Invocation {invocation_id!r} of session {session.id!r} was already rewound; "
            "rewind to an invocation that is still in the session's history.",
            session_id=session.id,
            invocation_id=invocation_id,
        )
    return position


async def rewind_session(
    *,
    session_service: BaseSessionService,
    artifact_service: BaseArtifactService | None,
    app_name: str,
    user_id: str,
    session_id: str,
    rewind_before_invocation_id: str,
) -> Event:
    """Rewind the session to before ``rewind_before_invocation_id`` (see the module docstring).

    Returns:
        The rewind event, as committed.

    Raises:
        SessionNotFoundError: the session does not exist.
        InvocationNotFoundError: the invocation is unknown, of another session, or already
            rewound. Nothing is written.
        UsageError: artifacts must be restored but no artifact service was given.
    """
    session = await session_service.get_session(
        app_name=app_name, user_id=user_id, session_id=session_id
    )
    if session is None:
        raise SessionNotFoundError(app_name=app_name, user_id=user_id, session_id=session_id)
    position = find_invocation(session, rewind_before_invocation_id)
    initial = await session_service.get_initial_state(
        app_name=app_name, user_id=user_id, session_id=session_id
    )
    point = restore_point(session.events, position, initial)
    if point.artifacts and artifact_service is None:
        raise UsageError(
            f"Rewinding session {session_id!r} restores artifacts "
            f"({', '.join(sorted(point.artifacts))}); pass the artifact service they are "
            "stored in (Runner(artifact_service=...))."
        )
    state_delta = {
        key: value for key, value in point.state.items() if session.state.get(key) != value
    }
    artifact_delta: dict[str, int] = {}
    if artifact_service is not None:
        for name, version in sorted(point.artifacts.items()):
            earlier = (
                await artifact_service.load_artifact(
                    app_name=app_name,
                    user_id=user_id,
                    session_id=session_id,
                    filename=name,
                    version=version,
                )
                if version is not None
                else None
            )
            artifact_delta[name] = await artifact_service.save_artifact(
                app_name=app_name,
                user_id=user_id,
                session_id=session_id,
                filename=name,
                artifact=earlier if earlier is not None else tombstone(),
            )
    event = Event(
        invocation_id=new_invocation_id(),
        author="user",
        actions=EventActions(
            state_delta=state_delta,
            artifact_delta=artifact_delta,
            rewind_before_invocation_id=rewind_before_invocation_id,
        ),
    )
    return await session_service.append_event(session, event)
