"""Session-store fixtures: a SQLite file per test, a private PostgreSQL database per run."""

from __future__ import annotations

import asyncio
import os
import uuid
from collections.abc import AsyncIterator, Coroutine, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, TypeVar

import pytest
from sqlalchemy.engine import make_url

from eventide.sessions.sql_session_service import SqlSessionService

PG_URL = os.environ.get("EVENTIDE_PG_URL", "postgresql+asyncpg://postgres@127.0.0.1:5432/test")
_T = TypeVar("_T")
IN_CI = os.environ.get("CI", "").lower() == "true"


def run_private(coro: Coroutine[Any, Any, _T]) -> _T:
    """Run a coroutine to completion on a private loop in its own thread, so it works from
    sync fixtures that a test's running loop requested lazily."""
    with ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(asyncio.run, coro).result()


async def pg_admin(statement: str, database: str | None = None) -> list[object]:
    """Run one statement on the PostgreSQL server (as the URL's user) and return its rows."""
    import asyncpg

    url = make_url(PG_URL)
    conn = await asyncpg.connect(
        host=url.host,
        port=url.port or 5432,
        user=url.username,
        password=url.password,
        database=database or url.database,
        timeout=5,
    )
    try:
        return list(await conn.fetch(statement))
    finally:
        await conn.close()


@pytest.fixture(scope="session")
def postgres_sessions_url() -> Iterator[str]:
    """A fresh database for this test run, dropped afterwards. Skips when PostgreSQL is
    unreachable, except in CI (``CI=true``), where that is a failure."""
    name = f"eventide_sessions_{uuid.uuid4().hex[:12]}"
    try:
        run_private(pg_admin(f'CREATE DATABASE "{name}"'))
    except (TimeoutError, OSError) as exc:
        where = make_url(PG_URL).render_as_string(hide_password=True)
        message = f"PostgreSQL at {where} is unreachable: {exc}"
        if IN_CI:
            pytest.fail(message + " (CI=true: PostgreSQL tests must run)")
        pytest.skip(message)
    yield make_url(PG_URL).set(database=name).render_as_string(hide_password=False)
    run_private(pg_admin(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))


@pytest.fixture
def sqlite_url(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path / 'sessions.db'}"


@pytest.fixture
async def sqlite_service(sqlite_url: str) -> AsyncIterator[SqlSessionService]:
    service = SqlSessionService(sqlite_url)
    yield service
    await service.close()


@pytest.fixture
async def postgres_service(postgres_sessions_url: str) -> AsyncIterator[SqlSessionService]:
    service = SqlSessionService(postgres_sessions_url)
    yield service
    await service.close()
