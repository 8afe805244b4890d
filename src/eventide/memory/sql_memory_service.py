"""``SqlMemoryService``: full-text search over remembered events, in SQLite or PostgreSQL.

One row per remembered event (its text, its content as JSON, author, time, session) in the
table ``eventide_memory``, indexed for full-text search:

- **SQLite** (``sqlite+aiosqlite:///path/to/memory.db``): an FTS5 external-content index kept
  in step by triggers, Porter stemming, ranked by BM25.
- **PostgreSQL** (``postgresql+asyncpg://user@host/db``): a stored ``tsvector`` column with a
  GIN index (English configuration). ``ts_rank`` knows nothing of how rare a word is, so the
  score weights each query word's ``ts_rank`` by its inverse document frequency among the
  user's memories, which ranks like BM25: more matched words first, rarer words first.

A query is never passed to the search engine as syntax: it is split into words, and a memory
matches when it contains any of them. Quotes, ``AND``, ``*`` or ``-`` in a query are just text.
"""

from __future__ import annotations

import asyncio
import hashlib
import os
import re
from collections.abc import AsyncGenerator, Sequence
from contextlib import asynccontextmanager
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import event as sa_event
from sqlalchemy import text
from sqlalchemy.engine import make_url
from sqlalchemy.exc import OperationalError, SQLAlchemyError
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine, create_async_engine
from sqlalchemy.pool import StaticPool

from eventide import types
from eventide._database_urls import normalize_database_url
from eventide.errors import BackendError, ConfigurationError
from eventide.events import Event
from eventide.memory.base_memory_service import (
    BaseMemoryService,
    MemoryEntry,
    SearchMemoryResponse,
)
from eventide.sessions.session import Session

__all__ = ["SqlMemoryService"]

_WORD = re.compile(r"\w+", re.UNICODE)
# More words than this add little to ranking and make the statement needlessly large.
_MAX_QUERY_WORDS = 32

_SQLITE_SCHEMA = (
    """CREATE TABLE IF NOT EXISTS eventide_memory (
        id INTEGER PRIMARY KEY,
        app_name TEXT NOT NULL,
        user_id TEXT NOT NULL,
        session_id TEXT NOT NULL,
        event_id TEXT NOT NULL,
        author TEXT,
        timestamp REAL NOT NULL,
        content TEXT NOT NULL,
        text TEXT NOT NULL,
        scope TEXT NOT NULL,
        UNIQUE (app_name, user_id, session_id, event_id))""",
    # ``scope`` holds one token naming (app, user): a search ANDs it with the query's words,
    # so only the user's rows are ever ranked, however many users share the database.
    """CREATE VIRTUAL TABLE IF NOT EXISTS eventide_memory_fts USING fts5(
        text, scope, content='eventide_memory', content_rowid='id',
        tokenize='porter unicode61')""",
    """CREATE TRIGGER IF NOT EXISTS eventide_memory_ai AFTER INSERT ON eventide_memory BEGIN
        INSERT INTO eventide_memory_fts(rowid, text, scope) VALUES (new.id, new.text, new.scope);
    END""",
    """CREATE TRIGGER IF NOT EXISTS eventide_memory_ad AFTER DELETE ON eventide_memory BEGIN
        INSERT INTO eventide_memory_fts(eventide_memory_fts, rowid, text, scope)
        VALUES ('delete', old.id, old.text, old.scope);
    END""",
    """CREATE TRIGGER IF NOT EXISTS eventide_memory_au AFTER UPDATE ON eventide_memory BEGIN
        INSERT INTO eventide_memory_fts(eventide_memory_fts, rowid, text, scope)
        VALUES ('delete', old.id, old.text, old.scope);
        INSERT INTO eventide_memory_fts(rowid, text, scope) VALUES (new.id, new.text, new.scope);
    END""",
)

