"""The one migration runner of every Eventide SQL schema (sessions, memory).

Each component's schema is a tuple of forward :class:`Migration` steps. The version a
database has reached is one row per component in ``eventide_schema_versions``; a database
without the row (version 0) gets every step. Steps run inside the caller's transaction, under
a lock that serializes processes starting at once: SQLite's write lock (the caller began the
transaction with ``BEGIN IMMEDIATE``), a PostgreSQL transaction-scoped advisory lock. A
database whose version is newer than the code knows is refused, never "upgraded" silently.

Version 1 of a component is the DDL its first unversioned release ran, written with
``IF NOT EXISTS`` where such a database may exist: running it on one adopts the tables as
they are, rows included, and records version 1.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from eventide.errors import SchemaVersionError

__all__ = [
    "MIGRATION_LOCK",
    "VERSION_TABLE_DDL",
    "Migration",
    "migrate_postgres",
    "migrate_sqlite",
    "pending",
    "sqlite_version",
]

VERSION_TABLE_DDL = (
    "CREATE TABLE IF NOT EXISTS eventide_schema_versions ("
    "component VARCHAR(64) PRIMARY KEY, version INTEGER NOT NULL)"
)

# The PostgreSQL advisory lock serializing every component's migrations across processes. The
# value is the one the session store always took ("EVNTSESS"), so an older Eventide starting
# its session migrations at the same moment still waits for this one.
MIGRATION_LOCK = 0x45564E54_53455353

_SELECT_SQLITE = "SELECT version FROM eventide_schema_versions WHERE component = ?"
_RECORD_SQLITE = (
    "INSERT INTO eventide_schema_versions (component, version) VALUES (?, ?) "
    "ON CONFLICT (component) DO UPDATE SET version = excluded.version"
)
_SELECT_POSTGRES = "SELECT version FROM eventide_schema_versions WHERE component = $1"
_RECORD_POSTGRES = (
    "INSERT INTO eventide_schema_versions (component, version) VALUES ($1, $2) "
    "ON CONFLICT (component) DO UPDATE SET version = excluded.version"
)


@dataclass(frozen=True, slots=True, kw_only=True)
class Migration:
    """One forward step of a schema.

    Attributes:
        version: the schema version after this step.
        description: what the step changes, for logs and errors.
        statements: the step's SQL for a dialect name (``sqlite`` or ``postgresql``).
    """

    version: int
    description: str
    statements: Callable[[str], list[str]]


def pending(
    component: str, migrations: Sequence[Migration], found: int, *, database: str
) -> list[Migration]:
    """The steps a database at version ``found`` still needs.

    Raises:
        SchemaVersionError: ``found`` is newer than the last step.
    """
    supported = migrations[-1].version
    if found > supported:
        raise SchemaVersionError(
            database=database, found=found, supported=supported, component=component
        )
    return [m for m in migrations if m.version > found]


def sqlite_version(conn: sqlite3.Connection | sqlite3.Cursor, component: str) -> int:
    """The component's recorded version (0 when never migrated), without writing."""
    try:
        row = conn.execute(_SELECT_SQLITE, (component,)).fetchone()
    except sqlite3.OperationalError as exc:
        if "no such table" not in str(exc):
            raise
        return 0
    return int(row[0]) if row else 0


def migrate_sqlite(
    conn: sqlite3.Connection | sqlite3.Cursor,
    component: str,
    migrations: Sequence[Migration],
    *,
    database: str,
) -> int:
    """Bring the component up to date inside the caller's ``BEGIN IMMEDIATE`` transaction;
    returns the version found."""
    conn.execute(VERSION_TABLE_DDL)
    found = sqlite_version(conn, component)
    steps = pending(component, migrations, found, database=database)
    for migration in steps:
        for statement in migration.statements("sqlite"):
            conn.execute(statement)
    if steps:
        conn.execute(_RECORD_SQLITE, (component, steps[-1].version))
    return found


async def migrate_postgres(
    conn: Any, component: str, migrations: Sequence[Migration], *, database: str
) -> int:
    """Bring the component up to date on an asyncpg connection, inside the caller's
    transaction (the advisory lock is released when it ends); returns the version found."""
    await conn.execute("SELECT pg_advisory_xact_lock($1)", MIGRATION_LOCK)
    await conn.execute(VERSION_TABLE_DDL)
    found = int(await conn.fetchval(_SELECT_POSTGRES, component) or 0)
    steps = pending(component, migrations, found, database=database)
    for migration in steps:
        for statement in migration.statements("postgresql"):
            await conn.execute(statement)
    if steps:
        await conn.execute(_RECORD_POSTGRES, component, steps[-1].version)
    return found
