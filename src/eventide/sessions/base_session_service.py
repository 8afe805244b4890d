"""The session service contract, and the commit rules every backend shares."""

from __future__ import annotations

import asyncio
import threading
import time
from abc import ABC, abstractmethod
from collections.abc import Coroutine
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

from eventide._fastpath import fields_of
from eventide._ids import new_id
from eventide.events import Event
from eventide.sessions.session import GetSessionConfig, ListSessionsResponse, Session
from eventide.sessions.session_store import split_delta
from eventide.state import State, check_json_value

__all__ = [
    "BaseSessionService",
    "DeltaParts",
    "prepare_event_for_commit",
    "prepare_fields_for_commit",
]

_T = TypeVar("_T")


class BaseSessionService(ABC):
    """Stores sessions and commits events to them.

    Eventide's own services are all :class:`~eventide.sessions.session_service.SessionService`
    over a store; a custom backend may also implement the abstract methods directly.
    ``append_event`` is the commit point of the event loop: it validates the event, strips
    ``temp:`` keys, and hands it to ``_append_event``, which must store the event and its
    state changes atomically and update the caller's ``session`` object (state and events),
    folding in events that other writers appended since the caller read it.
    """

    # The private event loop of the *_sync methods (created on first use).
    _sync_loop: asyncio.AbstractEventLoop | None = None

    @abstractmethod
    async def create_session(
        self,
        *,
        app_name: str,
        user_id: str,
        state: dict[str, Any] | None = None,
        session_id: str | None = None,
    ) -> Session:
        """Create a session (with an initial state, scoped keys allowed) and return it.

        Raises:
            AlreadyExistsError: a session with ``session_id`` already exists (a UsageError).
        """

    @abstractmethod
    async def get_session(
        self,
        *,
        app_name: str,
        user_id: str,
        session_id: str,
        config: GetSessionConfig | None = None,
    ) -> Session | None:
        """The session with its state and (part of) its history, or None when absent."""

    @abstractmethod
    async def list_sessions(
        self,
        *,
        app_name: str,
        user_id: str | None = None,
        page_size: int | None = None,
        page_token: str | None = None,
    ) -> ListSessionsResponse:
        """The app's sessions (one user's when ``user_id`` is given), without events."""

    @abstractmethod
    async def delete_session(self, *, app_name: str, user_id: str, session_id: str) -> None:
        """Delete the session and its events. Deleting a missing session is not an error."""

    async def get_initial_state(
        self, *, app_name: str, user_id: str, session_id: str
    ) -> dict[str, Any] | None:
        """The state the session was created with (the ``state`` given to
        ``create_session``, every scope, without ``temp:`` keys).

        Rewind and fork start from it: a key set only at creation is restored, not dropped.
        None when the session does not exist or its initial state is unknown: a session
        created before the store recorded it (SQL schema version 3), or a custom service
        that does not override this method (then a rewind sets such keys to None).
        """
        return None

    async def append_event(
        self, session: Session, event: Event, *, compare_and_set: bool | None = None
    ) -> Event:
        """Commit ``event`` to ``session``: store it and apply its state changes atomically.

        A partial event is returned untouched and never stored. ``temp:`` keys are removed
        from the event's ``state_delta``. The event gets an id and timestamp if it lacks them.

        Args:
            session: the caller's copy; it gets the event, the new state, and any events
                other writers committed since it was read.
            event: the event to commit.
            compare_and_set: refuse the append (``StaleSessionError``) when ``session`` is
                behind the stored log; None uses the service's setting.

        Raises:
            InvalidStateValueError: a state value is not JSON data; nothing is stored.
            StaleSessionError: compare-and-set was asked and another writer appended first.
            SessionNotFoundError: the session does not exist (any more).
            RecordTooLargeError: the event is over the service's size limit; nothing stored.
            BackendError: the store failed; nothing of this event is stored, or it is
                stored whole (appending it again is safe: event ids are idempotent).
        """
        if event.partial:
            return event
        prepare_event_for_commit(event)
        await self._append_event(session, event, compare_and_set)
        return event

    @abstractmethod
    async def _append_event(
        self, session: Session, event: Event, compare_and_set: bool | None
    ) -> None:
        """Store the prepared event and its state changes in one atomic step."""

    async def close(self) -> None:  # noqa: B027 - optional hook, most backends hold nothing
        """Release connections. The service is unusable afterwards."""

    # --- synchronous conveniences (google-adk names), for scripts and notebooks ---
    def create_session_sync(
        self,
        *,
        app_name: str,
        user_id: str,
        state: dict[str, Any] | None = None,
        session_id: str | None = None,
    ) -> Session:
        """:meth:`create_session` from synchronous code (see :meth:`_run_sync`)."""
        return self._run_sync(
            self.create_session(
                app_name=app_name, user_id=user_id, state=state, session_id=session_id
            )
        )

    def get_session_sync(
        self,
        *,
        app_name: str,
        user_id: str,
        session_id: str,
        config: GetSessionConfig | None = None,
    ) -> Session | None:
        """:meth:`get_session` from synchronous code."""
        return self._run_sync(
            self.get_session(
                app_name=app_name, user_id=user_id, session_id=session_id, config=config
            )
        )

    def list_sessions_sync(
        self,
        *,
        app_name: str,
        user_id: str | None = None,
        page_size: int | None = None,
        page_token: str | None = None,
    ) -> ListSessionsResponse:
        """:meth:`list_sessions` from synchronous code."""
        return self._run_sync(
            self.list_sessions(
                app_name=app_name, user_id=user_id, page_size=page_size, page_token=page_token
            )
        )

    def delete_session_sync(self, *, app_name: str, user_id: str, session_id: str) -> None:
        """:meth:`delete_session` from synchronous code."""
        self._run_sync(
            self.delete_session(app_name=app_name, user_id=user_id, session_id=session_id)
        )

    def close_sync(self) -> None:
        """:meth:`close` from synchronous code; also closes the private event loop."""
        self._run_sync(self.close())
        loop, self._sync_loop = self._sync_loop, None
        if loop is not None:
            loop.close()

    def _run_sync(self, coro: Coroutine[Any, Any, _T]) -> _T:
        """Run ``coro`` to completion from synchronous code.

        Normally on this service's private event loop, kept across calls so services that
        hold connections keep them (``close_sync`` closes it). Where an event loop is
        already running in this thread (a notebook cell), on a fresh loop in a helper
        thread while the caller waits."""
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            pass
        else:
            with ThreadPoolExecutor(max_workers=1) as pool:
                return pool.submit(asyncio.run, coro).result()
        with _SYNC_LOCK:
            loop = self._sync_loop
            if loop is None or loop.is_closed():
                loop = self._sync_loop = asyncio.new_event_loop()
            return loop.run_until_complete(coro)


