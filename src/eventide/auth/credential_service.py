"""Where users' credentials for tools are kept: ``BaseCredentialService`` and the in-memory one."""

from __future__ import annotations

from abc import ABC, abstractmethod

from eventide.auth.auth_config import AuthCredential

__all__ = ["BaseCredentialService", "InMemoryCredentialService"]


class BaseCredentialService(ABC):
    """Stores one credential per (app, user, credential key).

    Implement it over a secret store to keep credentials across restarts; pass it as
    ``Runner(credential_service=...)``.
    """

    @abstractmethod
    async def load_credential(
        self, *, app_name: str, user_id: str, credential_key: str
    ) -> AuthCredential | None:
        """The stored credential, or None."""

    @abstractmethod
    async def save_credential(
        self, *, app_name: str, user_id: str, credential_key: str, credential: AuthCredential
    ) -> None:
        """Store ``credential``, replacing any previous one under the same key."""

    @abstractmethod
    async def delete_credential(self, *, app_name: str, user_id: str, credential_key: str) -> None:
        """Forget the credential (no error when there is none)."""


class InMemoryCredentialService(BaseCredentialService):
    """Keeps credentials in this process's memory; they are lost when it exits."""

    def __init__(self) -> None:
        self._credentials: dict[tuple[str, str, str], AuthCredential] = {}

    async def load_credential(
        self, *, app_name: str, user_id: str, credential_key: str
    ) -> AuthCredential | None:
        stored = self._credentials.get((app_name, user_id, credential_key))
        # A copy, so a caller changing it does not change the store behind its back.
        return stored.model_copy(deep=True) if stored is not None else None

    async def save_credential(
        self, *, app_name: str, user_id: str, credential_key: str, credential: AuthCredential
    ) -> None:
        self._credentials[(app_name, user_id, credential_key)] = credential.model_copy(deep=True)

    async def delete_credential(self, *, app_name: str, user_id: str, credential_key: str) -> None:
        self._credentials.pop((app_name, user_id, credential_key), None)
