"""Database URLs as users write them, turned into SQLAlchemy async URLs."""

from __future__ import annotations

from pathlib import Path

from eventide.errors import ConfigurationError

__all__ = ["normalize_database_url"]


def normalize_database_url(url: str, *, setting: str = "session_db") -> str:
    """The SQLAlchemy async URL for a user-given database URL.

    ``postgresql://`` and ``postgres://`` become ``postgresql+asyncpg://``; ``sqlite:///``
    becomes ``sqlite+aiosqlite:///``; a bare path ending in ``.db``/``.sqlite``/``.sqlite3``
    is a SQLite file.

    Raises:
        ConfigurationError: not a SQLite or PostgreSQL URL.
    """
    text = url.strip()
    scheme, sep, rest = text.partition("://")
    if not sep:
        if text.endswith((".db", ".sqlite", ".sqlite3")):
            return f"sqlite+aiosqlite:///{Path(text).expanduser().resolve()}"
        raise ConfigurationError(
            f"{setting}={url!r} is not a database URL. Use sqlite+aiosqlite:///path/to/file.db, "
            "postgresql+asyncpg://user@host:5432/db, or 'memory:' for in-memory storage."
        )
    scheme = scheme.lower()
    if scheme in ("postgresql", "postgres", "postgresql+asyncpg"):
        if not rest or rest.startswith("/"):
            raise ConfigurationError(
                f"{setting}={url!r} names no PostgreSQL host; write "
                "postgresql+asyncpg://user@host:5432/database."
            )
        return f"postgresql+asyncpg://{rest}"
    if scheme in ("sqlite", "sqlite+aiosqlite"):
        if not rest.startswith("/") or rest == "/":
            raise ConfigurationError(
                f"{setting}={url!r} names no SQLite file; write sqlite+aiosqlite:///relative.db "
                "or sqlite+aiosqlite:////absolute/path.db (three or four slashes)."
            )
        return f"sqlite+aiosqlite://{rest}"
    raise ConfigurationError(
        f"{setting}={url!r} uses the unsupported scheme {scheme!r}. Eventide stores data in "
        "SQLite (sqlite+aiosqlite:///file.db) or PostgreSQL (postgresql+asyncpg://...), "
        "or in memory ('memory:')."
    )
