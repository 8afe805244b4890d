"""Artifact endpoints: list a session's artifacts, read a version, list versions."""

from __future__ import annotations

from fastapi import FastAPI, HTTPException, Query, Response

from eventide import types
from eventide.artifacts.base_artifact_service import BaseArtifactService
from eventide.errors import InvalidArtifactNameError
from eventide.server.app_registry import AppRegistry
from eventide.server.json_responses import json_response, known_app
from eventide.sessions.session import GetSessionConfig

__all__ = ["add_artifact_routes"]

_ARTIFACTS = "/apps/{app_name}/users/{user_id}/sessions/{session_id}/artifacts"


def add_artifact_routes(api: FastAPI, registry: AppRegistry) -> None:
    """Register the artifact endpoints on ``api``.

    Artifact names may contain ``/`` (``reports/q1.pdf``) and the ``user:`` prefix (shared
    by the user's sessions); a server without an artifact service has no artifacts.
    """
    services = registry.services

    async def check_session(app_name: str, user_id: str, session_id: str) -> None:
        known_app(registry, app_name)
        session = await services.session_service.get_session(
            app_name=app_name,
            user_id=user_id,
            session_id=session_id,
            config=GetSessionConfig(num_recent_events=0),
        )
        if session is None:
            raise HTTPException(
                404,
                detail=f"Session {session_id!r} not found for app {app_name!r} and user "
                f"{user_id!r}.",
            )

    def artifacts() -> BaseArtifactService | None:
        return services.artifact_service

    def not_found(name: str, version: int | None) -> HTTPException:
        which = "" if version is None else f" version {version}"
        return HTTPException(404, detail=f"Artifact {name!r}{which} not found in this session.")

    async def load(
        app_name: str, user_id: str, session_id: str, name: str, version: int | None
    ) -> Response:
        await check_session(app_name, user_id, session_id)
        service = artifacts()
        if service is None:
            raise not_found(name, version)
        try:
            part = await service.load_artifact(
                app_name=app_name,
                user_id=user_id,
                session_id=session_id,
                filename=name,
                version=version,
            )
        except InvalidArtifactNameError as exc:
            raise HTTPException(400, detail=str(exc)) from exc
        if part is None:
            raise not_found(name, version)
        return json_response(part)

    @api.get(_ARTIFACTS, response_model=list[str], summary="List artifacts", tags=["artifacts"])
    async def list_artifacts(app_name: str, user_id: str, session_id: str) -> list[str]:
        """The artifact names visible to the session: its own and the user's (``user:``)."""
        await check_session(app_name, user_id, session_id)
        service = artifacts()
        if service is None:
            return []
        return await service.list_artifact_keys(
            app_name=app_name, user_id=user_id, session_id=session_id
        )

    @api.get(
        _ARTIFACTS + "/{name:path}/versions",
        response_model=list[int],
        summary="List an artifact's versions",
        tags=["artifacts"],
    )
    async def list_versions(app_name: str, user_id: str, session_id: str, name: str) -> list[int]:
        """The versions of the artifact, ascending; 404 when it has none."""
        await check_session(app_name, user_id, session_id)
        service = artifacts()
        versions = (
            []
            if service is None
            else await service.list_versions(
                app_name=app_name, user_id=user_id, session_id=session_id, filename=name
            )
        )
        if not versions:
            raise not_found(name, None)
        return versions

    @api.get(
        _ARTIFACTS + "/{name:path}/versions/{version}",
        response_model=types.Part,
        summary="Get one version of an artifact",
        tags=["artifacts"],
    )
    async def get_artifact_version(
        app_name: str, user_id: str, session_id: str, name: str, version: int
    ) -> Response:
        """The artifact's given version, as a Part (bytes base64-encoded)."""
        return await load(app_name, user_id, session_id, name, version)

    @api.get(
        _ARTIFACTS + "/{name:path}",
        response_model=types.Part,
        summary="Get an artifact",
        tags=["artifacts"],
    )
    async def get_artifact(
        app_name: str,
        user_id: str,
        session_id: str,
        name: str,
        version: int | None = Query(default=None, ge=0, description="The latest when omitted."),
    ) -> Response:
        """The artifact (a version, or the latest), as a Part (bytes base64-encoded)."""
        return await load(app_name, user_id, session_id, name, version)
