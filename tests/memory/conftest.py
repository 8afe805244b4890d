"""Memory-test fixtures: a private PostgreSQL database for the session, dropped afterwards."""

from __future__ import annotations

import asyncio
import os
import uuid
from collections.abc import Iterator

import asyncpg
import pytest
from sqlalchemy.engine import make_url

PG_URL = os.environ.get("EVENTIDE_PG_URL", "postgresql+asyncpg://postgres@127.0.0.1:5432/test")


def _run(coro: object) -> object:
    # A private loop: this runs in a sync, session-scoped fixture, outside the tests' loops.
    loop = asyncio.new_event_loop()
    try:
        return loop.run_until_complete(coro)  # type: ignore[arg-type]
    finally:
        loop.close()


async def _admin(statement: str) -> None:
    url = make_url(PG_URL)
    conn = await asyncpg.connect(
        host=url.host,
        port=url.port or 5432,
        user=url.username,
        password=url.password,
        database=url.database,
        timeout=5,
    )
    try:
        await conn.execute(statement)
    finally:
        await conn.close()


@pytest.fixture(scope="session")
def postgres_memory_url() -> Iterator[str]:
    """The URL of a fresh database for memory tests. Skips when PostgreSQL is unreachable,
    except in CI (``CI=true``), where that is a failure."""
    name = f"eventide_memory_{uuid.uuid4().hex[:12]}"
    try:
        _run(_admin(f'CREATE DATABASE "{name}"'))
    except (OSError, TimeoutError, asyncpg.PostgresError) as exc:
        where = make_url(PG_URL).render_as_string(hide_password=True)
        message = f"PostgreSQL at {where} is unusable: {exc}"
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(message + " (CI=true: PostgreSQL tests must run)")
        pytest.skip(message)
    yield make_url(PG_URL).set(database=name).render_as_string(hide_password=False)
    _run(_admin(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))


async def clear_postgres_memory(url: str) -> None:
    """Empty the memory table of a test database (it lives for the whole test session)."""
    conn = await asyncpg.connect(make_url(url).set(drivername="postgresql").render_as_string(False))
    try:
        await conn.execute("DELETE FROM eventide_memory")
        await conn.execute("DELETE FROM eventide_memory_forgotten")
    finally:
        await conn.close()


@pytest.fixture
def fresh_postgres_url(postgres_memory_url: str) -> Iterator[str]:
    """The URL of a new, empty database of its own for one test, dropped afterwards."""
    name = f"eventide_memory_{uuid.uuid4().hex[:12]}"
    _run(_admin(f'CREATE DATABASE "{name}"'))
    yield make_url(postgres_memory_url).set(database=name).render_as_string(hide_password=False)
    _run(_admin(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
