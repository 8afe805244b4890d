"""The session service contract (eventide.testing.session_contract), run against every
backend: in memory, SQLite, PostgreSQL."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from eventide.sessions.base_session_service import BaseSessionService
from eventide.sessions.in_memory_session_service import InMemorySessionService
from eventide.sessions.sql_session_service import SqlSessionService
from eventide.testing.session_contract import *  # noqa: F403


@pytest.fixture(params=["memory", "sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
async def session_service(
    request: pytest.FixtureRequest, tmp_path: Path
) -> AsyncIterator[BaseSessionService]:
    if request.param == "memory":
        yield InMemorySessionService()
        return
    if request.param == "sqlite":
        url = f"sqlite:///{tmp_path / 'sessions.db'}"
    else:
        url = request.getfixturevalue("postgres_sessions_url")
    service = SqlSessionService(url)
    yield service
    await service.close()
