"""The in-memory store: the same rows as the SQL stores, in dicts.

Events are kept as their JSON text and state values as JSON data (containers copied, tuples
as lists), exactly what the SQL stores keep, so a session read back from memory is the
session SQLite or PostgreSQL would return (the differential test holds all three to that).
Each operation runs without awaiting anything, so on one event loop it is atomic like a SQL
transaction.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass, field
from typing import Any, cast

from eventide.sessions.session_store import (
    AppendOutcome,
    AppendRequest,
    ListedSession,
    LoadedSession,
    StoredEvent,
    initial_state,
)

__all__ = ["InMemorySessionStore"]


@dataclass(slots=True, kw_only=True)
class _Row:
    state: dict[str, Any]
    update_time: float
    initial_state: dict[str, Any] = field(default_factory=dict)
    events: list[StoredEvent] = field(default_factory=list)
    timestamps: list[float] = field(default_factory=list)
    event_ids: set[str] = field(default_factory=set)


class InMemorySessionStore:
    """Sessions in process memory; everything is lost when the process exits."""

    dialect = "memory"

    def __init__(self) -> None:
        self._sessions: dict[tuple[str, str, str], _Row] = {}
        # Per app: its sessions' (user_id, session_id) keys in order, for list().
        self._keys: dict[str, list[tuple[str, str]]] = {}
        self._app_states: dict[str, dict[str, Any]] = {}
        self._user_states: dict[tuple[str, str], dict[str, Any]] = {}

    async def migrate(self) -> int:
        return 0

    async def create(
        self,
        *,
        app_name: str,
        user_id: str,
        session_id: str,
        deltas: tuple[dict[str, Any], dict[str, Any], dict[str, Any]],
        now: float,
    ) -> dict[str, Any] | None:
        key = (app_name, user_id, session_id)
        if key in self._sessions:
            return None
        session_state, app_delta, user_delta = deltas
        row = self._sessions[key] = _Row(
            state=_stored(session_state),
            update_time=now,
            initial_state=_stored(initial_state(deltas)) if any(deltas) else {},
        )
        bisect.insort(self._keys.setdefault(app_name, []), (user_id, session_id))
        if app_delta:
            self._app_states.setdefault(app_name, {}).update(_stored(app_delta))
        if user_delta:
            self._user_states.setdefault((app_name, user_id), {}).update(_stored(user_delta))
        return self._merged(app_name, user_id, row)

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
        row = self._sessions.get((app_name, user_id, session_id))
        if row is None:
            return None
        last_seq = len(row.events)
        upto = last_seq if upto_seq is None else upto_seq
        events = row.events[after_seq or 0 : upto]  # seq n is at index n - 1
        if after_timestamp is not None:
            events = [e for e in events if row.timestamps[e.seq - 1] >= after_timestamp]
        if num_recent is not None:
            events = events[max(0, len(events) - num_recent) :]
        return LoadedSession(
            state=self._merged(app_name, user_id, row),
            last_seq=last_seq,
            update_time=row.update_time,
            events=events,
        )

    async def load_initial_state(
        self, *, app_name: str, user_id: str, session_id: str
    ) -> dict[str, Any] | None:
        row = self._sessions.get((app_name, user_id, session_id))
        return None if row is None else _stored(row.initial_state)

    async def list(
        self,
        *,
        app_name: str,
        user_id: str | None,
        limit: int | None,
        after: tuple[str, str] | None,
    ) -> list[ListedSession]:
        keys = self._keys.get(app_name, [])
        start = 0 if after is None else bisect.bisect_right(keys, after)
        listed: list[ListedSession] = []
        for uid, sid in keys[start:]:
            if limit is not None and len(listed) >= limit:
                break
            if user_id is not None and uid != user_id:
                continue
            row = self._sessions[(app_name, uid, sid)]
            listed.append(
                ListedSession(
                    user_id=uid,
                    session_id=sid,
                    update_time=row.update_time,
                    state=self._merged(app_name, uid, row),
                )
            )
        return listed

    async def delete(self, *, app_name: str, user_id: str, session_id: str) -> None:
        if self._sessions.pop((app_name, user_id, session_id), None) is not None:
            keys = self._keys[app_name]
            del keys[bisect.bisect_left(keys, (user_id, session_id))]

    async def append(self, request: AppendRequest) -> AppendOutcome:
        r = request
        app_name, user_id, expected = r.app_name, r.user_id, r.expected_seq
        row = self._sessions.get((app_name, user_id, r.session_id))
        if row is None:
            return AppendOutcome("missing", 0, 0)
        events = row.events
        before = len(events)
        if r.compare_and_set and before != expected:
            return AppendOutcome("stale", before, before)
        if r.event_id in row.event_ids:
            outcome = AppendOutcome("duplicate", before, before)
        else:
            seq = before + 1
            events.append(StoredEvent(seq, r.event_id, r.event_json))
            row.timestamps.append(r.timestamp)
            row.event_ids.add(r.event_id)
            row.update_time = r.timestamp
            if r.session_delta:
                _merge(row.state, r.session_delta)
            if r.app_delta:
                _merge(self._app_states.setdefault(app_name, {}), r.app_delta)
            if r.user_delta:
                _merge(self._user_states.setdefault((app_name, user_id), {}), r.user_delta)
            outcome = AppendOutcome("committed", seq, before)
        if before != expected:
            outcome.missed = events[expected:before]
            outcome.state = self._merged(app_name, user_id, row)
        return outcome

    async def close(self) -> None:
        return None

    def _merged(self, app_name: str, user_id: str, row: _Row) -> dict[str, Any]:
        """A private copy of the session's merged state (app, then user, then session)."""
        app = self._app_states.get(app_name)
        user = self._user_states.get((app_name, user_id))
        if not app and not user:
            return _stored(row.state)
        state: dict[str, Any] = {}
        if app:
            state.update(app)
        if user:
            state.update(user)
        state.update(row.state)
        return _stored(state)


def _stored(values: dict[str, Any]) -> dict[str, Any]:
    """A copy of (validated) state values as a SQL store gives them back: containers copied,
    tuples as lists; much cheaper than a trip through JSON text."""
    if not values:
        return {}
    return {k: v if type(v) in _SCALARS else _copy(v) for k, v in values.items()}


def _merge(state: dict[str, Any], delta: dict[str, Any]) -> None:
    """Merge (validated) delta values into a stored state as ``_stored`` copies them, with
    no intermediate dict: an append merges a delta of a key or two."""
    for key, value in delta.items():
        state[key] = value if type(value) in _SCALARS else _copy(value)


_SCALARS = frozenset({str, int, float, bool, type(None)})


def _copy(value: object) -> object:
    if isinstance(value, dict):
        items = cast("dict[str, object]", value)
        return {k: v if type(v) in _SCALARS else _copy(v) for k, v in items.items()}
    if isinstance(value, list | tuple):
        elements = cast("list[object] | tuple[object, ...]", value)
        return [v if type(v) in _SCALARS else _copy(v) for v in elements]
    return value
