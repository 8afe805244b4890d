"""History-tool fixtures: each test runs against the in-memory, SQLite and PostgreSQL stores."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from eventide.artifacts.base_artifact_service import BaseArtifactService
from eventide.artifacts.file_artifact_service import FileArtifactService
from eventide.artifacts.in_memory_artifact_service import InMemoryArtifactService
from eventide.sessions.base_session_service import BaseSessionService
from eventide.sessions.in_memory_session_service import InMemorySessionService
from eventide.sessions.sql_session_service import SqlSessionService
from tests.sessions.conftest import postgres_sessions_url  # noqa: F401 - a fixture


@dataclass(slots=True, kw_only=True)
class Stores:
    """The session and artifact services of one test, and an app name and user id of its own
    (the PostgreSQL database is shared by the whole run)."""

    sessions: BaseSessionService
    artifacts: BaseArtifactService
    app: str = field(default_factory=lambda: f"app_{uuid.uuid4().hex[:8]}")
    user: str = field(default_factory=lambda: f"user_{uuid.uuid4().hex[:8]}")


@pytest.fixture(params=["memory", "sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
async def stores(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Stores]:
    """In memory: in-memory services; otherwise a real database and artifact files."""
    if request.param == "memory":
        yield Stores(sessions=InMemorySessionService(), artifacts=InMemoryArtifactService())
        return
    if request.param == "sqlite":
        url = f"sqlite:///{tmp_path / 'sessions.db'}"
    else:
        url = request.getfixturevalue("postgres_sessions_url")
    service = SqlSessionService(url)
    yield Stores(sessions=service, artifacts=FileArtifactService(tmp_path / "artifacts"))
    await service.close()
