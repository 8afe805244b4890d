"""Turning a client's reply to an ``input-required`` task into the answers the paused
invocation waits for.

A paused Eventide invocation waits for function responses with the ids of its pending calls.
A client built for Eventide or google-adk sends those itself (data parts marked
``adk_type: function_response``); they are used as they are. Any other client (the A2A TCK,
the JavaScript SDK, a person typing) sends a message, which answers every pending call:

- a message that is one JSON object (a data part, or text holding JSON) is each call's
  response as it is;
- otherwise a confirmation (``eventide_request_confirmation``) is confirmed when the text is
  a yes (``yes``, ``y``, ``ok``, ``confirm``, ``approve``, ``true``...) and declined otherwise,
  and a long-running tool's response is ``{"result": <the text>}``;
- a credential request needs the auth config with the credential filled in: text alone
  cannot answer it (:class:`~eventide.errors.ProtocolInputError`).
"""

from __future__ import annotations

import json
from typing import Any, cast

from eventide import types
from eventide.errors import ProtocolInputError
from eventide.protocol import REQUEST_CONFIRMATION_FUNCTION, REQUEST_CREDENTIAL_FUNCTION

__all__ = ["answers_for"]

_YES = frozenset(
    {"yes", "y", "ok", "okay", "sure", "confirm", "confirmed", "approve", "approved", "true"}
)


def _as_object(text: str) -> dict[str, Any] | None:
    stripped = text.strip()
    if not stripped.startswith("{"):
        return None
    try:
        value = json.loads(stripped)
    except ValueError:
        return None
    return cast("dict[str, Any]", value) if isinstance(value, dict) else None


def answers_for(pending: list[types.FunctionCall], reply: types.Content) -> types.Content:
    """The user message that answers ``pending`` with ``reply``.

    Raises:
        ProtocolInputError: a credential request answered with text that is not an
            auth config.
    """
    parts = reply.parts or []
    if any(part.function_response is not None for part in parts):
        return reply  # the client answered the calls itself
    text = "\n".join(part.text for part in parts if part.text is not None and not part.thought)
    data = _as_object(text)
    answers: list[types.Part] = []
    for call in pending:
        if data is not None:
            response = dict(data)
        elif call.name == REQUEST_CREDENTIAL_FUNCTION:
            raise ProtocolInputError(
                "This task waits for a credential: answer with a data part (or JSON text) "
                "holding the requested auth_config with exchanged_auth_credential filled in."
            )
        elif call.name == REQUEST_CONFIRMATION_FUNCTION:
            response = {"confirmed": text.strip().lower().rstrip(".!") in _YES}
        else:
            response = {"result": text}
        answers.append(
            types.Part(
                function_response=types.FunctionResponse(
                    id=call.id, name=call.name, response=response
                )
            )
        )
    return types.Content(role="user", parts=answers)
