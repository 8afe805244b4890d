"""``SessionService``: the session contract, written once, over a ``SessionStore``.

Every session service is this class over one store that only moves rows
(:mod:`eventide.sessions.session_store`): ``InMemorySessionService`` over the in-memory
store, ``SqlSessionService`` over the SQLite or the PostgreSQL store. The rules below live
here and nowhere else, so the three backends cannot disagree (the differential test,
``tests/sessions/test_differential.py``, drives all three with the same random operations).

Semantics:

- **The event log is the truth.** Each session's events are numbered 1, 2, 3, ... in commit
  order; the stored state is the fold of the committed events' ``state_delta`` in that order
  (``app:`` keys in the app's shared state, ``user:`` keys in the user's, the rest in the
  session's; ``temp:`` keys and partial events are never stored).
- **One append is one transaction.** The event row and its session, user and app state
  changes commit together or not at all. State updates are read-modify-write under the
  session's write lock (SQLite: ``BEGIN IMMEDIATE``; PostgreSQL: ``SELECT ... FOR UPDATE``
  on the session row and ``jsonb ||`` merges in the same statement), so concurrent writers
  never lose each other's keys.
- **Many writers.** Any number of tasks and processes may append to one session. None is
  lost or applied twice; their order is the commit order.
- **Idempotent by event id.** Appending an event whose id is already stored for the session
  is a no-op: no second row, no second application of its state. Retrying an append after a
  lost connection is therefore always safe.
- **Stale copies are brought up to date, not refused.** A ``Session`` object remembers how
  much of the log it has seen. If other writers appended since it was read, the append still
  commits, and the caller's object gets their events and the fresh state folded in, in log
  order, before its own event. With ``compare_and_set=True`` (on the service, or per call
  through :meth:`append_event`) such an append is refused with
  :class:`~eventide.errors.StaleSessionError` and nothing is stored.
- **Reads read only what they return.** ``get_session`` with ``num_recent_events`` /
  ``after_timestamp`` reads those events through an index (newest first, limited), never the
  whole history; ``list_sessions`` pages by key (``page_size``, ``page_token``) and returns
  sessions without events.
- **Durability.** SQLite defaults to ``synchronous="NORMAL"`` under WAL: a commit survives
  any process crash (SIGKILL included), but an OS crash or power loss may drop the last
  commits; ``synchronous="FULL"`` fsyncs every commit (about 1 ms more per event).
  PostgreSQL follows the server's settings.
- **Failures.** A store failure raises :class:`~eventide.errors.BackendError`; what was
  committed before stays committed. A stored record that no longer parses raises
  :class:`~eventide.errors.CorruptRecordError` naming the session and event; other sessions
  stay readable. An event bigger than ``max_event_bytes`` raises
  :class:`~eventide.errors.RecordTooLargeError` and nothing is stored. After a lost
  connection, the next operation reconnects (on PostgreSQL, an operation that is safe to
  repeat -- a read, an append, a delete -- is retried once on a fresh connection).
- **Ids and values.** A ``session_id`` that is empty or only whitespace means "none given"
  (a fresh id); surrounding whitespace is removed. State values must be JSON data
  (``InvalidStateValueError`` otherwise, nothing stored); they are stored as JSON, so every
  backend hands back the same values (a tuple comes back as a list).
- **Event loops.** The service may be used from several event loops one after another (each
  test's loop, ``Runner.run``'s private loop). Call ``await service.close()`` when done.
"""

from __future__ import annotations

import base64
import json
import time
from collections import OrderedDict
from collections.abc import Awaitable
from typing import Any

from eventide._fastpath import LentList, fields_of, write_fields
from eventide._ids import new_id
from eventide.errors import (
    AlreadyExistsError,
    CorruptRecordError,
    RecordTooLargeError,
    SessionNotFoundError,
    StaleSessionError,
    UsageError,
)
from eventide.events import Event
from eventide.sessions.base_session_service import BaseSessionService, prepare_fields_for_commit
from eventide.sessions.session import (
    GetSessionConfig,
    ListSessionsResponse,
    Session,
    check_session_config,
)
from eventide.sessions.session_store import (
    AppendOutcome,
    AppendRequest,
    LoadedSession,
    SessionStore,
    StoredEvent,
    dumps_json,
    split_delta,
)
from eventide.state import State, check_json_value

__all__ = ["SessionService"]

DEFAULT_MAX_EVENT_BYTES = 16 * 1024 * 1024
"""The default ``max_event_bytes``: the largest event (as JSON) a store accepts."""


