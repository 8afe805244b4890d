"""Session endpoints: create (optionally importing events), get, list, update state, delete.

Shapes follow ``adk api_server``: sessions in camelCase, ``DELETE`` answering ``null`` with
200, ``PATCH`` taking ``{"stateDelta": {...}}`` and recording the change as an event.
"""

from __future__ import annotations

from typing import Any

from fastapi import FastAPI, HTTPException, Request, Response
from pydantic import ValidationError

from eventide._ids import new_id, new_invocation_id
from eventide.errors import RecordTooLargeError, UsageError
from eventide.events import Event, EventActions
from eventide.server.app_registry import AppRegistry
from eventide.server.json_responses import json_response, known_app, read_json, validation_error
from eventide.server.request_models import (
    CreateSessionBody,
    UpdateSessionRequest,
    parse_create_session_body,
)
from eventide.sessions.session import GetSessionConfig, Session

__all__ = ["add_session_routes", "no_session"]

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
                        'Either {"state": {...}, "sessionId": "...", "events": [...]} (every '
                        "key optional; events are imported in order, as an exported session "
                        "holds them) or a plain state object. State keys may use the app:, "
                        "user: and temp: prefixes (temp: keys are dropped)."
                    ),
                    "type": "object",
                }
            }
        },
    }
}


async def _read_create_body(request: Request) -> CreateSessionBody:
    data = await read_json(request, required=False)
    try:
        return parse_create_session_body(data)
    except ValidationError as exc:
        raise validation_error(exc) from exc
    except (TypeError, ValueError) as exc:
        raise HTTPException(
            422,
            detail=[{"type": "invalid_body", "loc": ["body"], "msg": f"Invalid body: {exc}"}],
        ) from exc


def no_session(app_name: str, user_id: str, session_id: str) -> str:
    """The 404 message for a missing session, saying how to create one."""
    return (
        f"Session {session_id!r} not found for app {app_name!r} and user {user_id!r}. "
        f"Create it with POST /apps/{app_name}/users/{user_id}/sessions."
    )


def add_session_routes(api: FastAPI, registry: AppRegistry) -> None:
    """Register the session endpoints on ``api``."""
    sessions = registry.services.session_service

    async def create(app_name: str, user_id: str, body: CreateSessionBody) -> Response:
        session_id = body.session_id
        try:
            session = await sessions.create_session(
                app_name=app_name, user_id=user_id, state=body.state, session_id=session_id
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
        except RecordTooLargeError as exc:
            raise HTTPException(413, detail=str(exc)) from exc
        if body.events:
            await _import_events(session, body.events)
        return json_response(session)

    async def _import_events(session: Session, events: list[Event]) -> None:
        try:
            for event in events:
                # Fresh ids: the exported session (or another import of it) may still hold
                # the old ones.
                event.id = new_id()
                event.partial = None
                await sessions.append_event(session, event)
        except Exception as exc:
            await sessions.delete_session(
                app_name=session.app_name, user_id=session.user_id, session_id=session.id
            )
            if isinstance(exc, UsageError):
                raise HTTPException(422, detail=f"Could not import the events: {exc}") from exc
            if isinstance(exc, RecordTooLargeError):
                raise HTTPException(413, detail=f"Could not import the events: {exc}") from exc
            raise

    @api.post(
        _SESSIONS,
        response_model=Session,
        summary="Create a session (a new id, or the body's sessionId), optionally importing events",
        tags=["sessions"],
        responses={409: {"description": "A session with this id already exists."}},
        openapi_extra=_CREATE_BODY_DOC,
    )
    async def create_session(app_name: str, user_id: str, request: Request) -> Response:
        """Create a session, optionally with an initial state, a chosen id and events."""
        known_app(registry, app_name)
        return await create(app_name, user_id, await _read_create_body(request))

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
        body = await _read_create_body(request)
        body.session_id = session_id
        return await create(app_name, user_id, body)

    @api.get(_SESSIONS, response_model=list[Session], summary="List sessions", tags=["sessions"])
    async def list_sessions(app_name: str, user_id: str) -> Response:
        """The user's sessions of the app, without their events."""
        known_app(registry, app_name)
        listed = await sessions.list_sessions(app_name=app_name, user_id=user_id)
        return json_response(listed.sessions)

    async def existing(app_name: str, user_id: str, session_id: str) -> Session:
        known_app(registry, app_name)
        session = await sessions.get_session(
            app_name=app_name, user_id=user_id, session_id=session_id
        )
        if session is None:
            raise HTTPException(404, detail=no_session(app_name, user_id, session_id))
        return session

    @api.get(
        _SESSIONS + "/{session_id}",
        response_model=Session,
        summary="Get a session with its events",
        tags=["sessions"],
        responses={404: {"description": "No such app or session."}},
    )
    async def get_session(app_name: str, user_id: str, session_id: str) -> Response:
        """The session: its state and its whole event log."""
        return json_response(await existing(app_name, user_id, session_id))

    @api.patch(
        _SESSIONS + "/{session_id}",
        response_model=Session,
        summary="Update a session's state without running the agent",
        tags=["sessions"],
        responses={404: {"description": "No such app or session."}},
    )
    async def update_session(
        app_name: str, user_id: str, session_id: str, request: Request
    ) -> Response:
        """Apply ``{"stateDelta": {...}}`` as an event authored by the user; the session."""
        data = await read_json(request, required=True)
        try:
            body = UpdateSessionRequest.model_validate(data)
        except ValidationError as exc:
            raise validation_error(exc) from exc
        session = await existing(app_name, user_id, session_id)
        event = Event(
            author="user",
            invocation_id=new_invocation_id(),
            actions=EventActions(state_delta=body.state_delta),
        )
        try:
            await sessions.append_event(session, event)
        except UsageError as exc:
            raise HTTPException(422, detail=str(exc)) from exc
        except RecordTooLargeError as exc:
            raise HTTPException(413, detail=str(exc)) from exc
        return json_response(session)

    @api.delete(
        _SESSIONS + "/{session_id}",
        response_model=None,
        summary="Delete a session",
        tags=["sessions"],
    )
    async def delete_session(app_name: str, user_id: str, session_id: str) -> Response:
        """Delete the session and its events (deleting a missing session is not an error)."""
        known_app(registry, app_name)
        await sessions.delete_session(app_name=app_name, user_id=user_id, session_id=session_id)
        return json_response(None)