_POSTGRES_SCHEMA = (
    # Several processes may start at once: serialize the DDL (CREATE ... IF NOT EXISTS
    # alone can still collide on the catalog's unique indexes).
    "SELECT pg_advisory_xact_lock(7245091388312)",
    """CREATE TABLE IF NOT EXISTS eventide_memory (
        id BIGSERIAL PRIMARY KEY,
        app_name TEXT NOT NULL,
        user_id TEXT NOT NULL,
        session_id TEXT NOT NULL,
        event_id TEXT NOT NULL,
        author TEXT,
        timestamp DOUBLE PRECISION NOT NULL,
        content TEXT NOT NULL,
        text TEXT NOT NULL,
        tsv tsvector GENERATED ALWAYS AS (to_tsvector('english', text)) STORED,
        UNIQUE (app_name, user_id, session_id, event_id))""",
    # fastupdate off: a bulk re-index would otherwise sit in the GIN pending list, which
    # every search scans linearly until (auto)vacuum merges it.
    """CREATE INDEX IF NOT EXISTS eventide_memory_tsv ON eventide_memory USING GIN (tsv)
        WITH (fastupdate = off)""",
)

_SELECT_INDEXED = """SELECT event_id FROM eventide_memory
    WHERE app_name = :app_name AND user_id = :user_id AND session_id = :session_id"""

_DELETE_EVENT = """DELETE FROM eventide_memory
    WHERE app_name = :app_name AND user_id = :user_id AND session_id = :session_id
      AND event_id = :event_id"""

_POSTGRES_INSERT = """INSERT INTO eventide_memory
    (app_name, user_id, session_id, event_id, author, timestamp, content, text)
    VALUES (:app_name, :user_id, :session_id, :event_id, :author, :timestamp, :content, :text)
    ON CONFLICT (app_name, user_id, session_id, event_id) DO UPDATE SET
        author = excluded.author, timestamp = excluded.timestamp,
        content = excluded.content, text = excluded.text"""

_SQLITE_INSERT = """INSERT INTO eventide_memory
    (app_name, user_id, session_id, event_id, author, timestamp, content, text, scope)
    VALUES (:app_name, :user_id, :session_id, :event_id, :author, :timestamp, :content, :text,
            :scope)
    ON CONFLICT (app_name, user_id, session_id, event_id) DO UPDATE SET
        author = excluded.author, timestamp = excluded.timestamp,
        content = excluded.content, text = excluded.text"""

_SQLITE_SEARCH = """SELECT m.session_id, m.author, m.timestamp, m.content
    FROM eventide_memory_fts JOIN eventide_memory AS m ON m.id = eventide_memory_fts.rowid
    WHERE eventide_memory_fts MATCH :match AND m.app_name = :app_name AND m.user_id = :user_id
    ORDER BY bm25(eventide_memory_fts, 1.0, 0.0), m.timestamp DESC
    LIMIT :limit"""

# Every CTE is MATERIALIZED so that each runs once: inlined, the per-word counts would be
# re-evaluated for every candidate row. Candidates come from one GIN lookup of any query
# word; each word's document frequency is counted among those candidates. The document
# count N in the IDF is the table's row estimate from the planner's statistics (O(1)):
# counting the user's rows exactly cost more than the rest of the search together, and
# ranking only needs IDF to fall as a word gets more common.
_POSTGRES_SEARCH = """WITH useful AS MATERIALIZED (
        SELECT DISTINCT q FROM (
            SELECT plainto_tsquery('english', w) AS q
            FROM unnest(CAST(:words AS text[])) AS w
        ) AS terms
        WHERE numnode(q) > 0
    ), candidates AS MATERIALIZED (
        SELECT id, tsv FROM eventide_memory
        WHERE app_name = :app_name AND user_id = :user_id AND tsv @@ (
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
        LIMIT :limit
    )
    SELECT m.session_id, m.author, m.timestamp, m.content
    FROM scored AS s JOIN eventide_memory AS m ON m.id = s.id
    ORDER BY s.score DESC, m.timestamp DESC"""


