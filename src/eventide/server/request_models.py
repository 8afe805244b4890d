"""The JSON bodies the HTTP API accepts.

Field names are snake_case, as in the rest of Eventide's JSON; the camelCase spellings that
ADK front ends send (``appName``, ``newMessage``, ...) are accepted too. Unknown keys are a
422 naming them: a typo silently dropped would change what the request does. Every body is
held to :mod:`eventide.server.request_limits` (nesting depth, keys in one state change).
"""

from __future__ import annotations

import difflib
from typing import Any, cast

from pydantic import (
    AliasChoices,
    BaseModel,
    ConfigDict,
    Field,
    ValidationInfo,
    field_validator,
    model_validator,
)

from eventide import types
from eventide.events import Event
from eventide.server.request_limits import id_problem, json_depth_problem, state_keys_problem
from eventide.types import JsonObject, JsonValue, snake_case_keys

__all__ = [
    "SHALLOW_JSON",
    "CreateSessionBody",
    "RunAgentRequest",
    "SaveArtifactRequest",
    "UpdateMemoryRequest",
    "UpdateSessionRequest",
    "parse_create_session_body",
]


SHALLOW_JSON: dict[str, bool] = {"shallow_json": True}
"""The validation context saying the body's JSON text was found shallow enough already
(:func:`~eventide.server.request_limits.json_text_shallow`): its parsed value is not walked
again for depth."""


def _both(name: str) -> AliasChoices:
    head, *rest = name.split("_")
    camel = head + "".join(word.capitalize() for word in rest)
    return AliasChoices(name, camel)


class RunAgentRequest(BaseModel):
    """The body of ``POST /run`` and ``POST /run_sse``: one user turn.

    Attributes:
        app_name: the app to run (``appName`` accepted).
        user_id: the user (``userId`` accepted).
        session_id: an existing session of that user (``sessionId`` accepted).
        new_message: the user's message as Content JSON, e.g.
            ``{"role": "user", "parts": [{"text": "hi"}]}`` (``newMessage`` accepted).
        streaming: stream partial model output (``/run_sse`` sends each chunk).
        state_delta: state to set along with the message (``stateDelta`` accepted).
        function_call_event_id, invocation_id, custom_metadata, service_tier: sent by ADK
            clients (resuming a long-running call, per-run metadata, a serving tier);
            accepted so that those clients work, not used by Eventide's turn.
    """

    model_config = ConfigDict(extra="forbid")

    app_name: str = Field(validation_alias=_both("app_name"), min_length=1)
    user_id: str = Field(validation_alias=_both("user_id"), min_length=1)
    session_id: str = Field(validation_alias=_both("session_id"), min_length=1)
    new_message: types.Content = Field(validation_alias=_both("new_message"))
    streaming: bool = False
    state_delta: dict[str, Any] | None = Field(default=None, validation_alias=_both("state_delta"))
    function_call_event_id: str | None = Field(
        default=None, validation_alias=_both("function_call_event_id")
    )
    invocation_id: str | None = Field(default=None, validation_alias=_both("invocation_id"))
    custom_metadata: dict[str, Any] | None = Field(
        default=None, validation_alias=_both("custom_metadata")
    )
    service_tier: str | None = Field(default=None, validation_alias=_both("service_tier"))

    @model_validator(mode="before")
    @classmethod
    def _within_limits(cls, value: Any, info: ValidationInfo) -> Any:
        problem = (
            None if info.context is SHALLOW_JSON else json_depth_problem(value)
        ) or _delta_keys_problem(value)
        if problem is not None:
            raise ValueError(problem)
        return value

    @field_validator("new_message", mode="before")
    @classmethod
    def _accept_camel_case_parts(cls, value: Any) -> Any:
        # ADK front ends write parts in camelCase (functionResponse, inlineData, ...).
        return snake_case_keys(cast("JsonObject", value)) if isinstance(value, dict) else value


def _delta_keys_problem(body: Any) -> str | None:
    if not isinstance(body, dict):
        return None
    fields = cast("dict[str, Any]", body)
    delta = fields.get("state_delta", fields.get("stateDelta"))
    if not isinstance(delta, dict):
        return None
    return state_keys_problem(cast("dict[str, Any]", delta), "stateDelta")


class UpdateSessionRequest(BaseModel):
    """The body of ``PATCH .../sessions/{id}``: state to change without running the agent.

    Attributes:
        state_delta: the keys to set (``stateDelta`` accepted); ``app:`` and ``user:``
            prefixes reach the app's and the user's state, ``temp:`` keys are dropped.
    """

    model_config = ConfigDict(extra="forbid")

    state_delta: dict[str, Any] = Field(validation_alias=_both("state_delta"))

    @field_validator("state_delta")
    @classmethod
    def _few_enough_keys(cls, value: dict[str, Any]) -> dict[str, Any]:
        problem = state_keys_problem(value, "stateDelta")
        if problem is not None:
            raise ValueError(problem)
        return value


