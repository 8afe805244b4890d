"""SqlSessionService keeps parsed events of recent sessions, so a whole-session read (the
Runner's, every turn) parses only what was committed since the last read."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from eventide import Event, EventActions
from eventide.sessions.session_store import StoredEvent
from eventide.sessions.sql_session_service import SqlSessionService


class CountingService(SqlSessionService):
    """Counts the stored events it parses."""

    parsed_rows = 0

    def _parse(self, rows: list[StoredEvent], *args: Any) -> list[Event]:  # type: ignore[override]
        type(self).parsed_rows += len(rows)
        return SqlSessionService._parse(rows, *args)


def _event(i: int) -> Event:
    return Event(author="a", actions=EventActions(state_delta={"i": i}))


async def test_whole_reads_parse_only_new_events(tmp_path: Path) -> None:
    """Issue 5/8: turn cost must not grow with history: the second read of a 200-event session
    parses only the 3 events appended since, and returns the same log as a fresh service."""
    url = f"sqlite:///{tmp_path / 's.db'}"
    service = CountingService(url)
    session = await service.create_session(app_name="app", user_id="u", session_id="s")
    for i in range(200):
        await service.append_event(session, _event(i))
    first = await service.get_session(app_name="app", user_id="u", session_id="s")
    assert first is not None and len(first.events) == 200
    CountingService.parsed_rows = 0
    for i in range(200, 203):
        await service.append_event(first, _event(i))
    second = await service.get_session(app_name="app", user_id="u", session_id="s")
    assert second is not None
    assert CountingService.parsed_rows == 3
    fresh = SqlSessionService(url)
    truth = await fresh.get_session(app_name="app", user_id="u", session_id="s")
    assert truth is not None
    assert [e.id for e in second.events] == [e.id for e in truth.events]
    assert second.state == truth.state == {"i": 202}
    assert second.events is not first.events, "each read returns its own list"
    await fresh.close()
    await service.close()


async def test_other_writers_and_recreated_sessions_are_seen(tmp_path: Path) -> None:
    """Many writers: events another process (service) appended are in the next read; a
    session deleted and recreated under the same id is read afresh, not from the cache."""
    url = f"sqlite:///{tmp_path / 's.db'}"
    reader, writer = SqlSessionService(url), SqlSessionService(url)
    session = await writer.create_session(app_name="app", user_id="u", session_id="s")
    await writer.append_event(session, _event(1))
    assert (await reader.get_session(app_name="app", user_id="u", session_id="s")) is not None
    await writer.append_event(session, _event(2))
    seen = await reader.get_session(app_name="app", user_id="u", session_id="s")
    assert seen is not None and [e.actions.state_delta["i"] for e in seen.events] == [1, 2]

    await writer.delete_session(app_name="app", user_id="u", session_id="s")
    again = await writer.create_session(app_name="app", user_id="u", session_id="s")
    for i in (10, 11, 12):
        await writer.append_event(again, _event(i))
    fresh = await reader.get_session(app_name="app", user_id="u", session_id="s")
    assert fresh is not None and [e.actions.state_delta["i"] for e in fresh.events] == [10, 11, 12]
    await reader.close()
    await writer.close()
