"""Fork: copy a session up to a chosen event into a new session, to try something else.

The new session (same app and user) gets:

- the source's initial state (``get_initial_state``, session-scoped keys only) plus
  ``eventide:forked_from`` = ``{"session_id": <source>, "event_id": <last copied event>}``,
  which records where it came from (``event_id`` is None when the source had no events);
- the events of the source up to and including the chosen one, with their ids, invocation
  ids and timestamps (so rewinds and compactions among them keep their meaning), replayed
  onto that initial state: the fork's state is the source's session state right after the
  chosen event, and a rewind in the fork restores what a rewind in the source would. (For a
  source created before sessions recorded their initial state, the fork starts from the
  source's session state at the chosen event instead.) ``app:`` and ``user:`` state is
  shared by every session of the app and user: the fork sees the current shared values,
  and the copied events carry only their session-scoped changes, so copying never writes
  old values over shared state;
- the session's artifacts as they were then: every version up to that point copied under
  the same version number (so the copied events' ``artifact_delta`` still names the right
  versions). A version that loads as absent in the source (a rewind's tombstone, or a
  deleted file) is copied as a tombstone. ``user:`` artifacts are shared already and are
  not copied.

The source session is not changed. Later turns of either session do not affect the other.
"""

from __future__ import annotations

from typing import Any

from eventide.artifacts.base_artifact_service import (
    BaseArtifactService,
    is_user_scoped,
    tombstone,
)
from eventide.errors import (
    AlreadyExistsError,
    EventNotFoundError,
    SessionNotFoundError,
    UsageError,
)
from eventide.events import Event
from eventide.history.rewind import restore_point
from eventide.sessions.base_session_service import BaseSessionService
from eventide.sessions.session import Session
from eventide.state import State

__all__ = ["FORKED_FROM_KEY", "fork_session"]

FORKED_FROM_KEY = "eventide:forked_from"
"""The state key of a fork that names its source: ``{"session_id": ..., "event_id": ...}``."""

_SHARED = (State.APP_PREFIX, State.USER_PREFIX)


async def fork_session(
    *,
    session_service: BaseSessionService,
    artifact_service: BaseArtifactService | None,
    app_name: str,
    user_id: str,
    session_id: str,
    up_to_event_id: str | None = None,
    new_session_id: str | None = None,
) -> Session:
    """Copy ``session_id`` up to ``up_to_event_id`` (its whole log when None) into a new
    session, and return the new session.

    Raises:
        SessionNotFoundError: the source session does not exist.
        EventNotFoundError: the event is not in the source session. Nothing is created.
        AlreadyExistsError: ``new_session_id`` is taken.
        UsageError: artifacts must be copied but no artifact
            service was given. Nothing is created.
    """
    source = await session_service.get_session(
        app_name=app_name, user_id=user_id, session_id=session_id
    )
    if source is None:
        raise SessionNotFoundError(app_name=app_name, user_id=user_id, session_id=session_id)
    events = source.events
    if up_to_event_id is None:
        end = len(events)
    else:
        found = next((i for i, e in enumerate(events) if e.id == up_to_event_id), None)
        if found is None:
            raise EventNotFoundError(
                f"Event {up_to_event_id!r} is not in session {session_id!r}; pick an event id "
                "from this session's events.",
                session_id=session_id,
                event_id=up_to_event_id,
            )
        end = found + 1
    initial = await session_service.get_initial_state(
        app_name=app_name, user_id=user_id, session_id=session_id
    )
    state = (
        {k: v for k, v in initial.items() if not k.startswith(_SHARED)}
        if initial is not None
        else _state_at(source, end)
    )
    state[FORKED_FROM_KEY] = {
        "session_id": session_id,
        "event_id": events[end - 1].id if end else None,
    }
    copied = events[:end]
    versions: dict[str, int] = {}
    for event in copied:
        for name, version in event.actions.artifact_delta.items():
            if not is_user_scoped(name):
                versions[name] = version
    if versions and artifact_service is None:
        raise UsageError(
            f"Forking session {session_id!r} copies artifacts ({', '.join(sorted(versions))}); "
            "pass the artifact service they are stored in (Runner(artifact_service=...))."
        )
    if new_session_id is not None and (
        await session_service.get_session(
            app_name=app_name, user_id=user_id, session_id=new_session_id
        )
        is not None
    ):
        raise AlreadyExistsError(
            f"Session {new_session_id!r} already exists for app {app_name!r} and user "
            f"{user_id!r}; fork into a new session id (or leave it out to get a fresh one)."
        )
    fork = await session_service.create_session(
        app_name=app_name, user_id=user_id, state=state, session_id=new_session_id
    )
    if artifact_service is not None:
        for name, last in sorted(versions.items()):
            for version in range(last + 1):
                part = await artifact_service.load_artifact(
                    app_name=app_name,
                    user_id=user_id,
                    session_id=session_id,
                    filename=name,
                    version=version,
                )
                # Absent in the source (a tombstone, or deleted): absent in the fork too,
                # under the same number.
                await artifact_service.save_artifact(
                    app_name=app_name,
                    user_id=user_id,
                    session_id=fork.id,
                    filename=name,
                    artifact=part if part is not None else tombstone(),
                )
    for event in copied:
        await session_service.append_event(fork, _session_scoped_copy(event))
    return fork


def _state_at(source: Session, end: int) -> dict[str, Any]:
    """The source's session-scoped state right after ``events[end - 1]``, from its current
    state and its log (for a source whose initial state was not recorded)."""
    point = restore_point(source.events, end)
    state = {k: v for k, v in source.state.items() if not k.startswith(_SHARED)}
    for key, value in point.state.items():
        if value is None:
            state.pop(key, None)
        else:
            state[key] = value
    return state


def _session_scoped_copy(event: Event) -> Event:
    copy = event.model_copy(deep=True)
    delta = copy.actions.state_delta
    if delta and any(k.startswith(_SHARED) for k in delta):
        copy.actions.state_delta = {k: v for k, v in delta.items() if not k.startswith(_SHARED)}
    return copy
