"""Building the session, artifact and memory services an app runs with, from settings.

The CLI and the HTTP server take storage settings as strings (command-line options,
environment variables); :func:`build_services` turns them into service objects:

=================================  =================================================
setting                            service
=================================  =================================================
``session_db=None``                SQLite file ``<base_dir>/.eventide/sessions.db``
``"sqlite+aiosqlite:///path.db"``  SQLite (``sqlite:///`` is accepted too)
``"postgresql+asyncpg://..."``     PostgreSQL (``postgresql://`` / ``postgres://`` too)
``"memory:"``                      in process memory, lost at exit
``artifact_root=None``             files under ``<base_dir>/.eventide/artifacts``
``artifact_root="path"``           files under ``path``; ``"memory:"`` in memory
``artifact_root="s3://bucket/x"``  an object store through fsspec (s3, gs, az, file, memory)
``memory_db=None``                 in process memory; a database URL as for sessions
=================================  =================================================

SQL and file backends are imported only when chosen, so ``memory:`` needs no extra.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from eventide._database_urls import normalize_database_url
from eventide.artifacts.base_artifact_service import BaseArtifactService
from eventide.artifacts.in_memory_artifact_service import InMemoryArtifactService
from eventide.errors import ConfigurationError
from eventide.memory.base_memory_service import BaseMemoryService
from eventide.memory.in_memory_memory_service import InMemoryMemoryService
from eventide.sessions.base_session_service import BaseSessionService
from eventide.sessions.in_memory_session_service import InMemorySessionService

__all__ = ["MEMORY", "Services", "build_services", "normalize_database_url"]

MEMORY = "memory:"
"""The setting that selects an in-memory service."""

_STATE_DIR = ".eventide"
_SQL_SESSIONS = "eventide.sessions.sql_session_service:SqlSessionService"
_FILE_ARTIFACTS = "eventide.artifacts.file_artifact_service:FileArtifactService"
_FSSPEC_ARTIFACTS = "eventide.artifacts.fsspec_artifact_service:FsspecArtifactService"
_SQL_MEMORY = "eventide.memory.sql_memory_service:SqlMemoryService"


@dataclass(slots=True, kw_only=True)
class Services:
    """The services a Runner needs, built together from one set of settings."""

    session_service: BaseSessionService
    artifact_service: BaseArtifactService
    memory_service: BaseMemoryService

    async def close(self) -> None:
        """Close the services that hold connections (database engines, clients)."""
        for service in (self.session_service, self.artifact_service, self.memory_service):
            closer = getattr(service, "close", None)
            if closer is not None:
                result = closer()
                if hasattr(result, "__await__"):
                    await result


def build_services(
    *,
    session_db: str | None,
    artifact_root: str | Path | None,
    memory_db: str | None = None,
    base_dir: str | Path = ".",
) -> Services:
    """Build the services from settings (see the module docstring for the table).

    Args:
        session_db: where sessions live: None (SQLite under ``base_dir``), a database URL,
            or ``"memory:"``.
        artifact_root: where artifacts live: None (files under ``base_dir``), a folder, or
            ``"memory:"``.
        memory_db: where long-term memory lives: None or ``"memory:"`` (in memory), or a
            database URL.
        base_dir: the folder whose ``.eventide/`` holds the default files (created on demand).

    Raises:
        ConfigurationError: a URL of an unsupported kind, or a backend whose extra is not
            installed.
    """
    state_dir = Path(base_dir).expanduser() / _STATE_DIR

    session_service: BaseSessionService
    if session_db == MEMORY:
        session_service = InMemorySessionService()
    else:
        if session_db is None:
            state_dir.mkdir(parents=True, exist_ok=True)
            url = f"sqlite+aiosqlite:///{(state_dir / 'sessions.db').resolve()}"
        else:
            url = normalize_database_url(session_db, setting="session_db")
        session_service = _construct(_SQL_SESSIONS, url, setting="session_db", extra="sql")

    artifact_service: BaseArtifactService
    if artifact_root is not None and str(artifact_root) == MEMORY:
        artifact_service = InMemoryArtifactService()
    elif artifact_root is not None and "://" in str(artifact_root):
        # An object-store URL (s3://, gs://, az://, file://, memory://) goes through fsspec.
        artifact_service = _construct(
            _FSSPEC_ARTIFACTS, str(artifact_root), setting="artifact_root", extra="files"
        )
    else:
        root = Path(artifact_root).expanduser() if artifact_root is not None else None
        if root is None:
            root = state_dir / "artifacts"
        artifact_service = _construct(
            _FILE_ARTIFACTS, str(root.resolve()), setting="artifact_root", extra="files"
        )

    memory_service: BaseMemoryService
    if memory_db is None or memory_db == MEMORY:
        memory_service = InMemoryMemoryService()
    else:
        url = normalize_database_url(memory_db, setting="memory_db")
        memory_service = _construct(_SQL_MEMORY, url, setting="memory_db", extra="sql")
    return Services(
        session_service=session_service,
        artifact_service=artifact_service,
        memory_service=memory_service,
    )


def _construct(target: str, argument: str, *, setting: str, extra: str) -> Any:
    module_name, _, class_name = target.partition(":")
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        missing = exc.name or module_name
        if missing == module_name:
            raise ConfigurationError(
                f"{setting}: the backend {module_name} is not available in this Eventide "
                f"build. Use {setting}='memory:' for now."
            ) from exc
        raise ConfigurationError(
            f"{setting}: the backend needs {missing!r}, which is not installed. Install it "
            f"with `pip install 'eventide[{extra}]'`."
        ) from exc
    return getattr(module, class_name)(argument)
