"""The DBOS system database: its URL for the synchronous driver, and the error when it is
not reachable."""

from __future__ import annotations

from eventide._database_urls import normalize_database_url
from eventide.errors import BackendError, UsageError

__all__ = ["sync_url", "unreachable"]


def sync_url(url: str) -> str:
    """A PostgreSQL URL for DBOS's synchronous driver (psycopg)."""
    normalized = normalize_database_url(url)
    if not normalized.startswith("postgresql"):
        raise UsageError(f"DBOS needs a PostgreSQL URL (postgresql://...), got {url!r}.")
    return "postgresql://" + normalized.split("://", 1)[1]


def unreachable(url: str, error: BaseException) -> BackendError:
    """The error of a system database that could not be reached."""
    return BackendError(
        f"The DBOS system database at {url!r} is not reachable ({type(error).__name__}: "
        f"{error}). Check that PostgreSQL runs there and the database exists; nothing was "
        "enqueued or lost."
    )
