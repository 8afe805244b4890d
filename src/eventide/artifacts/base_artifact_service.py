"""The artifact service contract: versioned binary files attached to sessions or users."""

from __future__ import annotations

import time
from abc import ABC, abstractmethod
from typing import Any
from urllib.parse import quote

from pydantic import BaseModel, Field

from eventide import types
from eventide._model import snake_case_keys
from eventide.errors import InputValidationError, InvalidArtifactNameError, UsageError

__all__ = [
    "TOMBSTONE_MIME_TYPE",
    "ArtifactVersion",
    "BaseArtifactService",
    "ensure_part",
    "is_tombstone",
    "is_user_scoped",
    "tombstone",
    "validate_artifact_name",
    "validate_storage_id",
    "validate_storage_scope",
]

TOMBSTONE_MIME_TYPE = "application/vnd.eventide.absent"
"""The MIME type of a tombstone version (see :func:`tombstone`); reserved for it."""


class ArtifactVersion(BaseModel):
    """What is known of one stored version, as google-adk describes it (the HTTP API sends
    it camelCase: ``version``, ``canonicalUri``, ``customMetadata``, ``createTime``,
    ``mimeType``)."""

    version: int
    canonical_uri: str
    """Where the version lives: a ``file://`` path, the object store's URL, or a
    ``memory://`` name for versions kept in process memory."""
    custom_metadata: dict[str, Any] = Field(default_factory=dict)
    """What the saver attached to the version (``save_artifact(custom_metadata=...)``)."""
    create_time: float | None = None
    """When the version was saved (seconds since the epoch); None when the store did not
    record it."""
    mime_type: str | None = None
    """The bytes' MIME type; None for a text artifact."""


def new_version_record(custom_metadata: dict[str, Any] | None) -> dict[str, Any]:
    """The metadata a store keeps beside a new version: custom metadata and save time."""
    return {"custom_metadata": dict(custom_metadata or {}), "create_time": time.time()}


def memory_uri(
    app_name: str, user_id: str, session_id: str | None, filename: str, version: int
) -> str:
    """The ``memory://`` canonical URI of a version kept in process memory."""
    scope = "" if is_user_scoped(filename) else f"/sessions/{quote(session_id or '')}"
    where = f"apps/{quote(app_name)}/users/{quote(user_id)}{scope}"
    return f"memory://{where}/artifacts/{quote(filename)}/versions/{version}"


def mime_type_of(part: types.Part) -> str | None:
    """The MIME type of the part's bytes (None for text)."""
    return part.inline_data.mime_type if part.inline_data is not None else None


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
        custom_metadata: dict[str, Any] | None = None,
    ) -> int:
        """Store a new version of ``filename`` and return its number (0 for the first).

        ``custom_metadata`` (JSON values) is kept with the version and returned by
        :meth:`get_artifact_version`."""

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

    async def get_artifact_version(
        self,
        *,
        app_name: str,
        user_id: str,
        session_id: str | None,
        filename: str,
        version: int | None = None,
    ) -> ArtifactVersion | None:
        """What is known of the given version (the latest when None); None when absent.

        This default knows only what the stored part tells (its MIME type) and names the
        version with a ``memory://`` URI; the stores shipped with Eventide override it with
        what they keep (custom metadata, save time, where the bytes are)."""
        versions = await self.list_versions(
            app_name=app_name, user_id=user_id, session_id=session_id, filename=filename
        )
        number = versions[-1] if version is None and versions else version
        if number is None or number not in versions:
            return None
        part = await self.load_artifact(
            app_name=app_name,
            user_id=user_id,
            session_id=session_id,
            filename=filename,
            version=number,
        )
        if part is None:
            return None
        return ArtifactVersion(
            version=number,
            canonical_uri=memory_uri(app_name, user_id, session_id, filename, number),
            mime_type=mime_type_of(part),
        )

    async def list_artifact_versions(
        self, *, app_name: str, user_id: str, session_id: str | None, filename: str
    ) -> list[ArtifactVersion]:
        """:meth:`get_artifact_version` of every version present, oldest first (tombstones
        left out)."""
        found: list[ArtifactVersion] = []
        for number in await self.list_versions(
            app_name=app_name, user_id=user_id, session_id=session_id, filename=filename
        ):
            described = await self.get_artifact_version(
                app_name=app_name,
                user_id=user_id,
                session_id=session_id,
                filename=filename,
                version=number,
            )
            if described is not None:
                found.append(described)
        return found

    async def close(self) -> None:  # noqa: B027 - optional hook
        """Release resources."""


def ensure_part(artifact: types.Part | BaseModel | dict[str, Any]) -> types.Part:
    """``artifact`` as a ``Part``: a ``Part`` as it is (google-genai's too), a dict (JSON
    of a part, in camelCase or snake_case, as front ends send artifacts) validated into an
    Eventide ``Part``.

    Raises:
        UsageError: the dict holds no part field (nothing would be saved).
    """
    if isinstance(artifact, types.Part):
        return artifact
    if isinstance(artifact, BaseModel):
        kind = type(artifact)
        if kind.__name__ == "Part" and kind.__module__.startswith("google.genai"):
            return artifact  # type: ignore[return-value]  # accepted wherever a Part is
        artifact = artifact.model_dump(exclude_none=True)
    part = types.Part.model_validate(snake_case_keys(artifact))
    if not part.model_dump(exclude_none=True):
        raise UsageError(
            f"An artifact must be a Part, or a dict of a part's fields (text, inline_data, "
            f"file_data, ...); got a dict with keys {sorted(artifact)}."
        )
    return part


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


def validate_storage_id(argument: str, value: str) -> None:
    """Refuse an ``app_name``, ``user_id`` or ``session_id`` that a storage service keeps
    as a folder name when it is empty (or blank), ``.``, ``..``, or holds ``/``, ``\\`` or
    NUL, as google-adk's ``FileArtifactService`` tests expect (google-adk 2.13 itself lets
    ``/`` and ``\\`` through, as nested folders).

    Eventide's services percent-encode every folder name, so no id could escape its
    folder anyway; refusing these up front keeps one rule with google-adk and makes a
    mistaken id (a path where an id belongs) an error rather than an odd folder.

    Raises:
        InputValidationError: naming ``argument`` and what it may hold.
    """
    problem = None
    if not value.strip():
        problem = "is empty"
    elif value in (".", ".."):
        problem = f"is {value!r}, a path traversal segment"
    elif "/" in value or "\\" in value:
        problem = "contains a path separator ('/' or '\\\\')"
    elif "\x00" in value:
        problem = "contains a NUL byte"
    if problem is not None:
        raise InputValidationError(
            f"{argument} {value!r} {problem}; an artifact's {argument} must be a non-blank "
            "id other than '.' and '..', without '/', '\\\\' or NUL (any other character "
            "is fine)."
        )


def validate_storage_scope(
    app_name: str, user_id: str, session_id: str | None, filename: str | None = None
) -> None:
    """:func:`validate_storage_id` on the ids a call uses as folder names: ``session_id``
    only when given and the call is not about a ``user:`` file (which ignores it)."""
    validate_storage_id("app_name", app_name)
    validate_storage_id("user_id", user_id)
    if session_id is not None and (filename is None or not is_user_scoped(filename)):
        validate_storage_id("session_id", session_id)
