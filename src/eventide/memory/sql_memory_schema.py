"""The memory service's tables and their forward migrations (component ``memory``).

Run by the shared runner (:mod:`eventide._sql_migrations`), like the session tables: the
version is the ``memory`` row of ``eventide_schema_versions``, migrations run under a lock at
start-up, a newer version is refused.

Version 1 is the DDL the service ran before its schema was versioned, kept with its
``IF NOT EXISTS``: on a database made by that release it changes nothing and only records
version 1, so those databases are adopted with every row in place.

Shape (version 1)::

    eventide_memory      one row per remembered event: app_name, user_id, session_id,
                         event_id (UNIQUE together), author, timestamp, content (JSON),
                         text; SQLite: scope (the token naming app and user);
                         PostgreSQL: tsv (a stored tsvector of text, GIN-indexed)
    eventide_memory_fts  SQLite only: the FTS5 index over text and scope, kept in step
                         with eventide_memory by three triggers

Version 2 adds ``eventide_memory.custom_metadata`` (JSON text, NULL for none: what
``add_memory`` and ``add_events_to_memory`` were given) and ``eventide_memory_forgotten``
(app_name, user_id, event_id): the memories ``delete_memory`` forgot one by one, so adding
their session again does not bring them back.
"""

from __future__ import annotations

from eventide._sql_migrations import Migration

__all__ = ["COMPONENT", "MIGRATIONS", "SCHEMA_VERSION"]

COMPONENT = "memory"

_SQLITE_V1 = [
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
]

_POSTGRES_V1 = [
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
]


def _version_1(dialect: str) -> list[str]:
    return list(_SQLITE_V1 if dialect == "sqlite" else _POSTGRES_V1)


def _version_2(dialect: str) -> list[str]:
    del dialect  # the same SQL in both
    return [
        "ALTER TABLE eventide_memory ADD COLUMN custom_metadata TEXT",
        """CREATE TABLE eventide_memory_forgotten (
            app_name TEXT NOT NULL,
            user_id TEXT NOT NULL,
            event_id TEXT NOT NULL,
            PRIMARY KEY (app_name, user_id, event_id))""",
    ]


MIGRATIONS: tuple[Migration, ...] = (
    Migration(
        version=1,
        description="eventide_memory and its full-text index (SQLite FTS5, PostgreSQL GIN)",
        statements=_version_1,
    ),
    Migration(
        version=2,
        description="memories' custom_metadata, and the memories deleted one by one",
        statements=_version_2,
    ),
)

SCHEMA_VERSION = MIGRATIONS[-1].version
