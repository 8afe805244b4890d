"""``InMemoryArtifactService``: artifact versions in a dict."""

from __future__ import annotations

from eventide import types
from eventide.artifacts.base_artifact_service import (
    BaseArtifactService,
    is_tombstone,
    is_user_scoped,
    validate_artifact_name,
)

__all__ = ["InMemoryArtifactService"]


class InMemoryArtifactService(BaseArtifactService):
    """Keeps artifact versions in process memory."""

    def __init__(self) -> None:
        self._files: dict[tuple[str, str, str, str], list[types.Part]] = {}

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
    ) -> int:
        validate_artifact_name(filename)
        part = types.Part.model_validate(artifact)
        versions = self._files.setdefault(self._key(app_name, user_id, session_id, filename), [])
        versions.append(part.model_copy(deep=True))
        return len(versions) - 1

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
        self._files.pop(self._key(app_name, user_id, session_id, filename), None)

    async def list_versions(
        self, *, app_name: str, user_id: str, session_id: str | None, filename: str
    ) -> list[int]:
        versions = self._files.get(self._key(app_name, user_id, session_id, filename), [])
        return list(range(len(versions)))
