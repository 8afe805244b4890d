"""The artifact service contract: versioned binary files attached to sessions or users."""

from __future__ import annotations

from abc import ABC, abstractmethod

from eventide import types
from eventide.errors import InvalidArtifactNameError

__all__ = [
    "TOMBSTONE_MIME_TYPE",
    "BaseArtifactService",
    "is_tombstone",
    "is_user_scoped",
    "tombstone",
    "validate_artifact_name",
]

TOMBSTONE_MIME_TYPE = "application/vnd.eventide.absent"
"""The MIME type of a tombstone version (see :func:`tombstone`); reserved for it."""


class BaseArtifactService(ABC):
    """Stores artifacts: each save of a file name creates version 0, 1, 2, ...

    A file name starting with ``user:`` belongs to the user and is shared across all of that
    user's sessions of the app; any other name belongs to one session.

    A version holding a :func:`tombstone` marks the file absent from then on: loading that
    version, or the latest when it is the newest, returns None, and ``list_artifact_keys``
    leaves the file out. ``list_versions`` still lists every version (the history is kept),
    and a later save makes the file present again. A rewind saves one for a file that did
    not exist before the rewound invocation (versions are never deleted by a rewind).
    """

    @abstractmethod
    async def save_artifact(
        self,
        *,
        app_name: str,
        user_id: str,
        session_id: str | None,
        filename: str,
        artifact: types.Part,
    ) -> int:
        """Store a new version of ``filename`` and return its number (0 for the first)."""

    @abstractmethod
    async def load_artifact(
        self,
        *,
        app_name: str,
        user_id: str,
        session_id: str | None,
        filename: str,
        version: int | None = None,
    ) -> types.Part | None:
        """The given version (the latest when None) of ``filename``, or None when absent."""

    @abstractmethod
    async def list_artifact_keys(
        self, *, app_name: str, user_id: str, session_id: str | None
    ) -> list[str]:
        """The sorted file names visible to the session: its own and the user's."""

    @abstractmethod
    async def delete_artifact(
        self, *, app_name: str, user_id: str, session_id: str | None, filename: str
    ) -> None:
        """Delete every version of ``filename``. Deleting a missing file is not an error."""

    @abstractmethod
    async def list_versions(
        self, *, app_name: str, user_id: str, session_id: str | None, filename: str
    ) -> list[int]:
        """The versions of ``filename`` in ascending order (empty when absent)."""

    async def close(self) -> None:  # noqa: B027 - optional hook
        """Release resources."""


def tombstone() -> types.Part:
    """A new tombstone part: saved as a version, it makes the file absent (see the class)."""
    return types.Part(inline_data=types.Blob(mime_type=TOMBSTONE_MIME_TYPE, data=b""))


def is_tombstone(part: types.Part) -> bool:
    """True when ``part`` is a :func:`tombstone` (its reserved MIME type and no data)."""
    blob = part.inline_data
    return blob is not None and blob.mime_type == TOMBSTONE_MIME_TYPE and not blob.data


def is_user_scoped(filename: str) -> bool:
    """True when the file name is shared across the user's sessions (``user:`` prefix)."""
    return filename.startswith("user:")


def validate_artifact_name(filename: str) -> None:
    """Reject names that are empty, absolute, or could escape the artifact's folder."""
    name = filename[5:] if is_user_scoped(filename) else filename
    if not name or not name.strip():
        raise InvalidArtifactNameError(filename, "it is empty")
    if name.startswith(("/", "\\")) or (len(name) > 1 and name[1] == ":"):
        raise InvalidArtifactNameError(filename, "absolute paths are not allowed")
    if "\x00" in name:
        raise InvalidArtifactNameError(filename, "it contains a NUL byte")
    parts = name.replace("\\", "/").split("/")
    if any(p in ("", ".", "..") for p in parts):
        raise InvalidArtifactNameError(
            filename, "path segments may not be empty, '.' or '..' (no path traversal)"
        )
