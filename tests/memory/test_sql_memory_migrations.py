"""The memory tables are versioned like the session tables: databases made before the
schema was versioned are adopted with their rows, newer versions are refused, and sessions
and memory share one version table."""

from __future__ import annotations

import hashlib
import sqlite3
from collections.abc import Awaitable, Callable
from pathlib import Path

import asyncpg
import pytest
from sqlalchemy.engine import make_url

from eventide.errors import SchemaVersionError
from eventide.memory.sql_memory_schema import SCHEMA_VERSION
from eventide.memory.sql_memory_service import SqlMemoryService
from eventide.sessions.sql_session_service import SqlSessionService
from tests.conformance.memory_service_contract import APP, USER, session, texts_for

# The tables exactly as SqlMemoryService created them before its schema was versioned (kept
# here by hand, so the test does not build the old shape with the code under test), and
# rows as that release wrote them.
UNVERSIONED_SQLITE = [
    """CREATE TABLE eventide_memory (id INTEGER PRIMARY KEY, app_name TEXT NOT NULL,
        user_id TEXT NOT NULL, session_id TEXT NOT NULL, event_id TEXT NOT NULL, author TEXT,
        timestamp REAL NOT NULL, content TEXT NOT NULL, text TEXT NOT NULL,
        scope TEXT NOT NULL, UNIQUE (app_name, user_id, session_id, event_id))""",
    """CREATE VIRTUAL TABLE eventide_memory_fts USING fts5(text, scope,
        content='eventide_memory', content_rowid='id', tokenize='porter unicode61')""",
    """CREATE TRIGGER eventide_memory_ai AFTER INSERT ON eventide_memory BEGIN
        INSERT INTO eventide_memory_fts(rowid, text, scope) VALUES (new.id, new.text, new.scope);
    END""",
    """CREATE TRIGGER eventide_memory_ad AFTER DELETE ON eventide_memory BEGIN
        INSERT INTO eventide_memory_fts(eventide_memory_fts, rowid, text, scope)
        VALUES ('delete', old.id, old.text, old.scope);
    END""",
    """CREATE TRIGGER eventide_memory_au AFTER UPDATE ON eventide_memory BEGIN
        INSERT INTO eventide_memory_fts(eventide_memory_fts, rowid, text, scope)
        VALUES ('delete', old.id, old.text, old.scope);
        INSERT INTO eventide_memory_fts(rowid, text, scope) VALUES (new.id, new.text, new.scope);
    END""",
]
UNVERSIONED_POSTGRES = [
    """CREATE TABLE eventide_memory (id BIGSERIAL PRIMARY KEY, app_name TEXT NOT NULL,
        user_id TEXT NOT NULL, session_id TEXT NOT NULL, event_id TEXT NOT NULL, author TEXT,
        timestamp DOUBLE PRECISION NOT NULL, content TEXT NOT NULL, text TEXT NOT NULL,
        tsv tsvector GENERATED ALWAYS AS (to_tsvector('english', text)) STORED,
        UNIQUE (app_name, user_id, session_id, event_id))""",
    """CREATE INDEX eventide_memory_tsv ON eventide_memory USING GIN (tsv)
        WITH (fastupdate = off)""",
]
# The scope token that release stored: one FTS5 token naming (app, user).
OLD_SCOPE = "scope" + hashlib.blake2b(f"{APP}\x00{USER}".encode(), digest_size=12).hexdigest()
OLD_ROWS = [
    ("s0", "e1", "user", 1_700_000_000.0, "Lisbon trams are yellow"),
    ("s0", "e2", "model", 1_700_000_001.0, "Porto has a famous bookshop"),
]


def _content(text: str) -> str:
    return '{"parts":[{"text":"' + text + '"}],"role":"user"}'


def _sqlite_url(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path / 'memory.db'}"


def _make_unversioned_sqlite(path: Path) -> None:
    conn = sqlite3.connect(path)
    try:
        for statement in UNVERSIONED_SQLITE:
            conn.execute(statement)
        conn.executemany(
            "INSERT INTO eventide_memory (app_name, user_id, session_id, event_id, author, "
            "timestamp, content, text, scope) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [
                (APP, USER, sid, eid, author, ts, _content(text), text, OLD_SCOPE)
                for sid, eid, author, ts, text in OLD_ROWS
            ],
        )
        conn.commit()
    finally:
        conn.close()


