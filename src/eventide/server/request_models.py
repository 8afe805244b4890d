"""The JSON bodies the HTTP API accepts.

Field names are snake_case, as in the rest of Eventide's JSON; the camelCase spellings that
ADK front ends send (``appName``, ``newMessage``, ...) are accepted too. Unknown keys are
ignored, so a front end sending extra fields keeps working.
"""

from __future__ import annotations

from typing import Any, cast

from pydantic import AliasChoices, BaseModel, ConfigDict, Field, field_validator

from eventide import types
from eventide.events import Event
from eventide.types import JsonObject, JsonValue, snake_case_keys

__all__ = [
    "CreateSessionBody",
    "RunAgentRequest",
    "SaveArtifactRequest",
    "UpdateMemoryRequest",
    "UpdateSessionRequest",
    "parse_create_session_body",
]


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
    """

    model_config = ConfigDict(extra="ignore")

    app_name: str = Field(validation_alias=_both("app_name"), min_length=1)
    user_id: str = Field(validation_alias=_both("user_id"), min_length=1)
    session_id: str = Field(validation_alias=_both("session_id"), min_length=1)
    new_message: types.Content = Field(validation_alias=_both("new_message"))
    streaming: bool = False
    state_delta: dict[str, Any] | None = Field(default=None, validation_alias=_both("state_delta"))

    @field_validator("new_message", mode="before")
    @classmethod
    def _accept_camel_case_parts(cls, value: Any) -> Any:
        # ADK front ends write parts in camelCase (functionResponse, inlineData, ...).
        return snake_case_keys(cast("JsonObject", value)) if isinstance(value, dict) else value


class UpdateSessionRequest(BaseModel):
    """The body of ``PATCH .../sessions/{id}``: state to change without running the agent.

    Attributes:
        state_delta: the keys to set (``stateDelta`` accepted); ``app:`` and ``user:``
            prefixes reach the app's and the user's state, ``temp:`` keys are dropped.
    """

    model_config = ConfigDict(extra="forbid")

    state_delta: dict[str, Any] = Field(validation_alias=_both("state_delta"))


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
    a plain state dict. A body whose keys are all among the wrapper's keys, with ``state``
    an object or absent, is the wrapper form; any other object is the state itself.

    Raises:
        TypeError: the body is neither empty nor a JSON object, or a wrapper key has the
            wrong type.
        pydantic.ValidationError: an imported event is not Event JSON.
    """
    if body is None:
        return CreateSessionBody()
    if not isinstance(body, dict):
        raise TypeError(f"expected a JSON object, got {type(body).__name__}")
    if not (body and body.keys() <= _WRAPPER_KEYS and isinstance(body.get("state"), dict | None)):
        return CreateSessionBody(state=dict(body) if body else None)
    session_id = body.get("session_id", body.get("sessionId"))
    if session_id is not None and not isinstance(session_id, str):
        raise TypeError(f"session_id must be a string, got {type(session_id).__name__}")
    events = body.get("events") or []
    if not isinstance(events, list):
        raise TypeError(f"events must be a list of events, got {type(events).__name__}")
    parsed = [Event.model_validate(snake_case_keys(e)) for e in events]
    state = body.get("state")
    return CreateSessionBody(
        state=dict(state) if isinstance(state, dict) and state else None,
        session_id=session_id,
        events=parsed,
    )
