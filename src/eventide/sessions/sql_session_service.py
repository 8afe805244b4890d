"""``SqlSessionService``: durable sessions in SQLite (the embedded default) or PostgreSQL.

``SqlSessionService("sqlite:///path/sessions.db")`` keeps sessions in a file (WAL journal);
``SqlSessionService("postgresql://user@host/db")`` in PostgreSQL, where any number of
processes may serve the same sessions. It is :class:`SessionService` (every rule of the
contract, see :mod:`eventide.sessions.session_service`) over the SQLite or the PostgreSQL
store. The schema is versioned and migrated forward on start-up (see
:mod:`eventide.sessions.sql_schema`); a database written by a newer Eventide is refused with
:class:`~eventide.errors.SchemaVersionError`.

- **Durability.** SQLite defaults to ``synchronous="NORMAL"`` under WAL: a commit survives
  any process crash (SIGKILL included), but an OS crash or power loss may drop the last
  commits; ``synchronous="FULL"`` fsyncs every commit. PostgreSQL follows the server's
  settings. A SQLite file that was deleted, moved or replaced under a running service is
  noticed before any commit is acknowledged (see :mod:`eventide.sessions.sqlite_session_store`).
- **Event loops.** SQLite work runs inline or on the store's own thread, neither tied to a
  loop; PostgreSQL connections belong to the loop that opened them (used from another loop,
  the service opens new ones and terminates the previous loop's).
- **Performance.** An append is one transaction in one step: on SQLite, an uncontended
  ``NORMAL`` commit runs inline (tens of microseconds: less than a thread hop), and goes to
  the store's thread only to wait for another process's lock or for an fsync (``FULL``);
  on PostgreSQL it is one statement, one round trip. State deltas merge in SQL
  (``json_set`` / ``jsonb ||``), nothing is re-read after a write, and reads fetch only the
  requested events, newest first through the primary key.

``DatabaseSessionService`` and ``SqliteSessionService`` are google-adk's names for it.
"""

from __future__ import annotations

import os
from typing import Any

from eventide._database_urls import MEMORY_PATH, parse_database_url
from eventide.errors import ConfigurationError, UsageError
from eventide.sessions.session_service import DEFAULT_MAX_EVENT_BYTES, SessionService
from eventide.sessions.session_store import SessionStore

__all__ = ["DatabaseSessionService", "SqlSessionService", "SqliteSessionService"]


class SqlSessionService(SessionService):
    """Sessions in SQLite or PostgreSQL, safe for many processes. See the module docstring.

    Args:
        url: ``sqlite:///relative/path.db``, ``sqlite:////absolute/path.db``,
            ``sqlite:///:memory:`` (a database that lives as long as the service) or a
            PostgreSQL URL (``postgresql://user@host:5432/db``); any driver suffix
            SQLAlchemy knows is accepted. SQLite is served by the standard library's
            sqlite3, PostgreSQL by asyncpg, whatever driver the URL names.
        synchronous: SQLite only: ``"NORMAL"`` (default) or ``"FULL"``.
        busy_timeout: SQLite only: seconds to wait for another process's write lock.
        compare_and_set: refuse (``StaleSessionError``) an append whose session copy is
            behind the stored log, instead of folding the newer events in.
        max_event_bytes: the largest event (as JSON) the store accepts.
        max_connections: PostgreSQL only: the most connections open at once (per event
            loop); operations beyond wait for one.
        engine_kwargs: PostgreSQL only, for code written against SQLAlchemy's engine
            (google-adk's ``DatabaseSessionService`` passes such arguments on):
            ``pool_size`` plus ``max_overflow`` set ``max_connections``, and
            ``connect_args`` go to ``asyncpg.connect``. Eventide's PostgreSQL store uses no
            SQLAlchemy engine; other keys are refused.

    Raises:
        ConfigurationError: an unsupported URL, an ``engine_kwargs`` key other than those
            above, or the ``sql`` extra is missing.
    """

    def __init__(
        self,
        url: str,
        *,
        synchronous: str = "NORMAL",
        busy_timeout: float = 5.0,
        compare_and_set: bool = False,
        max_event_bytes: int = DEFAULT_MAX_EVENT_BYTES,
        max_connections: int | None = None,
        engine_kwargs: dict[str, Any] | None = None,
    ) -> None:
        if synchronous.upper() not in ("NORMAL", "FULL"):
            raise UsageError(f"synchronous must be 'NORMAL' or 'FULL', got {synchronous!r}.")
        store = _open_store(
            url,
            synchronous=synchronous.upper(),
            busy_timeout=busy_timeout,
            max_connections=max_connections,
            engine_kwargs=engine_kwargs,
        )
        super().__init__(store, compare_and_set=compare_and_set, max_event_bytes=max_event_bytes)


