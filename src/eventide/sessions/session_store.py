"""The seam between ``SessionService`` and its stores.

A store (in memory, SQLite, PostgreSQL) only moves rows: JSON text and plain dicts, each
operation atomic. Every rule of the session contract -- scopes by prefix, ``temp:`` removal,
id and JSON validation, size limits, folding stale copies, compare-and-set, idempotency by
event id -- lives once, in :class:`eventide.sessions.session_service.SessionService`; a store
implements exactly the operations below and reports what happened.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Protocol, cast

from pydantic_core import to_json

from eventide.errors import CorruptRecordError

__all__ = [
    "AppendOutcome",
    "AppendRequest",
    "ListedSession",
    "LoadedSession",
    "SessionStore",
    "StoredEvent",
    "dumps_json",
    "encode_json",
    "initial_state",
    "listed_session",
    "loads_state",
    "merged_state",
    "split_delta",
]


@dataclass(slots=True)
class AppendRequest:
    """One event to commit, already validated and serialized: the argument of
    ``SessionStore.append``.

    Built positionally (in the field order) by ``SessionService`` once per committed event;
    a store reads the fields it needs. Keyword construction of its dozen fields cost about
    200 ns more per event than positional.

    Attributes:
        app_name, user_id, session_id: the session.
        event_id: the event's id (an id already stored for the session makes the append a
            no-op: ``duplicate``).
        invocation_id: the event's invocation.
        timestamp: the event's time (also the session's new update time).
        event_json: the event as JSON text (what ``load`` hands back).
        session_delta, app_delta, user_delta: the event's state delta split by scope
            (``temp:`` keys removed), None for an empty part. They may be the event's own
            dict: a store copies what it keeps.
        expected_seq: the caller's log position (how many events its copy has seen).
        compare_and_set: commit only when the stored log is exactly ``expected_seq`` long
            (else ``stale``).
    """

    app_name: str
    user_id: str
    session_id: str
    event_id: str
    invocation_id: str
    timestamp: float
    event_json: str
    session_delta: dict[str, Any] | None
    app_delta: dict[str, Any] | None
    user_delta: dict[str, Any] | None
    expected_seq: int
    compare_and_set: bool


@dataclass(slots=True)
class StoredEvent:
    """An event row: its sequence number, id and JSON text."""

    seq: int
    event_id: str
    event_json: str


@dataclass(slots=True)
class AppendOutcome:
    """What an append did.

    Attributes:
        status: ``committed``; ``duplicate`` (the id was already stored: nothing written);
            ``stale`` (compare-and-set refused: nothing written); ``missing`` (no session).
        seq: the event's sequence number when committed; otherwise the log's length.
        before: the log's length just before this append (under the lock).
        missed: when the stored log had moved past ``expected_seq``, the events in between
            (and for a duplicate, up to the log's end), read in the same transaction, or
            None when the store leaves it to a separate read.
        state: the merged state (session + user + app) when ``missed`` is set.
    """

    status: str
    seq: int
    before: int
    missed: list[StoredEvent] | None = None
    state: dict[str, Any] | None = None


@dataclass(slots=True, kw_only=True)
class LoadedSession:
    """A session row, its merged state and the requested events (oldest first)."""

    state: dict[str, Any]
    last_seq: int
    update_time: float
    events: list[StoredEvent]


@dataclass(slots=True, kw_only=True)
class ListedSession:
    """A session as ``list`` returns it: ids, update time and merged state."""

    user_id: str
    session_id: str
    update_time: float
    state: dict[str, Any]


class SessionStore(Protocol):
    """What ``SessionService`` needs from a store.

    ``append`` is one atomic step: under the session's write lock it checks the session
    exists, refuses when ``compare_and_set`` is asked and the log is not ``expected_seq``
    long, skips an event id already stored (``duplicate``), else stores the event as number
    ``last_seq + 1`` and merges the three deltas into the session's, the app's and the
    user's state. Whenever the log had moved past ``expected_seq``, it also returns (from
    the same snapshot, or None to let the service read them) the events the caller's copy
    lacks and the merged state.
    """

    dialect: str

    async def migrate(self) -> int:
        """Bring the schema up to date; return the version found before."""
        ...

    async def create(
        self,
        *,
        app_name: str,
        user_id: str,
        session_id: str,
        deltas: tuple[dict[str, Any], dict[str, Any], dict[str, Any]],
        now: float,
    ) -> dict[str, Any] | None:
        """Insert a session; return its merged state, or None when the id is taken."""
        ...

    async def load(
        self,
        *,
        app_name: str,
        user_id: str,
        session_id: str,
        after_seq: int | None,
        upto_seq: int | None,
        num_recent: int | None,
        after_timestamp: float | None,
    ) -> LoadedSession | None:
        """Read a session with (part of) its events, or None when absent."""
        ...

    async def load_initial_state(
        self, *, app_name: str, user_id: str, session_id: str
    ) -> dict[str, Any] | None:
        """The state the session was created with (every scope), or None when the session
        does not exist or was created before the store recorded it."""
        ...

    async def list(
        self,
        *,
        app_name: str,
        user_id: str | None,
        limit: int | None,
        after: tuple[str, str] | None,
    ) -> list[ListedSession]:
        """The app's (or one user's) sessions ordered by (user_id, session_id)."""
        ...

    async def delete(self, *, app_name: str, user_id: str, session_id: str) -> None:
        """Delete a session and its events."""
        ...

    async def append(self, request: AppendRequest) -> AppendOutcome:
        """Commit one event and its state deltas atomically (see the class docstring)."""
        ...

    async def close(self) -> None:
        """Release connections and threads."""
        ...


def split_delta(
    delta: dict[str, Any],
) -> tuple[dict[str, Any] | None, dict[str, Any] | None, dict[str, Any] | None]:
    """Split a temp-free delta into its (session, app, user) parts; None for an empty part."""
    session: dict[str, Any] | None = None
    app: dict[str, Any] | None = None
    user: dict[str, Any] | None = None
    for key, value in delta.items():
        if key.startswith("app:"):
            if app is None:
                app = {}
            app[key] = value
        elif key.startswith("user:"):
            if user is None:
                user = {}
            user[key] = value
        else:
            if session is None:
                session = {}
            session[key] = value
    return session, app, user


def initial_state(
    deltas: tuple[dict[str, Any], dict[str, Any], dict[str, Any]],
) -> dict[str, Any]:
    """The state a session is created with, from the (session, app, user) parts ``create``
    gets: one dict, as given to ``create_session`` (without ``temp:`` keys)."""
    session_state, app_delta, user_delta = deltas
    return {**app_delta, **user_delta, **session_state}


def loads_state(text: str | None, where: str) -> dict[str, Any]:
    """Parse a stored state column; a hand-edited, unparsable one is a CorruptRecordError."""
    if text is None:
        return {}
    try:
        value = json.loads(text)
    except ValueError as exc:
        raise CorruptRecordError(
            f"The stored state of {where} is not valid JSON ({exc}). Repair or delete the "
            "row; the rest of the database is unaffected."
        ) from exc
    if not isinstance(value, dict):
        raise CorruptRecordError(
            f"The stored state of {where} is a JSON {type(value).__name__}, not an object. "
            "Repair or delete the row; the rest of the database is unaffected."
        )
    return cast("dict[str, Any]", value)


def dumps_json(value: dict[str, Any]) -> str:
    """Compact JSON text for a state dict."""
    return encode_json(value)


def encode_json(value: Any) -> str:
    """Compact JSON text (UTF-8, not ASCII-escaped) for JSON data.

    pydantic_core's encoder (Rust) costs about a tenth of ``json``'s for a small delta. It
    would write a NaN or infinity as null and encode types JSON lacks, where ``json``
    raises: every value reaching a store was checked to be JSON data first
    (``check_json_value``).
    """
    return to_json(value).decode()


def merged_state(row: Any, app_name: str, user_id: str, session_id: str) -> dict[str, Any]:
    """Merge the (session, app, user) state columns of a ``_SESSION_WITH_STATES`` row."""
    state = loads_state(row[4], f"app {app_name!r}")
    state.update(loads_state(row[5], f"user {user_id!r} of app {app_name!r}"))
    state.update(loads_state(row[1], f"session {session_id!r}"))
    return state


def listed_session(row: Any, app_name: str) -> ListedSession:
    """A ``ListedSession`` from a (user_id, id, update_time, session state, app state,
    user state) row."""
    user_id, session_id = row[0], row[1]
    state = loads_state(row[4], f"app {app_name!r}")
    state.update(loads_state(row[5], f"user {user_id!r} of app {app_name!r}"))
    state.update(loads_state(row[3], f"session {session_id!r}"))
    return ListedSession(
        user_id=user_id, session_id=session_id, update_time=float(row[2]), state=state
    )
