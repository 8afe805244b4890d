"""The SQLite store: the session contract's queries over the SQLite connection layer.

Where and how a transaction runs (inline on the event loop or on the layer's thread), the
identity checks of the database's files, WAL checkpoints and migrations are the connection
layer's (:mod:`eventide._sqlite_database`, shared with the memory service); this module is
the store's statements.

An append is one ``BEGIN IMMEDIATE`` transaction that merges state with ``json_set``. When
the caller's copy is at the end of the log (the common case) it is two plain statements (the
event inserted as number expected + 1 guarded by the session's ``last_seq``, then the session
row moved), with no ``RETURNING`` rows; a stale copy, a duplicate or a missing session falls
back to the general path in the same transaction. Merge statements are built once per delta
shape.
"""

from __future__ import annotations

import functools
import sqlite3
from typing import Any

from eventide._sqlite_database import SqliteDatabase, SqliteSchema
from eventide.errors import CorruptRecordError
from eventide.sessions.session_store import (
    AppendOutcome,
    AppendRequest,
    ListedSession,
    LoadedSession,
    StoredEvent,
    dumps_json,
    encode_json,
    initial_state,
    listed_session,
    loads_state,
    merged_state,
)
from eventide.sessions.sql_schema import COMPONENT, MIGRATIONS

__all__ = ["SqliteSessionStore"]


_BUMP = (
    "UPDATE sessions SET last_seq = last_seq + 1, update_time = ? "
    "WHERE app_name = ? AND user_id = ? AND id = ? RETURNING pk, last_seq"
)
_BUMP_WITH_STATE = (
    "UPDATE sessions SET last_seq = last_seq + 1, update_time = ? "
    "WHERE app_name = ? AND user_id = ? AND id = ? RETURNING pk, last_seq, state"
)
_INSERT_EVENT = (
    "INSERT INTO events (session_pk, seq, app_name, user_id, session_id, id, invocation_id, "
    "timestamp, event) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (session_pk, id) DO NOTHING"
)
_BUMP_MERGING = (
    "UPDATE sessions SET last_seq = last_seq + 1, update_time = ?, state = {old} "
    "WHERE app_name = ? AND user_id = ? AND id = ? RETURNING pk, last_seq"
)
# The common append: the caller's copy is at the end of the log. The event goes in as
# number expected + 1 only if the log is that long (and its id is new); then the session
# moves to it. Plain statements, no RETURNING (whose rows cost more than the lookups
# they save): when the insert stores nothing (a stale copy, a duplicate, no such session)
# the general path (``_BUMP*``) sorts it out, in the same transaction.
# The event row's copies of the session's names come from the session row, not from
# parameters bound a second time (each bound string is a copy).
_INSERT_NEXT_EVENT = (
    "INSERT INTO events (session_pk, seq, app_name, user_id, session_id, id, invocation_id, "
    "timestamp, event) SELECT pk, ?, app_name, user_id, id, ?, ?, ?, ? FROM sessions "
    "WHERE app_name = ? AND user_id = ? AND id = ? AND last_seq = ? "
    "ON CONFLICT (session_pk, id) DO NOTHING"
)
_SET_SEQ = (
    "UPDATE sessions SET last_seq = ?, update_time = ? "
    "WHERE app_name = ? AND user_id = ? AND id = ?"
)
_SET_SEQ_MERGING = (
    "UPDATE sessions SET last_seq = ?, update_time = ?, state = {old} "
    "WHERE app_name = ? AND user_id = ? AND id = ?"
)
_MERGE_APP = (
    "INSERT INTO app_states (app_name, state, update_time) VALUES (?, {new}, ?) "
    "ON CONFLICT (app_name) DO UPDATE SET state = {old}, update_time = excluded.update_time"
)
_MERGE_USER = (
    "INSERT INTO user_states (app_name, user_id, state, update_time) VALUES (?, ?, {new}, ?) "
    "ON CONFLICT (app_name, user_id) DO UPDATE SET state = {old}, "
    "update_time = excluded.update_time"
)
_SET_SESSION_STATE = "UPDATE sessions SET state = ? WHERE pk = ?"
_APP_STATE = "SELECT state FROM app_states WHERE app_name = ?"
_PUT_APP_STATE = (
    "INSERT INTO app_states (app_name, state, update_time) VALUES (?, ?, ?) "
    "ON CONFLICT (app_name) DO UPDATE SET state = excluded.state, "
    "update_time = excluded.update_time"
)
_USER_STATE = "SELECT state FROM user_states WHERE app_name = ? AND user_id = ?"
_PUT_USER_STATE = (
    "INSERT INTO user_states (app_name, user_id, state, update_time) VALUES (?, ?, ?, ?) "
    "ON CONFLICT (app_name, user_id) DO UPDATE SET state = excluded.state, "
    "update_time = excluded.update_time"
)
_SESSION_WITH_STATES = (
    "SELECT s.pk, s.state, s.last_seq, s.update_time, a.state, u.state FROM sessions s "
    "LEFT JOIN app_states a ON a.app_name = s.app_name "
    "LEFT JOIN user_states u ON u.app_name = s.app_name AND u.user_id = s.user_id "
    "WHERE s.app_name = ? AND s.user_id = ? AND s.id = ?"
)
# Newest first through the primary key (session_pk, seq), so a LIMIT stops early; the
# timestamp filter is a separate statement so the planner never trades that order away.
_EVENTS = (
    "SELECT seq, id, event FROM events WHERE session_pk = ? AND seq > ? AND seq <= ? "
    "ORDER BY seq DESC LIMIT ?"
)
_EVENTS_AFTER_TIME = (
    "SELECT seq, id, event FROM events WHERE session_pk = ? AND seq > ? AND seq <= ? "
    "AND timestamp >= ? ORDER BY seq DESC LIMIT ?"
)
_INITIAL_STATE = "SELECT initial_state FROM sessions WHERE app_name = ? AND user_id = ? AND id = ?"

