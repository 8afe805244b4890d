"""Fixtures of the durable tests on DBOS workers."""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import pytest
from sqlalchemy.engine import make_url

from tests.conftest import IN_CI
from tests.sessions.conftest import PG_URL, pg_admin, run_private


@pytest.fixture
def database() -> Iterator[str]:
    """A private database (DBOS's tables and the sessions), dropped afterwards."""
    name = f"eventide_dbos_{uuid.uuid4().hex[:12]}"
    try:
        run_private(pg_admin(f'CREATE DATABASE "{name}"'))
    except (TimeoutError, OSError) as exc:
        if IN_CI:
            pytest.fail(f"PostgreSQL is unreachable: {exc} (CI=true: these tests must run)")
        pytest.skip(f"PostgreSQL is unreachable: {exc}")
    yield make_url(PG_URL).set(database=name).render_as_string(hide_password=False)
    run_private(pg_admin(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
