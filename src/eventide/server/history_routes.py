"""Session history endpoints: list a session's turns, rewind it, fork it.

- ``GET  .../sessions/{session_id}/turns``: the user turns still in the history (not rewound).
- ``POST .../sessions/{session_id}/rewind`` with ``{"rewind_before_invocation_id": "..."}``:
  append the rewind event (see :mod:`eventide.history.rewind`) and return it.
- ``POST .../sessions/{session_id}/fork`` with ``{"up_to_event_id": "...",
  "new_session_id": "..."}`` (both optional): copy the session into a new one and return it.

Body keys may be snake_case or camelCase (``rewindBeforeInvocationId``, ``upToEventId``,
``newSessionId``); answers are camelCase, as every route's.
"""

from __future__ import annotations

from fastapi import FastAPI, HTTPException, Response
from pydantic import AliasChoices, BaseModel, ConfigDict, Field, field_validator

from eventide.errors import (
    EventNotFoundError,
    InvocationNotFoundError,
    SessionNotFoundError,
    UsageError,
)
from eventide.events import Event
from eventide.history.rewind import turns_of
from eventide.server.app_registry import AppRegistry
from eventide.server.json_responses import json_response, known_app
from eventide.server.request_limits import id_problem
from eventide.sessions.session import Session

__all__ = ["ForkRequest", "RewindRequest", "TurnInfo", "add_history_routes"]

_SESSION = "/apps/{app_name}/users/{user_id}/sessions/{session_id}"


class RewindRequest(BaseModel):
    """The body of ``POST .../rewind``."""

    model_config = ConfigDict(extra="forbid")

    rewind_before_invocation_id: str = Field(
        min_length=1,
        validation_alias=AliasChoices("rewind_before_invocation_id", "rewindBeforeInvocationId"),
    )


class ForkRequest(BaseModel):
    """The body of ``POST .../fork`` (empty: fork the whole session into a new id)."""

    model_config = ConfigDict(extra="forbid")

    up_to_event_id: str | None = Field(
        default=None, validation_alias=AliasChoices("up_to_event_id", "upToEventId")
    )
    new_session_id: str | None = Field(
        default=None, validation_alias=AliasChoices("new_session_id", "newSessionId")
    )

    @field_validator("new_session_id")
    @classmethod
    def _valid_id(cls, value: str | None) -> str | None:
        problem = None if value is None else id_problem("new session id", value)
        if problem is not None:
            raise ValueError(problem)
        return value


class TurnInfo(BaseModel):
    """One turn of ``GET .../turns``."""

    number: int
    invocation_id: str
    text: str


def add_history_routes(api: FastAPI, registry: AppRegistry) -> None:
    """Register the turns, rewind and fork endpoints on ``api``."""
    sessions = registry.services.session_service

    @api.get(
        _SESSION + "/turns",
        response_model=list[TurnInfo],
        summary="List a session's turns (those not rewound)",
        tags=["history"],
        responses={404: {"description": "No such app or session."}},
    )
    async def list_turns(app_name: str, user_id: str, session_id: str) -> Response:
        """The user's turns still in the session's history, numbered from 1."""
        known_app(registry, app_name)
        session = await sessions.get_session(
            app_name=app_name, user_id=user_id, session_id=session_id
        )
        if session is None:
            raise HTTPException(404, detail=_no_session(app_name, user_id, session_id))
        return json_response(
            [
                TurnInfo(number=t.number, invocation_id=t.invocation_id, text=t.text)
                for t in turns_of(session.events)
            ]
        )

    @api.post(
        _SESSION + "/rewind",
        response_model=Event,
        summary="Rewind a session to before an invocation",
        tags=["history"],
        responses={
            404: {"description": "No such app or session."},
            422: {"description": "The invocation is not in the session's history."},
        },
    )
    async def rewind(app_name: str, user_id: str, session_id: str, body: RewindRequest) -> Response:
        """Append an event restoring state and artifacts to before the invocation; the
        rewound turns stay in the log and no longer reach the model."""
        known_app(registry, app_name)
        runner = await registry.runner(app_name)
        try:
            event = await runner.rewind_async(
                user_id=user_id,
                session_id=session_id,
                rewind_before_invocation_id=body.rewind_before_invocation_id,
            )
        except SessionNotFoundError as exc:
            raise HTTPException(404, detail=_no_session(app_name, user_id, session_id)) from exc
        except (InvocationNotFoundError, UsageError) as exc:
            raise HTTPException(422, detail=str(exc)) from exc
        return json_response(event)

    @api.post(
        _SESSION + "/fork",
        response_model=Session,
        summary="Copy a session up to an event into a new session",
        tags=["history"],
        responses={
            404: {"description": "No such app or session."},
            409: {"description": "new_session_id is taken."},
            422: {"description": "The event is not in the session."},
        },
    )
    async def fork(
        app_name: str, user_id: str, session_id: str, body: ForkRequest | None = None
    ) -> Response:
        """A new session with this one's events up to ``up_to_event_id`` (all when left
        out), its state then and its artifacts by version."""
        known_app(registry, app_name)
        body = body or ForkRequest()
        runner = await registry.runner(app_name)
        if body.new_session_id is not None and (
            await sessions.get_session(
                app_name=app_name, user_id=user_id, session_id=body.new_session_id
            )
            is not None
        ):
            raise HTTPException(
                409,
                detail=f"Session {body.new_session_id!r} already exists; fork into a new id "
                "(or leave new_session_id out to get a fresh one).",
            )
        try:
            forked = await runner.fork_session_async(
                user_id=user_id,
                session_id=session_id,
                up_to_event_id=body.up_to_event_id,
                new_session_id=body.new_session_id,
            )
        except SessionNotFoundError as exc:
            raise HTTPException(404, detail=_no_session(app_name, user_id, session_id)) from exc
        except EventNotFoundError as exc:
            raise HTTPException(422, detail=str(exc)) from exc
        except UsageError as exc:
            raise HTTPException(422, detail=str(exc)) from exc
        return json_response(forked)


def _no_session(app_name: str, user_id: str, session_id: str) -> str:
    return (
        f"Session {session_id!r} not found for app {app_name!r} and user {user_id!r}. "
        f"Create it with POST /apps/{app_name}/users/{user_id}/sessions."
    )
