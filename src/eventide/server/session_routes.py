"""Session endpoints: create, get, list and delete a user's sessions of an app."""

from __future__ import annotations

import json
from typing import Any

from fastapi import FastAPI, HTTPException, Request, Response

from eventide.errors import UsageError
from eventide.server.app_registry import AppRegistry
from eventide.server.json_responses import json_response, known_app
from eventide.server.request_models import parse_create_session_body
from eventide.sessions.session import GetSessionConfig, Session

__all__ = ["add_session_routes"]

_SESSIONS = "/apps/{app_name}/users/{user_id}/sessions"

# Documents the optional body in OpenAPI; the handlers read the raw JSON themselves because
# two shapes are accepted (see parse_create_session_body).
_CREATE_BODY_DOC: dict[str, Any] = {
    "requestBody": {
        "required": False,
        "content": {
            "application/json": {
                "schema": {
                    "title": "Initial state",
                    "description": (
                        'Either {"state": {...}} (optionally with "session_id") or a plain '
                        "state object. Keys may use the app:, user: and temp: prefixes "
                        "(temp: keys are dropped)."
                    ),
                    "type": "object",
                }
            }
        },
    }
}


async def _read_body(request: Request) -> tuple[dict[str, Any] | None, str | None]:
    raw = await request.body()
    if not raw.strip():
        return None, None
    try:
        data = json.loads(raw)
    except ValueError as exc:
        raise HTTPException(
            422,
            detail=[
                {
                    "type": "json_invalid",
                    "loc": ["body", getattr(exc, "pos", 0)],
                    "msg": f"JSON decode error: {exc}",
                }
            ],
        ) from exc
    try:
        return parse_create_session_body(data)
    except TypeError as exc:
        raise HTTPException(
            422,
            detail=[{"type": "object_type", "loc": ["body"], "msg": f"Invalid body: {exc}"}],
        ) from exc


def add_session_routes(api: FastAPI, registry: AppRegistry) -> None:
    """Register the session endpoints on ``api``."""
    sessions = registry.services.session_service

    async def create(
        app_name: str, user_id: str, session_id: str | None, state: dict[str, Any] | None
    ) -> Response:
        try:
            session = await sessions.create_session(
                app_name=app_name, user_id=user_id, state=state, session_id=session_id
            )
        except UsageError as exc:
            # Either the id is taken or a state value is not JSON data; only a lookup tells
            # which, and it runs only on this error path.
            taken = session_id is not None and (
                await sessions.get_session(
                    app_name=app_name,
                    user_id=user_id,
                    session_id=session_id,
                    config=GetSessionConfig(num_recent_events=0),
                )
                is not None
            )
            raise HTTPException(409 if taken else 422, detail=str(exc)) from exc
        return json_response(session)

    @api.post(
        _SESSIONS,
        response_model=Session,
        summary="Create a session with a new id",
        tags=["sessions"],
        openapi_extra=_CREATE_BODY_DOC,
    )
    async def create_session(app_name: str, user_id: str, request: Request) -> Response:
        """Create a session, optionally with an initial state (and a chosen id)."""
        known_app(registry, app_name)
        state, session_id = await _read_body(request)
        return await create(app_name, user_id, session_id, state)

    @api.post(
        _SESSIONS + "/{session_id}",
        response_model=Session,
        summary="Create a session with the given id",
        tags=["sessions"],
        responses={409: {"description": "A session with this id already exists."}},
        openapi_extra=_CREATE_BODY_DOC,
    )
    async def create_session_with_id(
        app_name: str, user_id: str, session_id: str, request: Request
    ) -> Response:
        """Create the session ``session_id``, optionally with an initial state."""
        known_app(registry, app_name)
        state, _ = await _read_body(request)
        return await create(app_name, user_id, session_id, state)

    @api.get(_SESSIONS, response_model=list[Session], summary="List sessions", tags=["sessions"])
    async def list_sessions(app_name: str, user_id: str) -> Response:
        """The user's sessions of the app, without their events."""
        known_app(registry, app_name)
        listed = await sessions.list_sessions(app_name=app_name, user_id=user_id)
        return json_response(listed.sessions)

    @api.get(
        _SESSIONS + "/{session_id}",
        response_model=Session,
        summary="Get a session with its events",
        tags=["sessions"],
        responses={404: {"description": "No such app or session."}},
    )
    async def get_session(app_name: str, user_id: str, session_id: str) -> Response:
        """The session: its state and its whole event log."""
        known_app(registry, app_name)
        session = await sessions.get_session(
            app_name=app_name, user_id=user_id, session_id=session_id
        )
        if session is None:
            raise HTTPException(404, detail=_no_session(app_name, user_id, session_id))
        return json_response(session)

    @api.delete(
        _SESSIONS + "/{session_id}",
        status_code=204,
        summary="Delete a session",
        tags=["sessions"],
    )
    async def delete_session(app_name: str, user_id: str, session_id: str) -> Response:
        """Delete the session and its events (deleting a missing session is not an error)."""
        known_app(registry, app_name)
        await sessions.delete_session(app_name=app_name, user_id=user_id, session_id=session_id)
        return Response(status_code=204)


def _no_session(app_name: str, user_id: str, session_id: str) -> str:
    return (
        f"Session {session_id!r} not found for app {app_name!r} and user {user_id!r}. "
        f"Create it with POST /apps/{app_name}/users/{user_id}/sessions."
    )