_TEMP = State.TEMP_PREFIX
# Sync calls share one lock: a private loop runs one coroutine at a time.
_SYNC_LOCK = threading.Lock()


# Any scoped key starts with one of these: one startswith call tells a plain key apart.
_PREFIXES = (State.TEMP_PREFIX, State.APP_PREFIX, State.USER_PREFIX)

# (session, app, user) parts of a delta; None for an empty part.
DeltaParts = tuple[dict[str, Any] | None, dict[str, Any] | None, dict[str, Any] | None]
_NO_PARTS: DeltaParts = (None, None, None)


def prepare_event_for_commit(event: Event) -> DeltaParts:
    """Validate and normalize an event before it is stored (shared by every backend), and
    return its ``state_delta`` split by scope.

    The event gets an id and a timestamp if it lacks them; every value but a ``temp:`` one
    must be JSON data (``InvalidStateValueError``); ``temp:`` keys are removed from the
    delta. One pass over the delta does the checks and finds whether any key is scoped: a
    delta of session keys only (the common one) is its own session part, with no split.
    Fields are read through ``_fastpath.fields_of``: this runs for every committed event.
    """
    return prepare_fields_for_commit(event, fields_of(event))


def prepare_fields_for_commit(event: Event, fields: dict[str, Any]) -> DeltaParts:
    """:func:`prepare_event_for_commit` for a caller that holds the event's fields already
    (``fields_of(event)``: the session service's commit reads them too)."""
    if not fields["id"]:
        event.id = new_id()
    if not fields["timestamp"]:
        event.timestamp = time.time()
    delta: dict[str, Any] = fields["actions"].state_delta
    if not delta:
        return _NO_PARTS
    scoped = False
    for key, value in delta.items():
        if key.startswith(_PREFIXES):
            scoped = True
            if key.startswith(_TEMP):
                continue  # temp: values need not be JSON data: they are never stored
        check_json_value(key, value)
    if not scoped:
        return delta, None, None
    for key in [k for k in delta if k.startswith(_TEMP)]:
        del delta[key]
    return split_delta(delta) if delta else _NO_PARTS
