"""Database URLs as users write them: the one parser every SQL service uses.

Accepted forms (what google-adk and SQLAlchemy users write):

- SQLite: ``sqlite:///relative.db``, ``sqlite:////absolute.db``, the same with
  ``sqlite+aiosqlite://`` or ``sqlite+pysqlite://``, ``sqlite:///:memory:`` for a database
  that lives as long as the service, and a bare path ending in ``.db``/``.sqlite``/
  ``.sqlite3``. (``sqlite://`` alone is refused: it names no file.)
- PostgreSQL: ``postgresql://``, ``postgres://`` and ``postgresql+<driver>://`` for any of
  SQLAlchemy's drivers (``asyncpg``, ``psycopg2``, ``psycopg``, ``pg8000``). Whatever driver
  the URL names, Eventide talks to the server through asyncpg (see docs/architecture.md,
  "Storage"): the URL's server, database, user, password and options are what count, and a
  libpq-style ``sslmode=...`` becomes asyncpg's ``ssl=...`` so it still means the same.

Anything else is refused with a ConfigurationError that shows a URL that works.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Literal
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from eventide.errors import ConfigurationError

__all__ = ["MEMORY_PATH", "DatabaseUrl", "normalize_database_url", "parse_database_url"]

MEMORY_PATH = ":memory:"
"""``DatabaseUrl.sqlite_path`` of an in-memory SQLite database."""

_SQLITE_SCHEMES = ("sqlite", "sqlite+aiosqlite", "sqlite+pysqlite")
_POSTGRES_SCHEMES = (
    "postgresql",
    "postgres",
    "postgresql+asyncpg",
    "postgresql+psycopg2",
    "postgresql+psycopg",
    "postgresql+pg8000",
)
_SQLITE_SUFFIXES = (".db", ".sqlite", ".sqlite3")
# "sqlite:x.db" is a URL missing its slashes, not a file of that name.
_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.-]+:")


@dataclass(frozen=True, slots=True)
class DatabaseUrl:
    """A parsed database URL.

    Attributes:
        dialect: ``sqlite`` or ``postgresql``.
        sqlite_path: the SQLite file (as written, relative paths stay relative), or
            ``:memory:``; None for PostgreSQL.
        postgres_url: the PostgreSQL URL with the asyncpg driver
            (``postgresql+asyncpg://...``, password included); None for SQLite.
    """

    dialect: Literal["sqlite", "postgresql"]
    sqlite_path: str | None = None
    postgres_url: str | None = None

    @property
    def asyncpg_dsn(self) -> str:
        """The PostgreSQL URL as asyncpg's own ``connect``/``create_pool`` read it
        (``postgresql://...``, libpq's ``sslmode=`` for the SSL option)."""
        if self.postgres_url is None:
            raise ValueError("not a PostgreSQL URL")
        rest = self.postgres_url.partition("://")[2]
        location, _, query = rest.partition("?")
        options = [("sslmode" if k == "ssl" else k, v) for k, v in parse_qsl(query)]
        suffix = f"?{urlencode(options)}" if options else ""
        return f"postgresql://{location}{suffix}"

    @property
    def redacted(self) -> str:
        """The URL for messages and logs: the SQLite path, or the PostgreSQL URL without
        its password."""
        if self.postgres_url is None:
            return str(self.sqlite_path)
        parts = urlsplit(self.postgres_url)
        if parts.password is None:
            return self.postgres_url
        netloc = parts.netloc.rpartition("@")
        user = netloc[0].partition(":")[0]
        return urlunsplit(parts._replace(netloc=f"{user}:***@{netloc[2]}"))

    @property
    def sqlalchemy_url(self) -> str:
        """The SQLAlchemy async URL (``sqlite+aiosqlite:///...`` or
        ``postgresql+asyncpg://...``)."""
        if self.postgres_url is not None:
            return self.postgres_url
        return f"sqlite+aiosqlite:///{self.sqlite_path}"


def parse_database_url(url: str, *, setting: str = "url") -> DatabaseUrl:
    """Parse a user-given database URL (see the module docstring for the forms).

    Args:
        url: the URL or bare SQLite path.
        setting: the name the user gave it (``session_db``, ``db_url``), for error messages.

    Raises:
        ConfigurationError: not a SQLite or PostgreSQL URL, or one that names no database.
    """
    text = url.strip()
    scheme, sep, rest = text.partition("://")
    if not sep:
        if text.endswith(_SQLITE_SUFFIXES) and not _SCHEME.match(text):
            return DatabaseUrl("sqlite", sqlite_path=str(Path(text).expanduser().resolve()))
        raise ConfigurationError(
            f"{setting}={url!r} is not a database URL. Use sqlite:///path/to/file.db, "
            "postgresql://user@host:5432/db, or 'memory:' for in-memory storage."
        )
    scheme = scheme.lower()
    if scheme in _SQLITE_SCHEMES:
        path, _, query = rest.partition("?")
        if query:
            raise ConfigurationError(
                f"{setting}={url!r} has options ({query!r}) that Eventide does not read; "
                "write the SQLite URL without them (sqlite:///path/to/file.db)."
            )
        if not path.startswith("/") or path == "/":
            raise ConfigurationError(
                f"{setting}={url!r} names no SQLite file; write sqlite:///relative.db or "
                "sqlite:////absolute/path.db (three or four slashes)."
            )
        return DatabaseUrl("sqlite", sqlite_path=path[1:])
    if scheme in _POSTGRES_SCHEMES:
        location, _, query = rest.partition("?")
        if not location or location.startswith("/"):
            raise ConfigurationError(
                f"{setting}={url!r} names no PostgreSQL host; write "
                "postgresql://user@host:5432/database."
            )
        options = [("ssl" if k == "sslmode" else k, v) for k, v in parse_qsl(query)]
        suffix = f"?{urlencode(options)}" if options else ""
        return DatabaseUrl("postgresql", postgres_url=f"postgresql+asyncpg://{location}{suffix}")
    raise ConfigurationError(
        f"{setting}={url!r} uses the unsupported scheme {scheme!r}. Eventide stores data in "
        "SQLite (sqlite:///file.db) or PostgreSQL (postgresql://user@host/db), "
        "or in memory ('memory:')."
    )


def normalize_database_url(url: str, *, setting: str = "session_db") -> str:
    """The SQLAlchemy async URL for a user-given database URL (see
    :func:`parse_database_url`).

    Raises:
        ConfigurationError: not a SQLite or PostgreSQL URL.
    """
    return parse_database_url(url, setting=setting).sqlalchemy_url