class SessionService(BaseSessionService):
    """The session contract over a store. See the module docstring.

    Args:
        store: where rows live (``InMemorySessionStore``, ``SqliteSessionStore``,
            ``PostgresSessionStore``).
        compare_and_set: refuse (``StaleSessionError``) an append whose session copy is
            behind the stored log, instead of folding the newer events in.
        max_event_bytes: the largest event (as JSON) the store accepts.
    """

    def __init__(
        self,
        store: SessionStore,
        *,
        compare_and_set: bool = False,
        max_event_bytes: int = DEFAULT_MAX_EVENT_BYTES,
    ) -> None:
        self._store = store
        self.compare_and_set = compare_and_set
        self.max_event_bytes = max_event_bytes
        # Parsed events of recently read sessions (see _get_whole_session).
        self._parsed: OrderedDict[tuple[str, str, str], _ParsedLog] = OrderedDict()
        self._max_cached_sessions = 256
        # True once migrated and until closed: the hot paths then use the store directly
        # instead of awaiting _open (a coroutine per call).
        self._ready = False
        self._closed = False

    @property
    def dialect(self) -> str:
        """The store's kind: ``memory``, ``sqlite`` or ``postgresql``."""
        return self._store.dialect

    async def _open(self) -> SessionStore:
        if self._closed:
            raise UsageError(
                f"This {type(self).__name__} was closed; create a new one to use it again."
            )
        if not self._ready:
            await self._store.migrate()
            self._ready = True
        return self._store

    # --- the contract ---
    async def create_session(
        self,
        *,
        app_name: str,
        user_id: str,
        state: dict[str, Any] | None = None,
        session_id: str | None = None,
    ) -> Session:
        store = self._store if self._ready else await self._open()
        sid = session_id.strip() if session_id and session_id.strip() else new_id()
        deltas: tuple[dict[str, Any], dict[str, Any], dict[str, Any]] = ({}, {}, {})
        if state:
            clean = {k: v for k, v in state.items() if not k.startswith(State.TEMP_PREFIX)}
            for key, value in clean.items():
                check_json_value(key, value)
            session_part, app_part, user_part = split_delta(clean)
            deltas = (session_part or {}, app_part or {}, user_part or {})
            size = sum(len(dumps_json(d).encode()) for d in deltas)
            if size > self.max_event_bytes:
                raise RecordTooLargeError(
                    what="The initial state",
                    session_id=sid,
                    size=size,
                    limit=self.max_event_bytes,
                )
        now = time.time()
        merged = await store.create(
            app_name=app_name, user_id=user_id, session_id=sid, deltas=deltas, now=now
        )
        if merged is None:
            raise AlreadyExistsError(
                f"Session {sid!r} already exists for app {app_name!r} and user {user_id!r}; "
                "use get_session to load it or pick another session_id."
            )
        return Session(
            id=sid, app_name=app_name, user_id=user_id, state=merged, last_update_time=now
        )

    async def get_session(
        self,
        *,
        app_name: str,
        user_id: str,
        session_id: str,
        config: GetSessionConfig | None = None,
    ) -> Session | None:
        store = self._store if self._ready else await self._open()
        if config is None:
            return await self._get_whole_session(store, app_name, user_id, session_id)
        check_session_config(config)
        loaded = await store.load(
            app_name=app_name,
            user_id=user_id,
            session_id=session_id,
            after_seq=None,
            upto_seq=None,
            num_recent=config.num_recent_events,
            after_timestamp=config.after_timestamp,
        )
        if loaded is None:
            return None
        events = self._parse(loaded.events, app_name, user_id, session_id)
        return _session(app_name, user_id, session_id, loaded, events)

    async def _get_whole_session(
        self, store: SessionStore, app_name: str, user_id: str, session_id: str
    ) -> Session | None:
        """The whole session, parsing only the events committed since the last read, and
        copying the history only when a caller still holds the last read's list.

        Parsing stored JSON is most of the cost of reading a long session (about 30 us per
        event here), and the Runner reads the whole session every turn. So the parsed events
        of recently read sessions are kept (LRU); a read fetches the rows from the last kept
        one on, checks that row's id is still the kept one (the session was not deleted and
        recreated), and parses only what is new. Other writers' events are picked up since
        they are in the log past the kept position.

        Copying the kept list for every read would still cost the whole history per turn (a
        reference count written in every event object, and the copy's release after the
        turn: 1.2x the turn at 5,000 events). So the kept list itself is lent to the session
        returned, and taken back by the next read when nobody holds it any more and it was
        only appended to (see :class:`~eventide._fastpath.LentList`): what the borrower
        appended is dropped and the log's new events are parsed in its place. A list still
        held elsewhere is left to its holder and the next read lends a copy of the kept part;
        a list changed otherwise than by appending is not trusted and the session is read
        afresh.
        """
        key = (app_name, user_id, session_id)
        cached = self._parsed.get(key)
        after_seq = cached.last_seq - 1 if cached is not None and cached.last_seq > 0 else None
        loaded = await _load_from(store, app_name, user_id, session_id, after_seq)
        if loaded is None:
            self._parsed.pop(key, None)
            return None
        rows = loaded.events
        if (
            cached is not None
            and after_seq is not None
            and rows
            and rows[0].seq == cached.last_seq
            and rows[0].event_id == cached.last_id
            and not cached.events.changed
            and len(cached.events) >= cached.last_seq
        ):
            if cached.events.held_elsewhere():
                # The last session read still has the list: leave it to it.
                cached.events = LentList(cached.events[: cached.last_seq])
            else:
                cached.events.drop_appended(cached.last_seq)
            events = cached.events
            if len(rows) > 1:
                events.extend(self._parse(rows[1:], app_name, user_id, session_id))
                cached.last_seq = loaded.last_seq
                cached.last_id = events[-1].id
            self._parsed.move_to_end(key)
        else:
            if after_seq is not None:  # the kept prefix is no longer the log's: read it all
                loaded = await _load_from(store, app_name, user_id, session_id, None)
                if loaded is None:
                    self._parsed.pop(key, None)
                    return None
            events = LentList(
                self._parse(loaded.events, app_name, user_id, session_id) if loaded.events else ()
            )
            if events:
                self._parsed[key] = _ParsedLog(events, loaded.last_seq, events[-1].id)
                while len(self._parsed) > self._max_cached_sessions:
                    self._parsed.popitem(last=False)
            else:
                self._parsed.pop(key, None)
        return _session(app_name, user_id, session_id, loaded, events)

    async def list_sessions(
        self,
        *,
        app_name: str,
        user_id: str | None = None,
        page_size: int | None = None,
        page_token: str | None = None,
    ) -> ListSessionsResponse:
        store = self._store if self._ready else await self._open()
        if page_size is not None and page_size < 1:
            raise UsageError(f"page_size must be at least 1, got {page_size}.")
        after = _decode_token(page_token) if page_token else None
        rows = await store.list(
            app_name=app_name,
            user_id=user_id,
            limit=None if page_size is None else page_size + 1,
            after=after,
        )
        next_token = None
        if page_size is not None and len(rows) > page_size:
            rows = rows[:page_size]
            next_token = _encode_token(rows[-1].user_id, rows[-1].session_id)
        return ListSessionsResponse(
            sessions=[
                Session(
                    id=row.session_id,
                    app_name=app_name,
                    user_id=row.user_id,
                    state=row.state,
                    last_update_time=row.update_time,
                )
                for row in rows
            ],
            next_page_token=next_token,
        )

    async def get_initial_state(
        self, *, app_name: str, user_id: str, session_id: str
    ) -> dict[str, Any] | None:
        store = self._store if self._ready else await self._open()
        return await store.load_initial_state(
            app_name=app_name, user_id=user_id, session_id=session_id
        )

    async def delete_session(self, *, app_name: str, user_id: str, session_id: str) -> None:
        store = self._store if self._ready else await self._open()
        self._parsed.pop((app_name, user_id, session_id), None)
        await store.delete(app_name=app_name, user_id=user_id, session_id=session_id)

    async def append_event(
        self, session: Session, event: Event, *, compare_and_set: bool | None = None
    ) -> Event:
        """Commit ``event`` to ``session`` (see :meth:`BaseSessionService.append_event`).

        The base class's steps (``prepare_event_for_commit``, then ``_append_event``) in one
        coroutine, using the delta's scope split that the preparation found: the Runner
        commits every event before the agent resumes, so this is paid per event. Fields are
        read through ``_fastpath.fields_of`` (an attribute read on a model is a generic lookup).
        """
        fields = fields_of(event)
        if fields["partial"]:
            return event
        session_delta, app_delta, user_delta = prepare_fields_for_commit(event, fields)
        delta: dict[str, Any] = fields["actions"].state_delta
        if compare_and_set is None:
            compare_and_set = self.compare_and_set
        store = self._store if self._ready else await self._open()
        # pydantic-core's serializer directly: model_dump_json's Python wrapper costs about
        # as much again as serializing a small event.
        # (The event's own class: Event's schema is built lazily, and subclasses keep theirs.)
        event_json = type(event).__pydantic_serializer__.to_json(event, exclude_none=True).decode()
        if len(event_json) * 4 > self.max_event_bytes:  # cheap bound before the exact size
            size = len(event_json.encode())
            if size > self.max_event_bytes:
                raise RecordTooLargeError(
                    what=f"Event {event.id!r}",
                    session_id=session.id,
                    size=size,
                    limit=self.max_event_bytes,
                )
        where = fields_of(session)
        expected: int = where["log_position"]
        outcome = await store.append(
            AppendRequest(
                where["app_name"],
                where["user_id"],
                where["id"],
                fields["id"],
                fields["invocation_id"],
                fields["timestamp"],
                event_json,
                session_delta,
                app_delta,
                user_delta,
                expected,
                compare_and_set,
            )
        )
        status = outcome.status
        if status == "committed":
            if outcome.before == expected:
                if delta:
                    where["state"].update(delta)
            else:
                await self._fold(session, outcome, outcome.before)
            session.record_commit(event, outcome.seq)
        elif status == "duplicate":
            if outcome.seq > expected:
                await self._fold(session, outcome, outcome.seq)
                session.set_log_position(outcome.seq)
        elif status == "stale":
            raise StaleSessionError(session_id=session.id, expected=expected, actual=outcome.seq)
        else:
            raise SessionNotFoundError(
                app_name=session.app_name, user_id=session.user_id, session_id=session.id
            )
        return event

    async def _append_event(
        self, session: Session, event: Event, compare_and_set: bool | None
    ) -> None:
        # Only reached through BaseSessionService.append_event, which this class overrides;
        # the event is prepared already, so the override's steps are no-ops but the commit.
        await self.append_event(session, event, compare_and_set=compare_and_set)

    async def _fold(self, session: Session, outcome: AppendOutcome, upto: int) -> None:
        """Bring a stale copy up to date: other writers' events (up to ``upto``) and state."""
        missed, state = outcome.missed, outcome.state
        if missed is None or state is None:
            loaded = await self._store.load(
                app_name=session.app_name,
                user_id=session.user_id,
                session_id=session.id,
                after_seq=session.log_position,
                upto_seq=upto,
                num_recent=None,
                after_timestamp=None,
            )
            if loaded is None:
                raise SessionNotFoundError(
                    app_name=session.app_name, user_id=session.user_id, session_id=session.id
                )
            missed, state = loaded.events, loaded.state
        folded = self._parse(missed, session.app_name, session.user_id, session.id)
        session.events.extend(folded)
        session.state = state
        if folded:
            session.last_update_time = folded[-1].timestamp

    @staticmethod
    def _parse(
        rows: list[StoredEvent], app_name: str, user_id: str, session_id: str
    ) -> list[Event]:
        events: list[Event] = []
        validate = Event.model_validate_json
        for row in rows:
            try:
                events.append(validate(row.event_json))
            except ValueError as exc:
                raise CorruptRecordError(
                    f"Stored event {row.event_id!r} (number {row.seq}) of session "
                    f"{session_id!r} (app {app_name!r}, user {user_id!r}) does not parse as an "
                    f"Event: {exc}. Repair or delete that row; other sessions are unaffected, "
                    "and this one can still be read with GetSessionConfig(after_timestamp=...) "
                    "past the broken event."
                ) from exc
        return events

    async def close(self) -> None:
        """Close the store's connections and threads. The service is unusable afterwards."""
        if self._closed:
            return
        self._closed = True
        self._ready = False
        await self._store.close()


