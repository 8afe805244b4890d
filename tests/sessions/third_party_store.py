"""A session store written the way a third party would write one: against the documented
``SessionStore`` protocol and its helpers only (no Eventide store subclassed), keeping every
value as JSON text, as a key-value database (Redis, say) would."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from eventide.sessions import (
    AppendOutcome,
    AppendRequest,
    ListedSession,
    LoadedSession,
    StoredEvent,
)
from eventide.sessions.session_store import encode_json, initial_state


@dataclass
class _Session:
    state: str  # JSON text, as a key-value store would keep it
    initial: str
    update_time: float
    events: list[tuple[str, str, float]] = field(default_factory=list)  # id, JSON, time


class KeyValueStore:
    """Sessions in dicts of JSON text; every operation runs without awaiting, so it is
    atomic on one event loop."""

    dialect = "key-value"

    def __init__(self) -> None:
        self._sessions: dict[tuple[str, str, str], _Session] = {}
        self._scopes: dict[tuple[str, ...], str] = {}  # (app,) or (app, user) -> JSON

    async def migrate(self) -> int:
        return 0

    def _merge(self, key: tuple[str, ...], delta: dict[str, Any] | None) -> None:
        if delta:
            state = json.loads(self._scopes.get(key, "{}"))
            state.update(json.loads(encode_json(delta)))
            self._scopes[key] = encode_json(state)

    def _state(self, app_name: str, user_id: str, row: _Session) -> dict[str, Any]:
        state: dict[str, Any] = json.loads(self._scopes.get((app_name,), "{}"))
        state.update(json.loads(self._scopes.get((app_name, user_id), "{}")))
        state.update(json.loads(row.state))
        return state

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
        row = self._sessions[key] = _Session(
            encode_json(deltas[0]), encode_json(initial_state(deltas)), now
        )
        self._merge((app_name,), deltas[1])
        self._merge((app_name, user_id), deltas[2])
        return self._state(app_name, user_id, row)

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
        events = [
            StoredEvent(seq, event_id, text)
            for seq, (event_id, text, timestamp) in enumerate(row.events, start=1)
            if (after_seq or 0) < seq <= (upto_seq or len(row.events))
            and (after_timestamp is None or timestamp >= after_timestamp)
        ]
        if num_recent is not None:
            events = events[len(events) - num_recent :] if num_recent else []
        return LoadedSession(
            state=self._state(app_name, user_id, row),
            last_seq=len(row.events),
            update_time=row.update_time,
            events=events,
        )

    async def load_initial_state(
        self, *, app_name: str, user_id: str, session_id: str
    ) -> dict[str, Any] | None:
        row = self._sessions.get((app_name, user_id, session_id))
        return None if row is None else dict(json.loads(row.initial))

    async def list(
        self,
        *,
        app_name: str,
        user_id: str | None,
        limit: int | None,
        after: tuple[str, str] | None,
    ) -> list[ListedSession]:
        keys = sorted(
            (uid, sid)
            for app, uid, sid in self._sessions
            if app == app_name and user_id in (None, uid) and (after is None or (uid, sid) > after)
        )
        return [
            ListedSession(
                user_id=uid,
                session_id=sid,
                update_time=self._sessions[app_name, uid, sid].update_time,
                state=self._state(app_name, uid, self._sessions[app_name, uid, sid]),
            )
            for uid, sid in keys[:limit]
        ]

    async def delete(self, *, app_name: str, user_id: str, session_id: str) -> None:
        self._sessions.pop((app_name, user_id, session_id), None)

    async def append(self, request: AppendRequest) -> AppendOutcome:
        r = request
        row = self._sessions.get((r.app_name, r.user_id, r.session_id))
        if row is None:
            return AppendOutcome("missing", 0, 0)
        before = len(row.events)
        if r.compare_and_set and before != r.expected_seq:
            return AppendOutcome("stale", before, before)
        if any(event_id == r.event_id for event_id, _, _ in row.events):
            return AppendOutcome("duplicate", before, before)  # the service reads what's missed
        row.events.append((r.event_id, r.event_json, r.timestamp))
        row.update_time = r.timestamp
        if r.session_delta:
            state = json.loads(row.state)
            state.update(json.loads(encode_json(r.session_delta)))
            row.state = encode_json(state)
        self._merge((r.app_name,), r.app_delta)
        self._merge((r.app_name, r.user_id), r.user_delta)
        return AppendOutcome("committed", before + 1, before)

    async def close(self) -> None:
        return None
