"""SqlMemoryService beyond the shared contract: relevance, bad configuration, failures,
concurrent indexing."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import asyncpg
import pytest
from sqlalchemy.engine import make_url

from eventide.errors import BackendError, ConfigurationError
from eventide.memory.sql_memory_service import SqlMemoryService, query_words
from tests.conformance.memory_service_contract import APP, USER, session, texts_for
from tests.memory.conftest import clear_postgres_memory


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def sql_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "postgres":
        return str(request.getfixturevalue("postgres_memory_url"))
    return f"sqlite+aiosqlite:///{tmp_path / 'memory.db'}"


@pytest.fixture
async def sql_memory(sql_url: str) -> AsyncIterator[SqlMemoryService]:
    service = SqlMemoryService(sql_url)
    yield service
    if sql_url.startswith("postgresql"):
        await clear_postgres_memory(sql_url)
    await service.close()


async def test_a_rarer_word_outranks_a_common_one(sql_memory: SqlMemoryService) -> None:
    """Full-text ranking weighs words by rarity (BM25 in SQLite, IDF-weighted ts_rank in
    PostgreSQL): with one matched word each, the memory holding the rare word comes first,
    even though it is the oldest (a recency tie-break would put it last)."""
    common = [f"team meeting number {i} about budgets" for i in range(12)]
    await sql_memory.add_session_to_memory(session("s1", "a giraffe at the zoo", *common))
    found = await texts_for(sql_memory, "meeting giraffe")
    assert found[0] == "a giraffe at the zoo"
    assert sorted(found[1:]) == sorted(common)


async def test_stemming_matches_other_forms_of_a_word(sql_memory: SqlMemoryService) -> None:
    await sql_memory.add_session_to_memory(session("s1", "She was running the booking desk"))
    assert await texts_for(sql_memory, "runs bookings") == ["She was running the booking desk"]


async def test_results_are_capped_at_max_results(sql_url: str) -> None:
    service = SqlMemoryService(sql_url, max_results=3)
    try:
        await service.add_session_to_memory(
            session("s1", *(f"note {i} on Lisbon" for i in range(10)))
        )
        assert len(await texts_for(service, "lisbon")) == 3
    finally:
        await service.delete_memories(app_name=APP, user_id=USER)
        await service.close()


async def test_concurrent_reindexing_of_one_session_leaves_no_duplicates(sql_url: str) -> None:
    """Several services (separate connection pools, as in separate processes) re-add the same
    session at once: each event is remembered exactly once."""
    services = [SqlMemoryService(sql_url) for _ in range(3)]
    s = session("s1", *(f"Lisbon note {i}" for i in range(20)))
    try:
        await asyncio.gather(*(svc.add_session_to_memory(s) for svc in services for _ in range(3)))
        found = await texts_for(services[0], "lisbon")
        assert sorted(found, key=str) == sorted((f"Lisbon note {i}" for i in range(20)), key=str)
    finally:
        await services[0].delete_memories(app_name=APP, user_id=USER)
        for svc in services:
            await svc.close()


async def test_a_database_path_that_is_a_folder_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigurationError, match="is a folder") as raised:
        SqlMemoryService(f"sqlite+aiosqlite:///{tmp_path}")
    assert str(tmp_path) in str(raised.value)


async def test_a_file_that_is_not_a_database_is_a_backend_error(tmp_path: Path) -> None:
    bogus = tmp_path / "memory.db"
    bogus.write_bytes(b"this is not a SQLite database, just some text " * 100)
    service = SqlMemoryService(f"sqlite+aiosqlite:///{bogus}")
    try:
        with pytest.raises(BackendError, match="memory.db"):
            await service.search_memory(app_name=APP, user_id=USER, query="anything")
    finally:
        await service.close()


async def test_missing_parent_folders_are_created(tmp_path: Path) -> None:
    service = SqlMemoryService(f"sqlite+aiosqlite:///{tmp_path / 'a' / 'b' / 'memory.db'}")
    try:
        await service.add_session_to_memory(session("s1", "Lisbon"))
        assert await texts_for(service, "lisbon") == ["Lisbon"]
    finally:
        await service.close()


async def test_unreachable_postgres_is_a_backend_error_naming_the_server() -> None:
    # Port 9 (discard) on 127.0.0.1 has no PostgreSQL: the connection is refused at once.
    service = SqlMemoryService("postgresql+asyncpg://postgres:secret@127.0.0.1:9/nowhere")
    try:
        with pytest.raises(BackendError, match="127.0.0.1:9") as raised:
            await service.search_memory(app_name=APP, user_id=USER, query="x")
        assert "secret" not in str(raised.value)
    finally:
        await service.close()


@pytest.mark.parametrize(
    "url", ["mysql+aiomysql://u@h/db", "sqlite+aiosqlite:///m.db?x=1#max_results"]
)
async def test_unsupported_database_or_bad_settings_are_configuration_errors(url: str) -> None:
    if url.startswith("mysql"):
        with pytest.raises(ConfigurationError, match="mysql"):
            SqlMemoryService(url)
    else:
        with pytest.raises(ConfigurationError, match="max_results"):
            SqlMemoryService(url, max_results=0)


def test_only_words_of_a_query_reach_the_search_engine() -> None:
    assert query_words('Lisbon AND "Porto" -tram* NEAR(x) lisbon') == [
        "lisbon",
        "and",
        "porto",
        "tram",
        "near",
        "x",
    ]
    assert query_words("*\"'-()") == []
    assert len(query_words(" ".join(f"w{i}" for i in range(100)))) == 32


async def test_importing_the_packages_loads_no_optional_dependency() -> None:
    """``eventide``, ``eventide.memory`` and ``eventide.artifacts`` stay light: SQLAlchemy,
    the drivers and fsspec load only when a SQL or fsspec service module is imported."""
    code = (
        "import sys, eventide, eventide.memory, eventide.artifacts, eventide.plugins;"
        "import eventide.plugins.memory_plugin;"
        "print(sorted(m for m in ('sqlalchemy', 'aiosqlite', 'asyncpg', 'fsspec')"
        " if m in sys.modules))"
    )
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-c", code, stdout=asyncio.subprocess.PIPE
    )
    out, _ = await proc.communicate()
    assert proc.returncode == 0
    assert out.decode().strip() == "[]"


@pytest.mark.postgres
async def test_postgres_connections_dropped_by_the_server_are_replaced(
    postgres_memory_url: str,
) -> None:
    """The server ends every connection (as in a restart or failover): nothing indexed is
    lost and the next calls work without an error."""
    service = SqlMemoryService(postgres_memory_url)
    try:
        await service.add_session_to_memory(session("s1", "Lisbon before the outage"))
        database = make_url(postgres_memory_url).database
        admin = await asyncpg.connect(
            make_url(postgres_memory_url).set(drivername="postgresql").render_as_string(False)
        )
        try:
            killed = await admin.fetchval(
                "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity "
                "WHERE datname = $1 AND pid <> pg_backend_pid()",
                database,
            )
        finally:
            await admin.close()
        assert killed >= 1
        assert await texts_for(service, "lisbon") == ["Lisbon before the outage"]
        await service.add_session_to_memory(session("s2", "Lisbon after the outage"))
        assert sorted(await texts_for(service, "lisbon")) == [
            "Lisbon after the outage",
            "Lisbon before the outage",
        ]
    finally:
        await service.delete_memories(app_name=APP, user_id=USER)
        await service.close()


@pytest.mark.postgres
def test_one_postgres_service_serves_one_event_loop_after_another(
    postgres_memory_url: str,
) -> None:
    """asyncpg connections belong to the loop that opened them; a service used from one
    loop and then another (``Runner.run`` runs each call on a private loop) opens a pool on
    the new loop and drops the old one's connections, without an error."""
    service = SqlMemoryService(postgres_memory_url)

    async def index_and_search(text: str) -> list[str]:
        await service.add_session_to_memory(session(text, f"Lisbon {text}"))
        return sorted(await texts_for(service, "lisbon"))

    try:
        assert asyncio.run(index_and_search("first")) == ["Lisbon first"]
        assert asyncio.run(index_and_search("second")) == ["Lisbon first", "Lisbon second"]
    finally:

        async def clean_up() -> None:
            await service.delete_memories(app_name=APP, user_id=USER)
            await service.close()

        asyncio.run(clean_up())