# The app's sessions with their merged state; filters and paging are appended.
_LIST_SESSIONS = (
    "SELECT s.user_id, s.id, s.update_time, s.state, a.state, u.state FROM sessions s "
    "LEFT JOIN app_states a ON a.app_name = s.app_name "
    "LEFT JOIN user_states u ON u.app_name = s.app_name AND u.user_id = s.user_id "
    "WHERE s.app_name = ?"
)


class SqliteSessionStore:
    """Sessions in a SQLite file (WAL journal).

    Args:
        path: the database file (created if missing).
        synchronous: ``NORMAL`` (a commit survives any process crash; an OS crash or power
            loss may drop the last commits) or ``FULL`` (fsync on every commit).
        busy_timeout: seconds to wait for another process's write lock.
    """

    dialect = "sqlite"

    def __init__(self, path: str, *, synchronous: str, busy_timeout: float) -> None:
        self._db = SqliteDatabase(
            path,
            schema=SqliteSchema(COMPONENT, MIGRATIONS),
            synchronous=synchronous,
            busy_timeout=busy_timeout,
            inline_reads=True,
            inline_writes=True,
            thread_name="eventide-sqlite",
        )

    async def migrate(self) -> int:
        return await self._db.migrate()

    # --- operations ---
    async def create(
        self,
        *,
        app_name: str,
        user_id: str,
        session_id: str,
        deltas: tuple[dict[str, Any], dict[str, Any], dict[str, Any]],
        now: float,
    ) -> dict[str, Any] | None:
        return await self._db.run(_create, (app_name, user_id, session_id), deltas, now)

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
        return await self._db.run(
            _load,
            (app_name, user_id, session_id),
            after_seq,
            upto_seq,
            num_recent,
            after_timestamp,
            write=False,
        )

    async def load_initial_state(
        self, *, app_name: str, user_id: str, session_id: str
    ) -> dict[str, Any] | None:
        def query(cur: sqlite3.Cursor) -> dict[str, Any] | None:
            row = cur.execute(_INITIAL_STATE, (app_name, user_id, session_id)).fetchone()
            if row is None or row[0] is None:
                return None
            return loads_state(row[0], f"the initial state of session {session_id!r}")

        return await self._db.run(query, write=False)

    async def list(
        self,
        *,
        app_name: str,
        user_id: str | None,
        limit: int | None,
        after: tuple[str, str] | None,
    ) -> list[ListedSession]:
        sql = _LIST_SESSIONS
        params: list[Any] = [app_name]
        if user_id is not None:
            sql += " AND s.user_id = ?"
            params.append(user_id)
        if after is not None:
            sql += " AND (s.user_id, s.id) > (?, ?)"
            params.extend(after)
        sql += " ORDER BY s.user_id, s.id LIMIT ?"
        params.append(-1 if limit is None else limit)

        def query(cur: sqlite3.Cursor) -> list[ListedSession]:
            return [listed_session(row, app_name) for row in cur.execute(sql, params).fetchall()]

        return await self._db.run(query, write=False)

    async def delete(self, *, app_name: str, user_id: str, session_id: str) -> None:
        def delete(cur: sqlite3.Cursor) -> None:
            row = cur.execute(
                "SELECT pk FROM sessions WHERE app_name = ? AND user_id = ? AND id = ?",
                (app_name, user_id, session_id),
            ).fetchone()
            if row is not None:
                cur.execute("DELETE FROM events WHERE session_pk = ?", (row[0],))
                cur.execute("DELETE FROM sessions WHERE pk = ?", (row[0],))

        await self._db.run(delete)

    async def append(self, request: AppendRequest) -> AppendOutcome:
        return await self._db.run(_append, request)

    async def close(self) -> None:
        await self._db.close()


