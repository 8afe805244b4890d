"""The Runner's session-history operations (``rewind_async``, ``fork_session_async``),
kept beside the history code they call so ``runner.py`` stays the commit loop.

:class:`SessionHistoryMethods` is a mixin of :class:`eventide.Runner`: it reads the Runner's
services and settings and imports the history modules when first used (most apps never
rewind or fork, and a cold import stays small).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from eventide.artifacts.base_artifact_service import BaseArtifactService
    from eventide.events import Event
    from eventide.run_config import RunConfig
    from eventide.sessions.base_session_service import BaseSessionService
    from eventide.sessions.session import Session

__all__ = ["SessionHistoryMethods"]


class SessionHistoryMethods:
    """Rewind and fork, on the services of the Runner this is mixed into."""

    app_name: str
    session_service: BaseSessionService
    artifact_service: BaseArtifactService | None
    auto_create_session: bool

    async def rewind_async(
        self,
        *,
        user_id: str,
        session_id: str,
        rewind_before_invocation_id: str,
        run_config: RunConfig | None = None,
    ) -> Event:
        """Rewind the session to before an invocation: append (and return) an event that
        restores the session's state and artifacts to what they were then (shared
        ``app:``/``user:`` data is left as it is); the later turns stay in the log but no
        longer reach the model (see :mod:`eventide.history.rewind`).

        ``run_config`` is accepted as google-adk's is, and not used: a rewind reads the
        session's whole history. With ``auto_create_session``, a missing session is created
        first (as ``run_async`` does), so the rewind then fails on the unknown invocation.

        Raises:
            SessionNotFoundError: the session does not exist (and is not created).
            InvocationNotFoundError: the invocation is unknown, of another session, or was
                already rewound; nothing is written.
        """
        from eventide.history.rewind import rewind_session

        del run_config
        if self.auto_create_session:
            found = await self.session_service.get_session(
                app_name=self.app_name, user_id=user_id, session_id=session_id
            )
            if found is None:
                await self.session_service.create_session(
                    app_name=self.app_name, user_id=user_id, session_id=session_id
                )
        return await rewind_session(
            session_service=self.session_service,
            artifact_service=self.artifact_service,
            app_name=self.app_name,
            user_id=user_id,
            session_id=session_id,
            rewind_before_invocation_id=rewind_before_invocation_id,
        )

    async def fork_session_async(
        self,
        *,
        user_id: str,
        session_id: str,
        up_to_event_id: str | None = None,
        new_session_id: str | None = None,
    ) -> Session:
        """Copy the session up to and including ``up_to_event_id`` (all of it when None) into
        a new session: its state then, its artifacts by version and its events (see
        :mod:`eventide.history.fork`). Returns the new session.

        Raises:
            SessionNotFoundError: the session does not exist.
            EventNotFoundError: the event is not in the session; nothing is created.
        """
        from eventide.history.fork import fork_session

        return await fork_session(
            session_service=self.session_service,
            artifact_service=self.artifact_service,
            app_name=self.app_name,
            user_id=user_id,
            session_id=session_id,
            up_to_event_id=up_to_event_id,
            new_session_id=new_session_id,
        )