async def _postgres(url: str, work: Callable[[asyncpg.Connection], Awaitable[object]]) -> object:
    conn = await asyncpg.connect(make_url(url).set(drivername="postgresql").render_as_string(False))
    try:
        return await work(conn)
    finally:
        await conn.close()


async def _make_unversioned_postgres(url: str) -> None:
    async def work(conn: asyncpg.Connection) -> None:
        for statement in UNVERSIONED_POSTGRES:
            await conn.execute(statement)
        await conn.executemany(
            "INSERT INTO eventide_memory (app_name, user_id, session_id, event_id, author, "
            "timestamp, content, text) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)",
            [
                (APP, USER, sid, eid, author, ts, _content(text), text)
                for sid, eid, author, ts, text in OLD_ROWS
            ],
        )

    await _postgres(url, work)


async def _versions_sqlite(path: Path) -> dict[str, int]:
    conn = sqlite3.connect(path)
    try:
        return dict(conn.execute("SELECT component, version FROM eventide_schema_versions"))
    finally:
        conn.close()


async def _versions_postgres(url: str) -> dict[str, int]:
    async def work(conn: asyncpg.Connection) -> dict[str, int]:
        rows = await conn.fetch("SELECT component, version FROM eventide_schema_versions")
        return {r[0]: r[1] for r in rows}

    found = await _postgres(url, work)
    assert isinstance(found, dict)
    return found


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def dialect(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def database_url(dialect: str, request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """A new, empty database of the dialect."""
    if dialect == "postgres":
        return str(request.getfixturevalue("fresh_postgres_url"))
    return _sqlite_url(tmp_path)


async def _versions(url: str) -> dict[str, int]:
    if url.startswith("sqlite"):
        return await _versions_sqlite(Path(url.removeprefix("sqlite:///")))
    return await _versions_postgres(url)


async def test_an_unversioned_database_is_adopted_with_its_rows(database_url: str) -> None:
    """A memory database made before the schema was versioned (no version row) is adopted
    as version 1: nothing is recreated, every row stays searchable, and new sessions are
    indexed next to the old rows."""
    if database_url.startswith("sqlite"):
        _make_unversioned_sqlite(Path(database_url.removeprefix("sqlite:///")))
    else:
        await _make_unversioned_postgres(database_url)
    service = SqlMemoryService(database_url)
    try:
        assert sorted(await texts_for(service, "lisbon porto")) == [
            "Lisbon trams are yellow",
            "Porto has a famous bookshop",
        ]
        assert await _versions(database_url) == {"memory": SCHEMA_VERSION}
        await service.add_session_to_memory(session("s1", "Lisbon by night"))
        assert sorted(await texts_for(service, "lisbon")) == [
            "Lisbon by night",
            "Lisbon trams are yellow",
        ]
    finally:
        await service.close()


async def test_a_newer_memory_schema_is_refused(database_url: str) -> None:
    """A database whose memory schema a newer Eventide wrote is refused with an error that
    names the component and both versions, never "upgraded" or used."""
    first = SqlMemoryService(database_url)
    try:
        await first.add_session_to_memory(session("s1", "Lisbon"))
    finally:
        await first.close()
    update = "UPDATE eventide_schema_versions SET version = 99 WHERE component = 'memory'"
    if database_url.startswith("sqlite"):
        conn = sqlite3.connect(database_url.removeprefix("sqlite:///"))
        conn.execute(update)
        conn.commit()
        conn.close()
    else:

        async def bump(conn: asyncpg.Connection) -> object:
            return await conn.execute(update)

        await _postgres(database_url, bump)
    service = SqlMemoryService(database_url)
    try:
        with pytest.raises(SchemaVersionError, match="memory schema version 99") as raised:
            await service.search_memory(app_name=APP, user_id=USER, query="lisbon")
        assert raised.value.component == "memory" and raised.value.supported == SCHEMA_VERSION
    finally:
        await service.close()


async def test_sessions_and_memory_share_one_database_and_version_table(
    database_url: str,
) -> None:
    sessions = SqlSessionService(database_url)
    memory = SqlMemoryService(database_url)
    try:
        stored = await sessions.create_session(app_name=APP, user_id=USER, session_id="s")
        await memory.add_session_to_memory(session("s", "Lisbon"))
        assert await texts_for(memory, "lisbon") == ["Lisbon"]
        versions = await _versions(database_url)
        assert versions["memory"] == SCHEMA_VERSION and versions["sessions"] >= 1
        assert stored.id == "s"
    finally:
        await memory.close()
        await sessions.close()