class SqlMemoryService(BaseMemoryService):
    """Indexes sessions' events in SQLite (FTS5) or PostgreSQL (tsvector) and searches them.

    The table is created on first use. Safe for many processes sharing one database.

    Args:
        url: a SQLAlchemy async URL: ``sqlite+aiosqlite:///memory.db`` or
            ``postgresql+asyncpg://user@host:5432/db``.
        max_results: the most memories one search returns (best first).
        **engine_kwargs: passed to ``sqlalchemy.ext.asyncio.create_async_engine`` (pool
            sizes, ``connect_args``, ...).

    Raises:
        ConfigurationError: the URL names another database, or a SQLite path that is a
            folder.
    """

    def __init__(self, url: str, *, max_results: int = 50, **engine_kwargs: Any) -> None:
        parsed = make_url(normalize_database_url(url, setting="url"))
        backend = parsed.get_backend_name()
        if backend not in ("sqlite", "postgresql"):
            raise ConfigurationError(
                f"SqlMemoryService supports SQLite and PostgreSQL, not {backend!r} (URL "
                f"{parsed.render_as_string(hide_password=True)!r}). Use "
                "'sqlite+aiosqlite:///memory.db' or 'postgresql+asyncpg://user@host/db'."
            )
        if max_results < 1:
            raise ConfigurationError(f"max_results must be at least 1, got {max_results}.")
        self._sqlite = backend == "sqlite"
        self._where = parsed.render_as_string(hide_password=True)
        self.max_results = max_results
        database = parsed.database
        if self._sqlite:
            if database and database != ":memory:" and os.path.isdir(database):
                raise ConfigurationError(
                    f"The SQLite memory database path {database!r} is a folder. Give the path "
                    f"of a file, e.g. 'sqlite+aiosqlite:///{os.path.join(database, 'memory.db')}'."
                )
            if not database or database == ":memory:":
                # Each new connection to ':memory:' is an empty database: keep just one.
                engine_kwargs.setdefault("poolclass", StaticPool)
            elif parent := os.path.dirname(database):
                os.makedirs(parent, exist_ok=True)
        else:
            # A pooled connection may have died with a server restart or failover: check it
            # on checkout so the first call after the database comes back succeeds.
            engine_kwargs.setdefault("pool_pre_ping", True)
        self._engine: AsyncEngine = create_async_engine(parsed, **engine_kwargs)
        if self._sqlite:
            sa_event.listen(self._engine.sync_engine, "connect", _sqlite_pragmas)
            sa_event.listen(self._engine.sync_engine, "begin", _sqlite_begin_immediate)
        self._ready = False
        self._ready_lock = asyncio.Lock()

    # --- the contract ---
    async def add_session_to_memory(self, session: Session) -> None:
        """Index the session's events that have text (partial events excluded).

        Re-adding a session makes the index match it, in one transaction: events no longer
        in the session are forgotten, new ones are added. Committed events never change, so
        those already indexed are left as they are, and re-adding after every invocation
        costs the new events, not the whole history again.
        """
        scope = {
            "app_name": session.app_name,
            "user_id": session.user_id,
            "session_id": session.id,
        }
        events = {
            event.id: event
            for event in session.events
            if event.text and not event.partial and event.content is not None
        }
        async with self._transaction("index a session") as conn:
            result = await conn.execute(text(_SELECT_INDEXED), scope)
            indexed = set(result.scalars())
            stale = indexed - events.keys()
            if stale:
                await conn.execute(
                    text(_DELETE_EVENT), [{**scope, "event_id": event_id} for event_id in stale]
                )
            rows = [
                self._row(scope, event)
                for event_id, event in events.items()
                if event_id not in indexed
            ]
            if rows:
                insert = _SQLITE_INSERT if self._sqlite else _POSTGRES_INSERT
                await conn.execute(text(insert), rows)

    def _row(self, scope: dict[str, str], event: Event) -> dict[str, Any]:
        content = event.content
        row: dict[str, Any] = {
            **scope,
            "event_id": event.id,
            "author": event.author,
            "timestamp": event.timestamp,
            "content": content.model_dump_json(exclude_none=True) if content else "{}",
            "text": event.text,
        }
        if self._sqlite:
            row["scope"] = _scope_token(scope["app_name"], scope["user_id"])
        return row

    async def search_memory(
        self, *, app_name: str, user_id: str, query: str
    ) -> SearchMemoryResponse:
        """The user's memories in the app containing any word of ``query``, best first."""
        words = query_words(query)
        if not words:
            return SearchMemoryResponse()
        params: dict[str, Any] = {
            "app_name": app_name,
            "user_id": user_id,
            "limit": self.max_results,
        }
        if self._sqlite:
            statement = _SQLITE_SEARCH
            any_word = " OR ".join('"' + w.replace('"', '""') + '"' for w in words)
            scope = _scope_token(app_name, user_id)
            params["match"] = f'scope:"{scope}" AND text:({any_word})'
        else:
            statement = _POSTGRES_SEARCH
            params["words"] = words
        async with self._transaction("search memory") as conn:
            result = await conn.execute(text(statement), params)
            rows: Sequence[Any] = result.all()
        return SearchMemoryResponse(
            memories=[
                MemoryEntry(
                    content=types.Content.model_validate_json(row.content),
                    author=row.author,
                    timestamp=datetime.fromtimestamp(row.timestamp, UTC).isoformat(),
                    session_id=row.session_id,
                )
                for row in rows
            ]
        )

    async def delete_memories(
        self, *, app_name: str, user_id: str, session_id: str | None = None
    ) -> None:
        """Forget the user's memories in the app (of one session, when given)."""
        statement = "DELETE FROM eventide_memory WHERE app_name = :app_name AND user_id = :user_id"
        params = {"app_name": app_name, "user_id": user_id}
        if session_id is not None:
            statement += " AND session_id = :session_id"
            params["session_id"] = session_id
        async with self._transaction("delete memories") as conn:
            await conn.execute(text(statement), params)

    async def close(self) -> None:
        """Close the connection pool."""
        await self._engine.dispose()

    # --- plumbing ---
    @asynccontextmanager
    async def _transaction(self, doing: str) -> AsyncGenerator[AsyncConnection, None]:
        """A connection in a transaction; store failures surface as BackendError."""
        await self._ensure_schema()
        try:
            async with self._engine.begin() as conn:
                yield conn
        except (SQLAlchemyError, OSError) as exc:
            raise self._backend_error(doing, exc) from exc

    async def _ensure_schema(self) -> None:
        if self._ready:
            return
        async with self._ready_lock:
            if self._ready:
                return
            statements = _SQLITE_SCHEMA if self._sqlite else _POSTGRES_SCHEMA
            try:
                for attempt in range(_SCHEMA_ATTEMPTS):
                    try:
                        async with self._engine.begin() as conn:
                            for statement in statements:
                                await conn.execute(text(statement))
                        break
                    except OperationalError as exc:
                        # Several processes opening a new SQLite file at once: switching it
                        # to WAL can fail with "database is locked" without waiting for the
                        # busy timeout. The DDL is idempotent, so try again shortly.
                        locked = self._sqlite and "database is locked" in str(exc)
                        if not locked or attempt == _SCHEMA_ATTEMPTS - 1:
                            raise
                        await asyncio.sleep(0.05 * 2**attempt)
            except (SQLAlchemyError, OSError) as exc:
                if "fts5" in str(exc).lower():
                    raise ConfigurationError(
                        "This Python's SQLite was built without FTS5, which SqlMemoryService "
                        "needs. Use a Python whose sqlite3 has FTS5, or PostgreSQL."
                    ) from exc
                raise self._backend_error("create the memory tables", exc) from exc
            self._ready = True

    def _backend_error(self, doing: str, exc: BaseException) -> BackendError:
        return BackendError(
            f"Memory store {self._where!r} failed to {doing}: {exc}. Nothing was changed by "
            "this call; check that the database is reachable and writable, then retry."
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


# How often a new SQLite file's schema creation is tried while another process holds it.
_SCHEMA_ATTEMPTS = 6


def _scope_token(app_name: str, user_id: str) -> str:
    """One search token standing for (app, user): letters and digits only, so every FTS5
    tokenizer keeps it whole."""
    digest = hashlib.blake2b(f"{app_name}\x00{user_id}".encode(), digest_size=12).hexdigest()
    return "scope" + digest


def _sqlite_pragmas(dbapi_connection: Any, connection_record: Any) -> None:
    # Transactions are begun explicitly (see _sqlite_begin_immediate), not by the driver.
    dbapi_connection.isolation_level = None
    cursor = dbapi_connection.cursor()
    try:
        # The busy timeout first: switching to WAL itself may wait for another connection.
        cursor.execute("PRAGMA busy_timeout=10000")
        # WAL lets searches run while another process indexes; NORMAL is durable against
        # process crashes (an OS crash may lose the last commits, which is fine for an index).
        cursor.execute("PRAGMA journal_mode=WAL")
        cursor.execute("PRAGMA synchronous=NORMAL")
    finally:
        cursor.close()


def _sqlite_begin_immediate(conn: Any) -> None:
    # A deferred transaction that reads and then writes can fail at once with "database is
    # locked" when another writer got in between (SQLite refuses the lock upgrade instead of
    # waiting, to avoid a deadlock). Taking the write lock up front makes it wait instead.
    conn.exec_driver_sql("BEGIN IMMEDIATE")