def _create(
    cur: sqlite3.Cursor,
    where: tuple[str, str, str],
    deltas: tuple[dict[str, Any], dict[str, Any], dict[str, Any]],
    now: float,
) -> dict[str, Any] | None:
    session_state, app_delta, user_delta = deltas
    cur.execute(
        "INSERT INTO sessions (app_name, user_id, id, state, last_seq, create_time, "
        "update_time, initial_state) VALUES (?, ?, ?, ?, 0, ?, ?, ?) "
        "ON CONFLICT DO NOTHING",
        (*where, dumps_json(session_state), now, now, dumps_json(initial_state(deltas))),
    )
    if cur.rowcount == 0:
        cur.execute("ROLLBACK")
        return None
    app_name, user_id, _ = where
    if app_delta:
        _merge_app(cur, app_name, app_delta, now)
    if user_delta:
        _merge_user(cur, app_name, user_id, user_delta, now)
    return merged_state(cur.execute(_SESSION_WITH_STATES, where).fetchone(), *where)


def _load(
    cur: sqlite3.Cursor,
    where: tuple[str, str, str],
    after_seq: int | None,
    upto_seq: int | None,
    num_recent: int | None,
    after_timestamp: float | None,
) -> LoadedSession | None:
    row = cur.execute(_SESSION_WITH_STATES, where).fetchone()
    if row is None:
        return None
    last_seq = int(row[2])
    events = _events(
        cur,
        row[0],
        after_seq or 0,
        last_seq if upto_seq is None else upto_seq,
        after_timestamp,
        num_recent,
    )
    return LoadedSession(
        state=merged_state(row, *where),
        last_seq=last_seq,
        update_time=float(row[3]),
        events=events,
    )


