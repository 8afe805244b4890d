"""``build_services``: storage settings (CLI options, env vars) to service objects."""

from __future__ import annotations

import os
import uuid
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from eventide import (
    Event,
    InMemoryArtifactService,
    InMemoryMemoryService,
    InMemorySessionService,
    types,
)
from eventide.apps.services import Services, build_services, normalize_database_url
from eventide.errors import ConfigurationError
from tests.conftest import IN_CI

PG_URL = os.environ.get("EVENTIDE_PG_URL", "postgresql+asyncpg://postgres@127.0.0.1:5432/test")


async def test_default_is_sqlite_in_the_base_dir_and_survives_a_restart(tmp_path: Path) -> None:
    """The log is the truth: a session committed through one set of services is read back,
    events and state, by a new set built from the same settings (a new process's view)."""
    from eventide.artifacts.file_artifact_service import FileArtifactService
    from eventide.sessions.sql_session_service import SqlSessionService

    services = build_services(session_db=None, artifact_root=None, base_dir=tmp_path)
    assert isinstance(services.session_service, SqlSessionService)
    assert isinstance(services.artifact_service, FileArtifactService)
    assert isinstance(services.memory_service, InMemoryMemoryService)
    assert (tmp_path / ".eventide" / "sessions.db").parent.is_dir()

    session = await services.session_service.create_session(
        app_name="demo", user_id="u", session_id="s1"
    )
    event = Event(
        author="user",
        content=types.Content(role="user", parts=[types.Part(text="hi")]),
    )
    event.actions.state_delta["topic"] = "weather"
    await services.session_service.append_event(session, event)
    await services.artifact_service.save_artifact(
        app_name="demo",
        user_id="u",
        session_id="s1",
        filename="notes.txt",
        artifact=types.Part(text="hello"),
    )
    await services.close()

    assert (tmp_path / ".eventide" / "sessions.db").is_file()
    again = build_services(session_db=None, artifact_root=None, base_dir=tmp_path)
    try:
        loaded = await again.session_service.get_session(
            app_name="demo", user_id="u", session_id="s1"
        )
        assert loaded is not None
        assert [e.text for e in loaded.events if e.content] == ["hi"]
        assert loaded.state == {"topic": "weather"}
        keys = await again.artifact_service.list_artifact_keys(
            app_name="demo", user_id="u", session_id="s1"
        )
        assert keys == ["notes.txt"]
    finally:
        await again.close()


def test_memory_settings_select_in_memory_services(tmp_path: Path) -> None:
    services = build_services(
        session_db="memory:", artifact_root="memory:", memory_db="memory:", base_dir=tmp_path
    )
    assert isinstance(services, Services)
    assert isinstance(services.session_service, InMemorySessionService)
    assert isinstance(services.artifact_service, InMemoryArtifactService)
    assert isinstance(services.memory_service, InMemoryMemoryService)
    assert not (tmp_path / ".eventide").exists()


async def test_explicit_sqlite_url_artifact_folder_and_memory_db(tmp_path: Path) -> None:
    from eventide.memory.sql_memory_service import SqlMemoryService

    services = build_services(
        session_db=f"sqlite:///{tmp_path / 'custom.db'}",
        artifact_root=tmp_path / "files",
        memory_db=f"sqlite:///{tmp_path / 'memory.db'}",
        base_dir=tmp_path / "unused",
    )
    try:
        assert isinstance(services.memory_service, SqlMemoryService)
        await services.session_service.create_session(app_name="a", user_id="u")
        assert (tmp_path / "custom.db").is_file()
        assert not (tmp_path / "unused").exists()
    finally:
        await services.close()


@pytest.mark.parametrize(
    "given, expected",
    [
        ("postgresql://u@db:5432/app", "postgresql+asyncpg://u@db:5432/app"),
        ("postgres://u:pw@db/app", "postgresql+asyncpg://u:pw@db/app"),
        ("postgresql+asyncpg://u@db/app", "postgresql+asyncpg://u@db/app"),
        ("sqlite:///rel.db", "sqlite+aiosqlite:///rel.db"),
        ("sqlite+aiosqlite:////abs/x.db", "sqlite+aiosqlite:////abs/x.db"),
    ],
)
def test_database_urls_are_normalized_to_async_drivers(given: str, expected: str) -> None:
    assert normalize_database_url(given) == expected


def test_a_bare_db_path_is_a_sqlite_file(tmp_path: Path) -> None:
    path = tmp_path / "x.db"
    assert normalize_database_url(str(path)) == f"sqlite+aiosqlite:///{path}"


@pytest.mark.parametrize(
    "bad, message",
    [
        ("mysql://u@h/db", "unsupported scheme 'mysql'"),
        ("sessions", "is not a database URL"),
        ("postgresql:///db", "names no PostgreSQL host"),
        ("sqlite://", "names no SQLite file"),
    ],
)
def test_bad_urls_name_the_value_and_the_fix(bad: str, message: str, tmp_path: Path) -> None:
    with pytest.raises(ConfigurationError, match=message) as caught:
        build_services(session_db=bad, artifact_root=None, base_dir=tmp_path)
    assert repr(bad) in str(caught.value)


@pytest.fixture
async def pg_database() -> AsyncIterator[str]:
    """A fresh PostgreSQL database for this test, dropped afterwards (plain postgresql://)."""
    asyncpg = pytest.importorskip("asyncpg")
    admin_dsn = PG_URL.replace("postgresql+asyncpg://", "postgresql://")
    try:
        admin = await asyncpg.connect(admin_dsn, timeout=5)
    except (OSError, asyncpg.PostgresError) as exc:
        if IN_CI:
            pytest.fail(f"PostgreSQL at {admin_dsn} is required in CI: {exc}")
        pytest.skip(f"PostgreSQL at {admin_dsn} is not reachable: {exc}")
    name = f"eventide_cli_{uuid.uuid4().hex[:12]}"
    await admin.execute(f'CREATE DATABASE "{name}"')
    try:
        base, _, _ = admin_dsn.rpartition("/")
        yield f"{base}/{name}"
    finally:
        await admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        await admin.close()


@pytest.mark.postgres
async def test_postgresql_url_builds_the_sql_service_shared_by_two_processes_views(
    pg_database: str, tmp_path: Path
) -> None:
    """Many server processes share one PostgreSQL: what one set of services commits, another
    set built from the same (plain postgresql://) URL reads back."""
    from eventide.sessions.sql_session_service import SqlSessionService

    assert pg_database.startswith("postgresql://")
    first = build_services(session_db=pg_database, artifact_root="memory:", base_dir=tmp_path)
    second = build_services(session_db=pg_database, artifact_root="memory:", base_dir=tmp_path)
    try:
        assert isinstance(first.session_service, SqlSessionService)
        session = await first.session_service.create_session(
            app_name="demo", user_id="u", state={"k": 1}
        )
        seen = await second.session_service.get_session(
            app_name="demo", user_id="u", session_id=session.id
        )
        assert seen is not None and seen.state == {"k": 1}
    finally:
        await first.close()
        await second.close()


async def test_object_store_url_selects_the_fsspec_service(tmp_path: Path) -> None:
    """Issue 5 wiring: an artifact_root URL goes to the fsspec object-store service."""
    from eventide.apps.services import build_services
    from eventide.artifacts.fsspec_artifact_service import FsspecArtifactService

    services = build_services(
        session_db="memory:", artifact_root="memory://eventide-test-bucket", base_dir=tmp_path
    )
    assert isinstance(services.artifact_service, FsspecArtifactService)
    await services.close()
