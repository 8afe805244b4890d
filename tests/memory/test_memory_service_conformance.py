"""The memory service contract on every backend: in memory, SQLite FTS5, PostgreSQL FTS."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from eventide.memory import InMemoryMemoryService
from eventide.memory.base_memory_service import BaseMemoryService
from eventide.memory.sql_memory_service import SqlMemoryService
from tests.conformance.memory_service_contract import MemoryServiceContract
from tests.memory.conftest import clear_postgres_memory


@pytest.fixture(
    params=["in_memory", "sqlite", pytest.param("postgres", marks=pytest.mark.postgres)]
)
def memory_url(request: pytest.FixtureRequest, tmp_path: Path) -> str | None:
    """None for the in-memory service, else the database URL (sync: may start PostgreSQL's
    session fixture, which must run outside the test's event loop)."""
    if request.param == "sqlite":
        return f"sqlite+aiosqlite:///{tmp_path / 'memory.db'}"
    if request.param == "postgres":
        return str(request.getfixturevalue("postgres_memory_url"))
    return None


@pytest.fixture
async def memory_service(memory_url: str | None) -> AsyncIterator[BaseMemoryService]:
    if memory_url is None:
        yield InMemoryMemoryService()
        return
    service = SqlMemoryService(memory_url)
    yield service
    if memory_url.startswith("postgresql"):
        # The database lives for the whole test session: leave it empty for the next test.
        await clear_postgres_memory(memory_url)
    await service.close()


class TestMemoryServiceContract(MemoryServiceContract):
    """Runs the shared contract against the ``memory_service`` fixture's backends."""