def _events(
    cur: sqlite3.Cursor,
    pk: int,
    after_seq: int,
    upto_seq: int,
    after_timestamp: float | None,
    limit: int | None,
) -> list[StoredEvent]:
    n = -1 if limit is None else limit
    if after_timestamp is None:
        rows = cur.execute(_EVENTS, (pk, after_seq, upto_seq, n)).fetchall()
    else:
        rows = cur.execute(
            _EVENTS_AFTER_TIME, (pk, after_seq, upto_seq, after_timestamp, n)
        ).fetchall()
    rows.reverse()
    return [StoredEvent(r[0], r[1], r[2]) for r in rows]


def _append(cur: sqlite3.Cursor, r: AppendRequest) -> AppendOutcome:
    where = (r.app_name, r.user_id, r.session_id)
    session_set = _json_set_args(r.session_delta) if r.session_delta else None
    if session_set is not None or not r.session_delta:
        seq = r.expected_seq + 1
        inserted = cur.execute(
            _INSERT_NEXT_EVENT,
            (
                seq,
                r.event_id,
                r.invocation_id,
                r.timestamp,
                r.event_json,
                *where,
                r.expected_seq,
            ),
        ).rowcount
        if inserted:
            if session_set is None:
                cur.execute(_SET_SEQ, (seq, r.timestamp, *where))
            else:
                shape, args = session_set
                statement = _merging(_SET_SEQ_MERGING, "state", shape)
                _guarded(cur, statement, (seq, r.timestamp, *args, *where), r.session_id)
            if r.app_delta or r.user_delta:
                _merge_scopes(cur, r)
            return AppendOutcome("committed", seq, r.expected_seq)
    if not r.session_delta:
        rows = cur.execute(_BUMP, (r.timestamp, *where)).fetchall()
    elif session_set is not None:
        # Merge in SQL (json_set, in C): no read, parse and rewrite of the state in Python.
        shape, args = session_set
        statement = _merging(_BUMP_MERGING, "state", shape)
        rows = _guarded(cur, statement, (r.timestamp, *args, *where), r.session_id).fetchall()
    else:
        rows = cur.execute(_BUMP_WITH_STATE, (r.timestamp, *where)).fetchall()
    if not rows:
        cur.execute("ROLLBACK")
        return AppendOutcome("missing", 0, 0)
    row = rows[0]
    pk, seq = row[0], row[1]
    before = seq - 1
    if r.compare_and_set and before != r.expected_seq:
        cur.execute("ROLLBACK")
        return AppendOutcome("stale", before, before)
    stored = cur.execute(
        _INSERT_EVENT, (pk, seq, *where, r.event_id, r.invocation_id, r.timestamp, r.event_json)
    ).rowcount
    if stored == 0:
        # Already stored (a retry, or another writer with the same event): undo the
        # sequence bump and report what the caller's copy is missing.
        cur.execute("ROLLBACK")
        outcome = AppendOutcome("duplicate", before, before)
        if before != r.expected_seq:
            _fill_missed(cur, r, pk, before, outcome)
        return outcome
    if r.session_delta and session_set is None:
        state = loads_state(row[2], f"session {r.session_id!r}")
        state.update(r.session_delta)
        cur.execute(_SET_SESSION_STATE, (dumps_json(state), pk))
    _merge_scopes(cur, r)
    outcome = AppendOutcome("committed", seq, before)
    if before != r.expected_seq:
        _fill_missed(cur, r, pk, before, outcome)
    return outcome


def _fill_missed(
    cur: sqlite3.Cursor, r: AppendRequest, pk: int, upto: int, outcome: AppendOutcome
) -> None:
    """Read, in the append's snapshot, what the caller's copy lacks."""
    outcome.missed = _events(cur, pk, r.expected_seq, upto, None, None)
    row = cur.execute(_SESSION_WITH_STATES, (r.app_name, r.user_id, r.session_id)).fetchone()
    outcome.state = merged_state(row, r.app_name, r.user_id, r.session_id)


