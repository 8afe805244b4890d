"""``SqlMemoryService``: full-text search over remembered events, in SQLite or PostgreSQL.

One row per remembered event (its text, its content as JSON, author, time, session) in the
table ``eventide_memory``, indexed for full-text search:

- **SQLite** (``sqlite:///path/to/memory.db``): an FTS5 external-content index kept in step
  by triggers, Porter stemming, ranked by BM25.
- **PostgreSQL** (``postgresql://user@host/db``): a stored ``tsvector`` column with a GIN
  index (English configuration). ``ts_rank`` knows nothing of how rare a word is, so the
  score weights each query word's ``ts_rank`` by its inverse document frequency among the
  user's memories, which ranks like BM25: more matched words first, rarer words first.

A query is never passed to the search engine as syntax: it is split into words, and a memory
matches when it contains any of them. Quotes, ``AND``, ``*`` or ``-`` in a query are just text.

The SQL layer is the session store's: the one URL parser (:mod:`eventide._database_urls`),
the one migration runner (:mod:`eventide._sql_migrations`, component ``memory``, tables in
:mod:`eventide.memory.sql_memory_schema`), and the same connection layer per dialect
(:mod:`eventide._sqlite_database`: ``sqlite3``, every operation on the layer's thread, since
a search may take milliseconds; :mod:`eventide._postgres_database`: asyncpg). Statements
shared by both dialects are written once, with SQLite's numbered parameters (``?1``), which
become asyncpg's (``$1``).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import sqlite3
from collections.abc import Awaitable, Callable, Mapping, Sequence
from datetime import UTC, datetime
from typing import Any, TypeVar

from eventide import types
from eventide._database_urls import MEMORY_PATH, parse_database_url
from eventide._postgres_database import PostgresDatabase
from eventide._sql_migrations import migrate_postgres
from eventide._sqlite_database import SqliteDatabase, SqliteSchema
from eventide.errors import BackendError, ConfigurationError
from eventide.events import Event
from eventide.memory.base_memory_service import (
    BaseMemoryService,
    MemoryEntry,
    SearchMemoryResponse,
)
from eventide.memory.direct_entries import DIRECT_SESSION, entry_event
from eventide.memory.sql_memory_schema import COMPONENT, MIGRATIONS
from eventide.sessions.session import Session

__all__ = ["SqlMemoryService"]

_T = TypeVar("_T")
_WORD = re.compile(r"\w+", re.UNICODE)
# More words than this add little to ranking and make the statement needlessly large.
_MAX_QUERY_WORDS = 32


def _postgres(sql: str) -> str:
    """SQLite's numbered parameters (``?1``) as asyncpg's (``$1``)."""
    return re.sub(r"\?(\d+)", r"$\1", sql)


_SELECT_INDEXED = """SELECT event_id FROM eventide_memory
    WHERE app_name = ?1 AND user_id = ?2 AND session_id = ?3"""

_DELETE_EVENT = """DELETE FROM eventide_memory
    WHERE app_name = ?1 AND user_id = ?2 AND session_id = ?3 AND event_id = ?4"""

_DELETE_MEMORIES = "DELETE FROM eventide_memory WHERE app_name = ?1 AND user_id = ?2"

_DELETE_ONE = """DELETE FROM eventide_memory
    WHERE app_name = ?1 AND user_id = ?2 AND event_id = ?3"""

_FORGET_ONE = """INSERT INTO eventide_memory_forgotten (app_name, user_id, event_id)
    VALUES (?1, ?2, ?3) ON CONFLICT DO NOTHING"""

_SELECT_FORGOTTEN = """SELECT event_id FROM eventide_memory_forgotten
    WHERE app_name = ?1 AND user_id = ?2"""

# SQLite also stores the row's scope token (see _scope_token). A row remembered before is
# replaced (``_REPLACE``: a direct entry written again), or kept (``_KEEP``: an event added
# again with add_events_to_memory).
_INSERT = """INSERT INTO eventide_memory
    (app_name, user_id, session_id, event_id, author, timestamp, content, text,
     custom_metadata{scope})
    VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9{scope_value})
    ON CONFLICT (app_name, user_id, session_id, event_id) DO {conflict}"""
_REPLACE = """UPDATE SET
        author = excluded.author, timestamp = excluded.timestamp,
        content = excluded.content, text = excluded.text,
        custom_metadata = excluded.custom_metadata"""
_KEEP = "NOTHING"

_SQLITE_INSERT = _INSERT.format(scope=", scope", scope_value=", ?10", conflict=_REPLACE)
_POSTGRES_INSERT = _postgres(_INSERT.format(scope="", scope_value="", conflict=_REPLACE))
_SQLITE_ADD = _INSERT.format(scope=", scope", scope_value=", ?10", conflict=_KEEP)
_POSTGRES_ADD = _postgres(_INSERT.format(scope="", scope_value="", conflict=_KEEP))

_SQLITE_SEARCH = """SELECT m.session_id, m.author, m.timestamp, m.content, m.event_id,
        m.custom_metadata
    FROM eventide_memory_fts JOIN eventide_memory AS m ON m.id = eventide_memory_fts.rowid
    WHERE eventide_memory_fts MATCH ?1 AND m.app_name = ?2 AND m.user_id = ?3
    ORDER BY bm25(eventide_memory_fts, 1.0, 0.0), m.timestamp DESC
    LIMIT ?4"""

# Every CTE is MATERIALIZED so that each runs once: inlined, the per-word counts would be
# re-evaluated for every candidate row. Candidates come from one GIN lookup of any query
# word; each word's document frequency is counted among those candidates. The document
# count N in the IDF is the table's row estimate from the planner's statistics (O(1)):
# counting the user's rows exactly cost more than the rest of the search together, and
# ranking only needs IDF to fall as a word gets more common.
_POSTGRES_SEARCH = _postgres("""WITH useful AS MATERIALIZED (
        SELECT DISTINCT q FROM (
            SELECT plainto_tsquery('english', w) AS q
            FROM unnest(CAST(?1 AS text[])) AS w
        ) AS terms
        WHERE numnode(q) > 0
    ), candidates AS MATERIALIZED (
        SELECT id, tsv FROM eventide_memory
        WHERE app_name = ?2 AND user_id = ?3 AND tsv @@ (
            SELECT CAST(string_agg('(' || CAST(q AS text) || ')', ' | ') AS tsquery)
            FROM useful
        )
    ), total AS MATERIALIZED (
        SELECT GREATEST(
            (SELECT reltuples FROM pg_class WHERE oid = CAST('eventide_memory' AS regclass)),
            (SELECT count(*) FROM candidates)
        ) AS n
    ), weighted AS MATERIALIZED (
        SELECT u.q, CAST(ln(1 + (total.n - d.df + 0.5) / (d.df + 0.5)) AS float8) AS idf
        FROM useful AS u
        CROSS JOIN total
        CROSS JOIN LATERAL (
            SELECT count(*) AS df FROM candidates AS c WHERE c.tsv @@ u.q
        ) AS d
    ), scored AS (
        SELECT c.id, sum(w.idf * (1 + ts_rank(c.tsv, w.q))) AS score
        FROM candidates AS c JOIN weighted AS w ON c.tsv @@ w.q
        GROUP BY c.id
        ORDER BY score DESC
        LIMIT ?4
    )
    SELECT m.session_id, m.author, m.timestamp, m.content, m.event_id, m.custom_metadata
    FROM scored AS s JOIN eventide_memory AS m ON m.id = s.id
    ORDER BY s.score DESC, m.timestamp DESC""")


class SqlMemoryService(BaseMemoryService):
    """Indexes sessions' events in SQLite (FTS5) or PostgreSQL (tsvector) and searches them.

    The tables are created (or brought up to date) on first use. Safe for many processes
    sharing one database.

    Args:
        url: ``sqlite:///memory.db`` (``sqlite+aiosqlite://`` too; ``sqlite:///:memory:``
            for a database as long-lived as the service) or ``postgresql://user@host/db``
            (any ``postgresql+<driver>://`` form); see ``eventide/_database_urls.py``.
        max_results: the most memories one search returns (best first).
        busy_timeout: SQLite: seconds to wait for another process's write lock.
        max_connections: PostgreSQL: the most connections open at once (per event loop).

    Raises:
        ConfigurationError: the URL names another database, or a SQLite path that is a
            folder.
    """

    def __init__(
        self,
        url: str,
        *,
        max_results: int = 50,
        busy_timeout: float = 10.0,
        max_connections: int = 10,
    ) -> None:
        parsed = parse_database_url(url, setting="url")
        if max_results < 1:
            raise ConfigurationError(f"max_results must be at least 1, got {max_results}.")
        self.max_results = max_results
        self._sqlite: SqliteDatabase | None = None
        self._postgres: PostgresDatabase | None = None
        self._ready = False  # migrated
        path = parsed.sqlite_path
        if path is None:
            self._postgres = PostgresDatabase(parsed, max_connections=max_connections)
            return
        if path != MEMORY_PATH:
            if os.path.isdir(path):
                raise ConfigurationError(
                    f"The SQLite memory database path {path!r} is a folder. Give the path "
                    f"of a file, e.g. 'sqlite:///{os.path.join(path, 'memory.db')}'."
                )
            if parent := os.path.dirname(path):
                os.makedirs(parent, exist_ok=True)
        # WAL lets searches run while another process indexes; NORMAL is durable against
        # process crashes (an OS crash may lose the last commits, which is fine for an index).
        self._sqlite = SqliteDatabase(
            path,
            schema=SqliteSchema(COMPONENT, MIGRATIONS),
            synchronous="NORMAL",
            busy_timeout=busy_timeout,
            inline_reads=False,
            inline_writes=False,
            thread_name="eventide-memory",
        )

    # --- the contract ---
    async def add_session_to_memory(self, session: Session) -> None:
        """Index the session's events that have text (partial events excluded).

        Re-adding a session makes the index match it, in one transaction: events no longer
        in the session are forgotten, new ones are added. Committed events never change, so
        those already indexed are left as they are, and re-adding after every invocation
        costs the new events, not the whole history again.
        """
        scope = (session.app_name, session.user_id, session.id)
        user = scope[:2]
        events = {
            event.id: event
            for event in session.events
            if event.text and not event.partial and event.content is not None
        }
        if self._sqlite is not None:
            token = _scope_token(session.app_name, session.user_id)

            def index(cur: sqlite3.Cursor) -> None:
                indexed = {row[0] for row in cur.execute(_SELECT_INDEXED, scope).fetchall()}
                forgotten = {row[0] for row in cur.execute(_SELECT_FORGOTTEN, user).fetchall()}
                stale = [(*scope, event_id) for event_id in indexed - events.keys()]
                cur.executemany(_DELETE_EVENT, stale)
                rows = [
                    (*_row(scope, event, None), token)
                    for event_id, event in events.items()
                    if event_id not in indexed and event_id not in forgotten
                ]
                cur.executemany(_SQLITE_INSERT, rows)

            await self._on_sqlite(index)
            return

        async def index_postgres(conn: Any) -> None:
            async with conn.transaction():
                indexed = {row[0] for row in await conn.fetch(_postgres(_SELECT_INDEXED), *scope)}
                forgotten = {
                    row[0] for row in await conn.fetch(_postgres(_SELECT_FORGOTTEN), *user)
                }
                stale = [(*scope, event_id) for event_id in indexed - events.keys()]
                if stale:
                    await conn.executemany(_postgres(_DELETE_EVENT), stale)
                rows = [
                    _row(scope, event, None)
                    for event_id, event in events.items()
                    if event_id not in indexed and event_id not in forgotten
                ]
                if rows:
                    await conn.executemany(_POSTGRES_INSERT, rows)

        await self._on_postgres(index_postgres)

    async def search_memory(
        self, *, app_name: str, user_id: str, query: str
    ) -> SearchMemoryResponse:
        """The user's memories in the app containing any word of ``query``, best first."""
        words = query_words(query)
        if not words:
            return SearchMemoryResponse()
        rows: Sequence[Sequence[Any]]
        if self._sqlite is not None:
            any_word = " OR ".join('"' + w.replace('"', '""') + '"' for w in words)
            match = f'scope:"{_scope_token(app_name, user_id)}" AND text:({any_word})'
            args = (match, app_name, user_id, self.max_results)

            def search(cur: sqlite3.Cursor) -> list[Any]:
                return cur.execute(_SQLITE_SEARCH, args).fetchall()

            rows = await self._on_sqlite(search, write=False)
        else:

            async def search_postgres(conn: Any) -> list[Any]:
                result: list[Any] = await conn.fetch(
                    _POSTGRES_SEARCH, words, app_name, user_id, self.max_results
                )
                return result

            rows = await self._on_postgres(search_postgres)
        return SearchMemoryResponse(
            memories=[
                MemoryEntry(
                    content=types.Content.model_validate_json(content),
                    author=author,
                    timestamp=datetime.fromtimestamp(timestamp, UTC).isoformat(),
                    session_id=session_id,
                    id=event_id,
                    custom_metadata=json.loads(metadata) if metadata else {},
                )
                for session_id, author, timestamp, content, event_id, metadata in rows
            ]
        )

    async def delete_memories(
        self, *, app_name: str, user_id: str, session_id: str | None = None
    ) -> None:
        """Forget the user's memories in the app (of one session, when given)."""
        statement = _DELETE_MEMORIES
        args: tuple[str, ...] = (app_name, user_id)
        if session_id is not None:
            statement += " AND session_id = ?3"
            args = (*args, session_id)
        await self._execute(statement, args)

    async def add_memory(
        self,
        *,
        app_name: str,
        user_id: str,
        memories: Sequence[MemoryEntry],
        custom_metadata: Mapping[str, object] | None = None,
    ) -> None:
        """Remember these entries as they are (not from a session); an entry with the id of
        one remembered before replaces it. Each keeps ``custom_metadata`` merged with its
        own (its own wins), as a search returns it."""
        scope = (app_name, user_id, DIRECT_SESSION)
        events = [entry_event(entry, custom_metadata) for entry in memories]
        rows = [_row(scope, event, event.custom_metadata) for event in events]
        await self._insert(rows, scope, replace=True)

    async def add_events_to_memory(
        self,
        *,
        app_name: str,
        user_id: str,
        events: Sequence[Event],
        session_id: str | None = None,
        custom_metadata: Mapping[str, object] | None = None,
    ) -> None:
        """Index these events as an addition to what is remembered of ``session_id`` (events
        already remembered there, by id, are kept as they are; without a session id they
        are kept under ``""``), each with ``custom_metadata``. A later
        ``add_session_to_memory`` of that session makes the index match the session."""
        scope = (app_name, user_id, session_id or DIRECT_SESSION)
        rows = [
            _row(scope, event, custom_metadata)
            for event in events
            if event.text and not event.partial and event.content is not None
        ]
        await self._insert(rows, scope, replace=False)

    async def _insert(
        self, rows: list[tuple[Any, ...]], scope: tuple[str, str, str], *, replace: bool
    ) -> None:
        """Insert ``rows`` (of ``scope``); one remembered before is replaced, or kept."""
        if not rows:
            return
        if self._sqlite is not None:
            token = _scope_token(scope[0], scope[1])
            statement = _SQLITE_INSERT if replace else _SQLITE_ADD

            def insert(cur: sqlite3.Cursor) -> None:
                cur.executemany(statement, [(*row, token) for row in rows])

            await self._on_sqlite(insert)
            return

        async def insert_postgres(conn: Any) -> None:
            await conn.executemany(_POSTGRES_INSERT if replace else _POSTGRES_ADD, rows)

        await self._on_postgres(insert_postgres)

    async def delete_memory(
        self, *, app_name: str, user_id: str, memory_id: str | None = None
    ) -> None:
        """Forget the memory ``memory_id`` (a search result's ``id``); no id, no change.
        Adding its session to memory again does not bring it back (as in google-adk)."""
        if not memory_id:
            return
        args = (app_name, user_id, memory_id)
        if self._sqlite is not None:

            def forget(cur: sqlite3.Cursor) -> None:
                cur.execute(_DELETE_ONE, args)
                cur.execute(_FORGET_ONE, args)

            await self._on_sqlite(forget)
            return

        async def forget_postgres(conn: Any) -> None:
            async with conn.transaction():
                await conn.execute(_postgres(_DELETE_ONE), *args)
                await conn.execute(_postgres(_FORGET_ONE), *args)

        await self._on_postgres(forget_postgres)

    async def _execute(self, statement: str, args: tuple[str, ...]) -> None:
        """Run one write ``statement`` (SQLite's ``?N`` placeholders) on either backend."""
        if self._sqlite is not None:

            def write(cur: sqlite3.Cursor) -> None:
                cur.execute(statement, args)

            await self._on_sqlite(write)
            return

        async def write_postgres(conn: Any) -> None:
            await conn.execute(_postgres(statement), *args)

        await self._on_postgres(write_postgres)

    async def close(self) -> None:
        """Close the database connections."""
        if self._sqlite is not None:
            await self._sqlite.close()
        elif self._postgres is not None:
            await self._postgres.close()

    async def _on_sqlite(self, fn: Callable[[sqlite3.Cursor], _T], *, write: bool = True) -> _T:
        """``fn`` on the SQLite layer (see ``SqliteDatabase.run``), once the tables are up to
        date; SQLite without FTS5 is a ConfigurationError."""
        sqlite = self._sqlite
        assert sqlite is not None  # exactly one layer is set in __init__
        try:
            if not self._ready:
                await sqlite.migrate()
                self._ready = True
            return await sqlite.run(fn, write=write)
        except BackendError as exc:
            if "fts5" in str(exc.__cause__).lower():
                raise ConfigurationError(
                    "This Python's SQLite was built without FTS5, which SqlMemoryService "
                    "needs. Use a Python whose sqlite3 has FTS5, or PostgreSQL."
                ) from exc
            raise

    async def _on_postgres(self, work: Callable[[Any], Awaitable[_T]]) -> _T:
        """``work(connection)`` on the PostgreSQL layer, once the tables are up to date;
        safe to repeat, so retried once on a fresh connection after a lost one."""
        postgres = self._postgres
        assert postgres is not None  # exactly one layer is set in __init__
        if not self._ready:
            where = postgres.where

            async def migrate(conn: Any) -> None:
                async with conn.transaction():
                    await migrate_postgres(conn, COMPONENT, MIGRATIONS, database=where)

            await postgres.run(migrate)
            self._ready = True
        return await postgres.run(work)


def _row(
    scope: tuple[str, str, str], event: Event, metadata: Mapping[str, object] | None
) -> tuple[Any, ...]:
    """An event's row: scope, event id, author, time, content JSON, text, metadata JSON."""
    content = event.content
    return (
        *scope,
        event.id,
        event.author,
        event.timestamp,
        content.model_dump_json(exclude_none=True) if content else "{}",
        event.text,
        json.dumps(metadata, default=str) if metadata else None,
    )


def query_words(query: str) -> list[str]:
    """The distinct lower-cased words of a query, in order (at most 32); the only part of a
    user's query that reaches the search engine."""
    seen: dict[str, None] = {}
    for word in _WORD.findall(query):
        seen.setdefault(word.lower(), None)
        if len(seen) >= _MAX_QUERY_WORDS:
            break
    return list(seen)


def _scope_token(app_name: str, user_id: str) -> str:
    """One search token standing for (app, user): letters and digits only, so every FTS5
    tokenizer keeps it whole."""
    digest = hashlib.blake2b(f"{app_name}\x00{user_id}".encode(), digest_size=12).hexdigest()
    return "scope" + digest
