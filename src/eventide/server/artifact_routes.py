"""Artifact endpoints: list, read (a version or the latest), save a new version, delete, and
version metadata, in the shapes of ``adk api_server``.

Artifact names may contain ``/`` (``reports/q1.pdf``) and the ``user:`` prefix (shared by
the user's sessions). Names that could escape the artifact folder are refused with a 400
before anything is read or stored; every route answers 404 for an unknown app or session.
"""

from __future__ import annotations

from typing import Any, cast

from fastapi import FastAPI, HTTPException, Query, Request, Response
from pydantic import ValidationError

from eventide import types
from eventide.artifacts.base_artifact_service import (
    ArtifactVersion,
    BaseArtifactService,
    memory_uri,
    validate_artifact_name,
)
from eventide.errors import InvalidArtifactNameError
from eventide.server.app_registry import AppRegistry
from eventide.server.json_responses import json_response, known_app, read_json, validation_error
from eventide.server.request_models import SaveArtifactRequest
from eventide.server.session_routes import no_session
from eventide.sessions.session import GetSessionConfig
from eventide.types import camel_case_keys

__all__ = ["add_artifact_routes"]

_ARTIFACTS = "/apps/{app_name}/users/{user_id}/sessions/{session_id}/artifacts"
_NO_SERVICE = (
    "This server has no artifact service, so artifacts cannot be saved; start it with one "
    "(the default `eventide api-server` stores them under APPS_DIR/.eventide/artifacts)."
)


def _checked_name(name: str) -> str:
    try:
        validate_artifact_name(name)
    except InvalidArtifactNameError as exc:
        raise HTTPException(400, detail=str(exc)) from exc
    return name


def _described(
    version: ArtifactVersion, app_name: str, user_id: str, session_id: str, name: str
) -> dict[str, Any]:
    """A version's metadata as ADK sends it: ``version``, ``canonicalUri``,
    ``customMetadata``, ``createTime`` and (for bytes) ``mimeType``.

    A ``file://`` URI would tell every caller where the server keeps its files; it is sent
    as an ``artifact://`` URI naming the version by app, user, session and name instead.
    """
    data = cast(
        "dict[str, Any]", camel_case_keys(version.model_dump(mode="json", exclude_none=True))
    )
    if str(data.get("canonicalUri", "")).startswith("file:"):
        uri = memory_uri(app_name, user_id, session_id, name, version.version)
        data["canonicalUri"] = "artifact://" + uri.removeprefix("memory://")
    return data


