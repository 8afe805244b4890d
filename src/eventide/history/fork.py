"""Fork: copy a session up to a chosen event into a new session, to try something else.

The new session (same app and user) gets:

- the events of the source up to and including the chosen one, with their ids, invocation
  ids and timestamps (so rewinds and compactions among them keep their meaning);
- the session's own state as it was right after that event (the rule of
  :func:`eventide.history.rewind.restore_point`, applied to the events after it). ``app:``
  and ``user:`` state is shared by every session of the app and user: the fork sees the
  current shared values, and the copied events carry only their session-scoped changes, so
  copying never writes old values over shared state;
- the session's artifacts as they were then, every version up to that point copied under
  the same version number (so the copied events' ``artifact_delta`` still names the right
  versions). ``user:`` artifacts are shared already and are not copied.

The source session is not changed. Later turns of either session do not affect the other.
"""

from __future__ import annotations

from eventide.artifacts.base_artifact_service import BaseArtifactService, is_user_scoped
from eventide.errors import EventNotFoundError, SessionNotFoundError, UsageError
from eventide.events import Event
from eventide.history.rewind import restore_point
from eventide.sessions.base_session_service import BaseSessionService
from eventide.sessions.session import Session
from eventide.state import State

__all__ = ["fork_session"]

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
        UsageError: ``new_session_id`` is taken, or artifacts must be copied but no artifact
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
    point = restore_point(events, end)
    state = {k: v for k, v in source.state.items() if not k.startswith(_SHARED)}
    for key, value in point.state.items():
        if key.startswith(_SHARED):
            continue
        if value is None:
            state.pop(key, None)
        else:
            state[key] = value
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
        raise UsageError(
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
                if part is None:
                    break  # a version deleted from the source: copy what is left
                await artifact_service.save_artifact(
                    app_name=app_name,
                    user_id=user_id,
                    session_id=fork.id,
                    filename=name,
                    artifact=part,
                )
    for event in copied:
        await session_service.append_event(fork, _session_scoped_copy(event))
    return fork


def _session_scoped_copy(event: Event) -> Event:
    copy = event.model_copy(deep=True)
    delta = copy.actions.state_delta
    if delta and any(k.startswith(_SHARED) for k in delta):
        copy.actions.state_delta = {k: v for k, v in delta.items() if not k.startswith(_SHARED)}
    return copy
