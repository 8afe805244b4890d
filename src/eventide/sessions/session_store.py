"""The seam between ``SessionService`` and its stores: write your own store against it.

A store (Eventide's: in memory, SQLite, PostgreSQL; yours: Redis, MongoDB, Firestore, ...)
only moves rows: an event's JSON text and plain state dicts, each operation atomic. Every
rule of the session contract -- scopes by prefix, ``temp:`` removal, id and JSON validation,
size limits, folding stale copies, compare-and-set, idempotency by event id, the event
objects and the cache of parsed events -- lives once, in
:class:`eventide.sessions.session_service.SessionService`; a store implements exactly the
operations of :class:`SessionStore` and reports what happened. A store of your own plugs in
as ``SessionService(MyStore(...))``, which is a complete ``BaseSessionService`` for a
``Runner``.

What a store keeps, per app ``app_name``:

- **sessions**, keyed by ``(user_id, session_id)``: the session's own state (a dict), its
  update time, the number of events stored (``last_seq``), and the state it was created
  with (every scope, for rewind and fork);
- **events**, per session, numbered 1, 2, 3, ... in commit order, each with its id (unique
  in the session) and its JSON text, kept verbatim (``load`` hands it back as it came);
- the **app's state** (``app:`` keys, shared by its sessions) and each **user's state**
  (``user:`` keys, shared by the user's sessions in the app).

The rules a store must keep (the contract and differential suites check every one of them:
:mod:`eventide.testing.session_contract`, :mod:`eventide.testing.session_differential`):

- **An append is atomic.** The event, the session's ``last_seq`` and update time, and the
  three state merges commit together or not at all, under a lock per session (a
  transaction, a row lock, a Lua script, a conditional write), so that two writers of one
  session never get the same number nor lose each other's state keys.
- **Merges are shallow.** A delta's keys replace the stored keys (``dict.update``); values
  are JSON data (checked by the service) and come back as JSON would give them (a tuple as a
  list): store them as JSON.
- **Stored values are the store's own.** Copy what you keep; the service may reuse or change
  the dicts it passed after the call returns, and the caller may change what a read returned.
- **Reads read only what they return.** ``load`` with ``after_seq``/``upto_seq``/
  ``num_recent``/``after_timestamp`` should not fetch the whole log (the Runner reads a
  session every turn, from the last event it has).
- **Errors.** A failure of the database raises :class:`~eventide.errors.BackendError` (what
  happened, what to do); a stored record that no longer parses raises
  :class:`~eventide.errors.CorruptRecordError` naming it. Nothing half-written stays.
- **Event loops.** The service may be used from several event loops one after another (each
  test's, ``Runner.run``'s private one): a connection bound to a loop must be replaced when
  the running loop changes (see :mod:`eventide._postgres_database` for one way).

The helpers below (:func:`split_delta`, :func:`initial_state`, :func:`loads_state`,
:func:`encode_json`) are what Eventide's stores share; yours may use them.
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
    """What ``SessionService`` needs from a store (see the module docstring for the rules).

    Attributes:
        dialect: a short name of the store's kind (``memory``, ``sqlite``, ``postgresql``,
            ``redis``, ...), for messages and for code that must know.
    """

    dialect: str

    async def migrate(self) -> int:
        """Prepare the store (create or upgrade its tables); called once, before any other
        operation. Return the schema version found (0 for a new database, or when the store
        has no schema)."""
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
        """Create a session, atomically: its own state is ``deltas[0]``; ``deltas[1]`` is
        merged into the app's state and ``deltas[2]`` into the user's (the three parts of
        the initial state, split by scope; see :func:`initial_state` for the state to keep
        as the session's initial one). ``now`` is its update time.

        Return the session's merged state (app, then user, then session keys: later ones
        win), or None, changing nothing, when the session already exists."""
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
        """Read a session, from one snapshot: its merged state, ``last_seq``, update time
        and the events numbered above ``after_seq`` (0 when None) up to ``upto_seq`` (the
        log's end when None), only those whose timestamp is at least ``after_timestamp``
        (when given), and of those only the last ``num_recent`` (when given); oldest first.
        None when the session does not exist."""
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
        """The app's sessions (only ``user_id``'s when given) ordered by
        ``(user_id, session_id)``, starting after the pair ``after`` (when given), at most
        ``limit`` of them (all when None), each with its merged state."""
        ...

    async def delete(self, *, app_name: str, user_id: str, session_id: str) -> None:
        """Delete a session and its events (the app's and user's states stay); nothing when
        it does not exist."""
        ...

    async def append(self, request: AppendRequest) -> AppendOutcome:
        """Commit one event and its state deltas, atomically, under the session's lock:

        1. no such session: ``missing``, nothing written;
        2. ``compare_and_set`` and the log is not ``expected_seq`` long: ``stale``, nothing
           written;
        3. the event id is already stored for the session: ``duplicate``, nothing written
           (a retried append);
        4. else the event is stored as number ``last_seq + 1``, the session's ``last_seq``
           and update time (the event's timestamp) move to it, and the three deltas merge
           into the session's, the app's and the user's state: ``committed``.

        Whenever the log was longer than ``expected_seq`` (other writers got in first), the
        outcome may also carry, from the same snapshot, the events numbered
        ``expected_seq + 1`` up to the append's own and the merged state (``missed`` and
        ``state``); a store that leaves both None makes the service read them separately.
        """
        ...

    async def close(self) -> None:
        """Release connections and threads; no operation follows."""
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