def add_artifact_routes(api: FastAPI, registry: AppRegistry) -> None:
    """Register the artifact endpoints on ``api``."""
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
            raise HTTPException(404, detail=no_session(app_name, user_id, session_id))

    def artifacts() -> BaseArtifactService | None:
        return services.artifact_service

    def not_found(name: str, version: int | None) -> HTTPException:
        which = "" if version is None else f" version {version}"
        return HTTPException(
            404,
            detail=f"Artifact {name!r}{which} not found in this session; "
            "GET .../artifacts lists the names it has, .../versions the versions.",
        )

    async def load_part(
        app_name: str, user_id: str, session_id: str, name: str, version: int | None
    ) -> types.Part:
        _checked_name(name)
        await check_session(app_name, user_id, session_id)
        service = artifacts()
        part = (
            None
            if service is None
            else await service.load_artifact(
                app_name=app_name,
                user_id=user_id,
                session_id=session_id,
                filename=name,
                version=version,
            )
        )
        if part is None:
            raise not_found(name, version)
        return part

    async def describe(
        app_name: str, user_id: str, session_id: str, name: str, version: int
    ) -> dict[str, Any]:
        """The version's metadata in ADK's shape; 404 when it is absent."""
        service = artifacts()
        found = (
            None
            if service is None
            else await service.get_artifact_version(
                app_name=app_name,
                user_id=user_id,
                session_id=session_id,
                filename=name,
                version=version,
            )
        )
        if found is None:
            raise not_found(name, version)
        return _described(found, app_name, user_id, session_id, name)

    async def versions_of(app_name: str, user_id: str, session_id: str, name: str) -> list[int]:
        _checked_name(name)
        await check_session(app_name, user_id, session_id)
        service = artifacts()
        if service is None:
            return []
        return await service.list_versions(
            app_name=app_name, user_id=user_id, session_id=session_id, filename=name
        )

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

    @api.post(
        _ARTIFACTS,
        summary="Save a new version of an artifact",
        tags=["artifacts"],
        responses={200: {"description": "The new version's metadata."}},
    )
    async def save_artifact(
        app_name: str, user_id: str, session_id: str, request: Request
    ) -> Response:
        """Store ``{"filename", "artifact": <Part>}`` as the artifact's next version."""
        data = await read_json(request, required=True)
        try:
            body = SaveArtifactRequest.model_validate(data)
        except ValidationError as exc:
            raise validation_error(exc) from exc
        name = _checked_name(body.filename)
        part = body.artifact
        if part.text is None and part.inline_data is None:
            raise HTTPException(
                422,
                detail='The artifact must hold text ({"text": ...}) or bytes '
                '({"inlineData": {"mimeType": ..., "data": <base64>}}).',
            )
        await check_session(app_name, user_id, session_id)
        service = artifacts()
        if service is None:
            raise HTTPException(409, detail=_NO_SERVICE)
        extra = {"custom_metadata": body.custom_metadata} if body.custom_metadata else {}
        try:
            version = await service.save_artifact(
                app_name=app_name,
                user_id=user_id,
                session_id=session_id,
                filename=name,
                artifact=part,
                **extra,
            )
        except InvalidArtifactNameError as exc:  # e.g. too long for the file system
            raise HTTPException(400, detail=str(exc)) from exc
        # (a 404 if another request deleted it in between)
        return json_response(await describe(app_name, user_id, session_id, name, version))

    @api.get(
        _ARTIFACTS + "/{name:path}/versions/metadata",
        summary="List an artifact's versions with their metadata",
        tags=["artifacts"],
    )
    async def list_versions_metadata(
        app_name: str, user_id: str, session_id: str, name: str
    ) -> Response:
        """One ``{"version", "canonicalUri", "customMetadata", "createTime", "mimeType"}`` per
        version present, oldest first."""
        _checked_name(name)
        await check_session(app_name, user_id, session_id)
        service = artifacts()
        listed = (
            []
            if service is None
            else await service.list_artifact_versions(
                app_name=app_name, user_id=user_id, session_id=session_id, filename=name
            )
        )
        return json_response([_described(v, app_name, user_id, session_id, name) for v in listed])

    @api.get(
        _ARTIFACTS + "/{name:path}/versions/{version}/metadata",
        summary="One version's metadata",
        tags=["artifacts"],
    )
    async def version_metadata(
        app_name: str, user_id: str, session_id: str, name: str, version: int
    ) -> Response:
        """``{"version", "canonicalUri", "customMetadata", "createTime", "mimeType"}``; 404
        when absent."""
        _checked_name(name)
        await check_session(app_name, user_id, session_id)
        return json_response(await describe(app_name, user_id, session_id, name, version))

    @api.get(
        _ARTIFACTS + "/{name:path}/versions",
        response_model=list[int],
        summary="List an artifact's versions",
        tags=["artifacts"],
    )
    async def list_versions(app_name: str, user_id: str, session_id: str, name: str) -> list[int]:
        """The versions of the artifact, ascending (empty when it has none)."""
        return await versions_of(app_name, user_id, session_id, name)

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
        return json_response(await load_part(app_name, user_id, session_id, name, version))

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
        return json_response(await load_part(app_name, user_id, session_id, name, version))

    @api.delete(
        _ARTIFACTS + "/{name:path}",
        response_model=None,
        summary="Delete an artifact (every version)",
        tags=["artifacts"],
    )
    async def delete_artifact(app_name: str, user_id: str, session_id: str, name: str) -> Response:
        """Delete every version; deleting a missing artifact is not an error (``null``)."""
        _checked_name(name)
        await check_session(app_name, user_id, session_id)
        service = artifacts()
        if service is not None:
            await service.delete_artifact(
                app_name=app_name, user_id=user_id, session_id=session_id, filename=name
            )
        return json_response(None)
