"""The JSON bodies the HTTP API accepts.

Field names are snake_case, as in the rest of Eventide's JSON; the camelCase spellings that
ADK front ends send (``appName``, ``newMessage``, ...) are accepted too. Unknown keys are
ignored, so a front end sending extra fields keeps working.
"""

from __future__ import annotations

from typing import Any, cast

from pydantic import AliasChoices, BaseModel, ConfigDict, Field, field_validator

from eventide import types
from eventide._json import JsonObject, JsonValue
from eventide.types import snake_case_keys

__all__ = ["RunAgentRequest", "parse_create_session_body"]


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


_WRAPPER_KEYS = frozenset({"state", "session_id", "sessionId"})


def parse_create_session_body(body: JsonValue) -> tuple[dict[str, Any] | None, str | None]:
    """The initial state and the requested session id from a create-session body.

    Two shapes are accepted: ``{"state": {...}, "session_id": "..."}`` (ADK's request
    object; both keys optional, ``sessionId`` accepted) and a plain state dict. A body whose
    keys are all among ``state`` (a dict), ``session_id`` and ``sessionId`` is the wrapper
    form; any other object is the state itself.

    Raises:
        TypeError: the body is neither empty nor a JSON object.
    """
    if body is None:
        return None, None
    if not isinstance(body, dict):
        raise TypeError(f"expected a JSON object, got {type(body).__name__}")
    if body and body.keys() <= _WRAPPER_KEYS and isinstance(body.get("state"), dict | None):
        session_id = body.get("session_id", body.get("sessionId"))
        if session_id is not None and not isinstance(session_id, str):
            raise TypeError(f"session_id must be a string, got {type(session_id).__name__}")
        state = body.get("state")
        return (dict(state) if isinstance(state, dict) and state else None), session_id
    return (dict(body) if body else None), None
