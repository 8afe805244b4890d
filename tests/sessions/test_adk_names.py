"""google-adk's session service names and URL forms, served by ``SqlSessionService``."""

from __future__ import annotations

from pathlib import Path

import pytest

from eventide import DatabaseSessionService, SqliteSessionService
from eventide._database_urls import parse_database_url
from eventide.errors import ConfigurationError
from eventide.events import Event, EventActions
from eventide.sessions.sql_session_service import SqlSessionService


def _use(service: SqlSessionService) -> dict[str, object]:
    """Create a session, commit one event through the sync API, read it back."""
    try:
        session = service.create_session_sync(
            app_name="app", user_id="u", session_id="s", state={"k": 1}
        )
        service._run_sync(
            service.append_event(
                session, Event(author="a", actions=EventActions(state_delta={"n": 2}))
            )
        )
        again = service.get_session_sync(app_name="app", user_id="u", session_id="s")
        assert again is not None and len(again.events) == 1
        return again.state
    finally:
        service.close_sync()


@pytest.mark.parametrize(
    "form",
    [
        "sqlite:///{path}",
        "sqlite+aiosqlite:///{path}",
        "sqlite+pysqlite:///{path}",
    ],
)
def test_database_session_service_takes_adk_sqlite_urls(tmp_path: Path, form: str) -> None:
    """Contract (google-adk names; URLs mean what they say): DatabaseSessionService(db_url=...)
    accepts the SQLite URL forms google-adk users write, and they name the same file."""
    path = tmp_path / "adk.db"
    assert _use(DatabaseSessionService(db_url=form.format(path=path))) == {"k": 1, "n": 2}
    reopened = SqliteSessionService(str(path))
    try:
        got = reopened.get_session_sync(app_name="app", user_id="u", session_id="s")
        assert got is not None and got.state == {"k": 1, "n": 2}
    finally:
        reopened.close_sync()


@pytest.mark.parametrize("url", ["sqlite:///:memory:", "sqlite+aiosqlite:///:memory:", ":memory:"])
def test_in_memory_sqlite_urls_give_a_private_database(url: str) -> None:
    """Contract (URLs mean what they say): an in-memory SQLite URL is a database that lives
    as long as the service, private to it: two services never share one."""
    make = SqliteSessionService if url == ":memory:" else DatabaseSessionService
    assert _use(make(url)) == {"k": 1, "n": 2}
    other = make(url)
    try:
        assert other.get_session_sync(app_name="app", user_id="u", session_id="s") is None
    finally:
        other.close_sync()


def test_sqlite_session_service_takes_a_bare_path(tmp_path: Path) -> None:
    """Contract (google-adk names): SqliteSessionService(db_path) takes a file path of any
    name (created if missing) or a sqlite:/// URL for the same file."""
    path = tmp_path / "sessions.data"
    assert _use(SqliteSessionService(str(path))) == {"k": 1, "n": 2}
    assert path.is_file()
    same = SqliteSessionService(f"sqlite:///{path}")
    try:
        assert same.list_sessions_sync(app_name="app").sessions[0].state == {"k": 1, "n": 2}
    finally:
        same.close_sync()
    with pytest.raises(ConfigurationError, match="DatabaseSessionService"):
        SqliteSessionService("postgresql://user@host/db")


@pytest.mark.parametrize(
    ("given", "expected"),
    [
        ("postgresql://u:p@h:5432/db", "postgresql+asyncpg://u:p@h:5432/db"),
        ("postgres://u@h/db", "postgresql+asyncpg://u@h/db"),
        ("postgresql+asyncpg://u@h/db", "postgresql+asyncpg://u@h/db"),
        ("postgresql+psycopg2://u@h/db?sslmode=require", "postgresql+asyncpg://u@h/db?ssl=require"),
        ("postgresql+psycopg://u@h/db", "postgresql+asyncpg://u@h/db"),
        ("POSTGRESQL+PG8000://u@h/db", "postgresql+asyncpg://u@h/db"),
    ],
)
def test_postgres_urls_of_any_driver_name_the_same_server(given: str, expected: str) -> None:
    """Contract (URLs mean what they say): a PostgreSQL URL naming any SQLAlchemy driver is
    served by asyncpg against the server, database and user it names; libpq's sslmode
    becomes asyncpg's ssl with the same value."""
    parsed = parse_database_url(given)
    assert parsed.dialect == "postgresql" and parsed.postgres_url == expected


@pytest.mark.parametrize(
    "url", ["mysql://u@h/db", "sqlite:relative.db", "postgresql:///db", "sqlite://"]
)
def test_other_urls_are_refused_with_a_working_example(url: str) -> None:
    """Bad input gets a clear error: an unsupported or incomplete URL names a form that
    works."""
    with pytest.raises(ConfigurationError, match=r"sqlite:///|postgresql://"):
        DatabaseSessionService(db_url=url)


@pytest.mark.postgres
@pytest.mark.parametrize("driver", ["postgresql", "postgresql+psycopg2", "postgres"])
def test_database_session_service_takes_adk_postgres_urls(
    postgres_sessions_url: str, driver: str
) -> None:
    """Contract (google-adk names): DatabaseSessionService(db_url=...) with a PostgreSQL URL
    naming any driver stores sessions in the database the URL names."""
    rest = postgres_sessions_url.split("://", 1)[1]
    service = DatabaseSessionService(db_url=f"{driver}://{rest}")
    try:
        app = f"adk_{driver.replace('+', '_')}"
        service.create_session_sync(app_name=app, user_id="u", session_id="s", state={"k": 1})
        got = service.get_session_sync(app_name=app, user_id="u", session_id="s")
        assert got is not None and got.state == {"k": 1}
    finally:
        service.close_sync()