class SaveArtifactRequest(BaseModel):
    """The body of ``POST .../artifacts``: a new version of an artifact.

    Attributes:
        filename: the artifact's name (``user:`` prefix for the user's artifacts).
        artifact: the content as Part JSON: ``{"text": ...}`` or
            ``{"inlineData": {"mimeType": ..., "data": <base64>}}``.
        custom_metadata: JSON values kept with the new version and sent back in its
            metadata (``customMetadata`` accepted as a key).
    """

    model_config = ConfigDict(extra="forbid")

    filename: str = Field(min_length=1)
    artifact: types.Part
    custom_metadata: dict[str, Any] | None = Field(
        default=None, validation_alias=_both("custom_metadata")
    )

    @field_validator("artifact", mode="before")
    @classmethod
    def _accept_camel_case_part(cls, value: Any) -> Any:
        return snake_case_keys(cast("JsonObject", value)) if isinstance(value, dict) else value


class UpdateMemoryRequest(BaseModel):
    """The body of ``PATCH .../memory``: add a session's events to the memory service."""

    model_config = ConfigDict(extra="forbid")

    session_id: str = Field(validation_alias=_both("session_id"), min_length=1)


class CreateSessionBody(BaseModel):
    """What a create-session body asks for: the initial state, an id, events to import."""

    state: dict[str, Any] | None = None
    session_id: str | None = None
    events: list[Event] = Field(default_factory=list)


_WRAPPER_KEYS = frozenset({"state", "session_id", "sessionId", "events", "options"})


def parse_create_session_body(body: JsonValue) -> CreateSessionBody:
    """The initial state, session id and imported events of a create-session body.

    Two shapes are accepted: ``{"state": {...}, "session_id": "...", "events": [...]}``
    (ADK's request object; every key optional, camelCase accepted, ``options`` ignored) and
    a plain state dict. A body with any of the wrapper's keys is the wrapper form, and then
    every key must be one of them (a typo such as ``sesionId`` would otherwise be stored as
    state); any other object is the state itself.

    Raises:
        TypeError: the body is neither empty nor a JSON object, or a wrapper key has the
            wrong type.
        ValueError: the wrapper form has an unknown key, the id is not a valid id, or the
            state has more keys than the limit.
        pydantic.ValidationError: an imported event is not Event JSON.
    """
    if body is None:
        return CreateSessionBody()
    if not isinstance(body, dict):
        raise TypeError(f"expected a JSON object, got {type(body).__name__}")
    if not body.keys() & _WRAPPER_KEYS:
        return CreateSessionBody(state=_checked_state(dict(body), "the state") or None)
    unknown = sorted(body.keys() - _WRAPPER_KEYS)
    if unknown:
        raise ValueError(_unknown_keys(unknown, ["state", "sessionId", "events"]))
    state = body.get("state")
    if state is not None and not isinstance(state, dict):
        raise TypeError(f"state must be a JSON object, got {type(state).__name__}")
    session_id = body.get("session_id", body.get("sessionId"))
    if session_id is not None:
        if not isinstance(session_id, str):
            raise TypeError(f"sessionId must be a string, got {type(session_id).__name__}")
        problem = id_problem("session id", session_id)
        if problem is not None:
            raise ValueError(problem)
    events = body.get("events") or []
    if not isinstance(events, list):
        raise TypeError(f"events must be a list of events, got {type(events).__name__}")
    parsed = [Event.model_validate(snake_case_keys(e)) for e in events]
    return CreateSessionBody(
        state=_checked_state(dict(state), "state") or None if state else None,
        session_id=session_id,
        events=parsed,
    )


def _checked_state(state: dict[str, Any], where: str) -> dict[str, Any]:
    problem = state_keys_problem(state, where)
    if problem is not None:
        raise ValueError(problem)
    return state


def _unknown_keys(unknown: list[str], known: list[str]) -> str:
    """'Unknown key 'sesionId' (did you mean 'sessionId'?); the keys are ...'."""
    named: list[str] = []
    for key in unknown:
        close = difflib.get_close_matches(key, known, n=1, cutoff=0.6)
        named.append(f"{key!r}" + (f" (did you mean {close[0]!r}?)" if close else ""))
    return (
        f"Unknown key{'s' if len(unknown) > 1 else ''} {', '.join(named)}; the body's keys "
        f"are {', '.join(known)} (all optional)."
    )
