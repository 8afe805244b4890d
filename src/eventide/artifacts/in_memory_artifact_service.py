"""``InMemoryArtifactService``: artifact versions in a dict."""

from __future__ import annotations

from typing import Any

from eventide import types
from eventide.artifacts.base_artifact_service import (
    ArtifactVersion,
    BaseArtifactService,
    is_tombstone,
    is_user_scoped,
    memory_uri,
    mime_type_of,
    new_version_record,
    validate_artifact_name,
)

__all__ = ["InMemoryArtifactService"]


class InMemoryArtifactService(BaseArtifactService):
    """Keeps artifact versions in process memory."""

    def __init__(self) -> None:
        self._files: dict[tuple[str, str, str, str], list[types.Part]] = {}
        # Per version, beside the part: custom metadata and save time.
        self._records: dict[tuple[str, str, str, str], list[dict[str, Any]]] = {}

    @staticmethod
    def _key(
        app_name: str, user_id: str, session_id: str | None, filename: str
    ) -> tuple[str, str, str, str]:
        scope = "user" if is_user_scoped(filename) else f"session/{session_id or ''}"
        return (app_name, user_id, scope, filename)

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
        validate_artifact_name(filename)
        part = types.Part.model_validate(artifact)
        record = new_version_record(custom_metadata)
        key = self._key(app_name, user_id, session_id, filename)
        versions = self._files.setdefault(key, [])
        versions.append(part.model_copy(deep=True))
        self._records.setdefault(key, []).append(record)
        return len(versions) - 1

    async def get_artifact_version(
        self,
        *,
        app_name: str,
        user_id: str,
        session_id: str | None,
        filename: str,
        version: int | None = None,
    ) -> ArtifactVersion | None:
        key = self._key(app_name, user_id, session_id, filename)
        versions = self._files.get(key) or []
        number = len(versions) - 1 if version is None else version
        if not 0 <= number < len(versions) or is_tombstone(versions[number]):
            return None
        record = self._records[key][number]
        return ArtifactVersion(
            version=number,
            canonical_uri=memory_uri(app_name, user_id, session_id, filename, number),
            custom_metadata=dict(record["custom_metadata"]),
            create_time=record["create_time"],
            mime_type=mime_type_of(versions[number]),
        )

    async def load_artifact(
        self,
        *,
        app_name: str,
        user_id: str,
        session_id: str | None,
        filename: str,
        version: int | None = None,
    ) -> types.Part | None:
        versions = self._files.get(self._key(app_name, user_id, session_id, filename))
        if not versions:
            return None
        if version is None:
            part = versions[-1]
        elif 0 <= version < len(versions):
            part = versions[version]
        else:
            return None
        return None if is_tombstone(part) else part.model_copy(deep=True)

    async def list_artifact_keys(
        self, *, app_name: str, user_id: str, session_id: str | None
    ) -> list[str]:
        own = f"session/{session_id or ''}"
        return sorted(
            k[3]
            for k, v in self._files.items()
            if v
            and k[0] == app_name
            and k[1] == user_id
            and k[2] in (own, "user")
            and not is_tombstone(v[-1])
        )

    async def delete_artifact(
        self, *, app_name: str, user_id: str, session_id: str | None, filename: str
    ) -> None:
        key = self._key(app_name, user_id, session_id, filename)
        self._files.pop(key, None)
        self._records.pop(key, None)

    async def list_versions(
        self, *, app_name: str, user_id: str, session_id: str | None, filename: str
    ) -> list[int]:
        versions = self._files.get(self._key(app_name, user_id, session_id, filename), [])
        return list(range(len(versions)))