# PostgreSQL connections per event loop when neither max_connections nor engine_kwargs say.
# A server running 100 turns at once per process gained nothing from more on a small
# machine: each one is a PostgreSQL backend process.
DEFAULT_MAX_CONNECTIONS = 20

# The engine_kwargs keys that mean something without SQLAlchemy (see SqlSessionService).
_ENGINE_KWARGS = ("pool_size", "max_overflow", "connect_args")


def _open_store(
    url: str,
    *,
    synchronous: str,
    busy_timeout: float,
    max_connections: int | None,
    engine_kwargs: dict[str, Any] | None,
) -> SessionStore:
    parsed = parse_database_url(url, setting="url")
    try:
        if parsed.sqlite_path is not None:
            from eventide.sessions.sqlite_session_store import SqliteSessionStore

            return SqliteSessionStore(
                parsed.sqlite_path, synchronous=synchronous, busy_timeout=busy_timeout
            )
        from eventide.sessions.postgres_session_store import PostgresSessionStore

        limit, connect_kwargs = _postgres_settings(max_connections, engine_kwargs or {})
        return PostgresSessionStore(parsed, max_connections=limit, connect_kwargs=connect_kwargs)
    except ImportError as exc:  # pragma: no cover - depends on the installed extras
        raise ConfigurationError(
            f"SqlSessionService needs the sql extra for {parsed.dialect}: "
            "pip install 'eventide[sql]'."
        ) from exc


def _postgres_settings(
    max_connections: int | None, engine_kwargs: dict[str, Any]
) -> tuple[int, dict[str, Any]]:
    """The connection limit and ``asyncpg.connect`` arguments from the service's settings."""
    unknown = sorted(set(engine_kwargs) - set(_ENGINE_KWARGS))
    if unknown:
        raise ConfigurationError(
            f"engine_kwargs {unknown} mean nothing to Eventide's PostgreSQL store, which "
            f"uses asyncpg without a SQLAlchemy engine: pass only {', '.join(_ENGINE_KWARGS)} "
            "(or max_connections=...)."
        )
    limit = max_connections
    if limit is None:
        if "pool_size" in engine_kwargs or "max_overflow" in engine_kwargs:
            limit = int(engine_kwargs.get("pool_size", 5)) + int(
                engine_kwargs.get("max_overflow", 10)
            )
        else:
            limit = DEFAULT_MAX_CONNECTIONS
    if limit < 1:
        raise ConfigurationError(f"max_connections must be at least 1, got {limit}.")
    return limit, dict(engine_kwargs.get("connect_args") or {})


class DatabaseSessionService(SqlSessionService):
    """google-adk's name for :class:`SqlSessionService`: ``DatabaseSessionService(db_url=...)``.

    Every URL form google-adk users write works (``sqlite:///x.db``,
    ``sqlite+aiosqlite:///:memory:``, ``postgresql+psycopg2://...``, ...); see
    :mod:`eventide._database_urls` for what each means. Keyword arguments are
    :class:`SqlSessionService`'s.
    """

    def __init__(self, db_url: str, **kwargs: Any) -> None:
        super().__init__(db_url, **kwargs)


class SqliteSessionService(SqlSessionService):
    """google-adk's ``SqliteSessionService(db_path)``: sessions in one SQLite file.

    Args:
        db_path: a file path (any name; created if missing), ``:memory:``, or a
            ``sqlite:///`` URL.
        **kwargs: :class:`SqlSessionService`'s keyword arguments.

    Raises:
        ConfigurationError: ``db_path`` is a URL of another database.
    """

    def __init__(self, db_path: str, **kwargs: Any) -> None:
        text = str(db_path).strip()
        if "://" in text:
            if parse_database_url(text, setting="db_path").dialect != "sqlite":
                raise ConfigurationError(
                    f"SqliteSessionService(db_path={db_path!r}) needs a SQLite file; use "
                    "DatabaseSessionService(db_url=...) for other databases."
                )
            url = text
        elif text == MEMORY_PATH:
            url = f"sqlite:///{MEMORY_PATH}"
        elif not text:
            raise ConfigurationError(
                "SqliteSessionService(db_path='') names no file; give a path like 'sessions.db'."
            )
        else:
            url = f"sqlite:///{os.path.abspath(os.path.expanduser(text))}"
        super().__init__(url, **kwargs)