def _merge_scopes(cur: sqlite3.Cursor, r: AppendRequest) -> None:
    """Merge an append's app and user deltas into their shared states."""
    if r.app_delta:
        _merge_app(cur, r.app_name, r.app_delta, r.timestamp)
    if r.user_delta:
        _merge_user(cur, r.app_name, r.user_id, r.user_delta, r.timestamp)


def _merge_app(cur: sqlite3.Cursor, app_name: str, delta: dict[str, Any], now: float) -> None:
    merge = _json_set_args(delta)
    if merge is not None:
        shape, args = merge
        statement = _merging(_MERGE_APP, "app_states.state", shape)
        _guarded(cur, statement, (app_name, *args, now, *args), app_name, what="app")
        return
    row = cur.execute(_APP_STATE, (app_name,)).fetchone()
    state = loads_state(row[0], f"app {app_name!r}") if row else {}
    state.update(delta)
    cur.execute(_PUT_APP_STATE, (app_name, dumps_json(state), now))


def _merge_user(
    cur: sqlite3.Cursor, app_name: str, user_id: str, delta: dict[str, Any], now: float
) -> None:
    merge = _json_set_args(delta)
    if merge is not None:
        shape, args = merge
        statement = _merging(_MERGE_USER, "user_states.state", shape)
        values = (app_name, user_id, *args, now, *args)
        _guarded(cur, statement, values, user_id, what="user", app_name=app_name)
        return
    row = cur.execute(_USER_STATE, (app_name, user_id)).fetchone()
    state = loads_state(row[0], f"user {user_id!r} of app {app_name!r}") if row else {}
    state.update(delta)
    cur.execute(_PUT_USER_STATE, (app_name, user_id, dumps_json(state), now))


def _json_set_args(delta: dict[str, Any]) -> tuple[tuple[bool, ...], list[Any]] | None:
    """The arguments of ``json_set(target, path, value, ...)`` for a delta, and its shape:
    for each key, whether its value goes in as JSON text through ``json(?)``. None when a
    key cannot be written as a JSON path label (it contains a double quote).

    Strings, None and 64-bit integers are bound as they are (``json_set`` stores them as a
    JSON string, null, integer) with no encoding in Python; anything else is JSON text,
    floats included (SQLite would print a bound REAL with 15 digits, losing precision).
    """
    args: list[Any] = []
    shape: list[bool] = []
    for key, value in delta.items():
        if '"' in key:
            return None
        args.append(f'$."{key}"')
        if (
            value is None
            or value.__class__ is str
            or (value.__class__ is int and _INT64_MIN <= value <= _INT64_MAX)
        ):
            args.append(value)
            shape.append(False)
        else:
            args.append(encode_json(value))
            shape.append(True)
    return tuple(shape), args


_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1


@functools.lru_cache(maxsize=256)
def _merging(template: str, column: str, shape: tuple[bool, ...]) -> str:
    """A merging statement's text for a delta shape, built once (not on every append):
    ``{old}`` becomes ``json_set(column, ...)``, ``{new}`` the same over ``'{}'``."""
    values = "".join(", ?, json(?)" if as_json else ", ?, ?" for as_json in shape)
    return template.format(new=f"json_set('{{}}'{values})", old=f"json_set({column}{values})")


def _guarded(
    cur: sqlite3.Cursor,
    sql: str,
    args: tuple[Any, ...],
    name: str,
    *,
    what: str = "session",
    app_name: str | None = None,
) -> sqlite3.Cursor:
    """Run a statement that merges into stored JSON; unparsable stored JSON is corrupt.
    ``what``, ``name`` and ``app_name`` name the state for the error (built only then)."""
    try:
        return cur.execute(sql, args)
    except sqlite3.OperationalError as exc:
        if "malformed JSON" not in str(exc):
            raise
        where = f"{what} {name!r}" + (f" of app {app_name!r}" if app_name is not None else "")
        raise CorruptRecordError(
            f"The stored state of {where} is not valid JSON ({exc}). Repair or delete the "
            "row; the rest of the database is unaffected."
        ) from exc