def _load_from(
    store: SessionStore, app_name: str, user_id: str, session_id: str, after_seq: int | None
) -> Awaitable[LoadedSession | None]:
    """The session's state and its events after ``after_seq`` (all when None); the store's
    own awaitable, not a coroutine around it (one frame less on every read)."""
    return store.load(
        app_name=app_name,
        user_id=user_id,
        session_id=session_id,
        after_seq=after_seq,
        upto_seq=None,
        num_recent=None,
        after_timestamp=None,
    )


class _ParsedLog:
    """The parsed events of a session as last read: log position and last event id."""

    __slots__ = ("events", "last_id", "last_seq")

    def __init__(self, events: LentList[Event], last_seq: int, last_id: str) -> None:
        self.events = events
        self.last_seq = last_seq
        self.last_id = last_id


def _encode_token(user_id: str, session_id: str) -> str:
    raw = json.dumps([user_id, session_id], separators=(",", ":")).encode()
    return base64.urlsafe_b64encode(raw).decode()


def _decode_token(token: str) -> tuple[str, str]:
    try:
        user_id, session_id = json.loads(base64.urlsafe_b64decode(token.encode()))
        if isinstance(user_id, str) and isinstance(session_id, str):
            return user_id, session_id
    except (ValueError, TypeError):
        pass
    raise UsageError(
        f"Invalid page_token {token!r}: pass the next_page_token of a previous "
        "list_sessions call unchanged."
    )


def _session(
    app_name: str, user_id: str, session_id: str, loaded: LoadedSession, events: list[Event]
) -> Session:
    """The ``Session`` a read returns, holding ``events`` (parsed ``Event`` instances)."""
    session = Session(
        id=session_id,
        app_name=app_name,
        user_id=user_id,
        state=loaded.state,
        last_update_time=loaded.update_time,
        log_position=loaded.last_seq,
    )
    # Written, not passed to the constructor: that would validate each event again
    # (microseconds a call) into a new list, and the lent list must be the one held.
    write_fields(session, {"events": events})
    return session
