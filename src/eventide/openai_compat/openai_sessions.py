"""Which session an OpenAI-style request continues, and its conversation imported into a new
one.

- Chat Completions: the session named by the ``X-Eventide-Session-Id`` header or
  ``metadata.session_id``. Without one, each request gets a new session. A session that does
  not exist yet is created with that id. Either way a new session is given the request's
  earlier messages; an existing one already holds them, so only the new input is taken.
- Responses: ``previous_response_id`` names the response's session (the id encodes it);
  ``conversation`` names a session like the header above; neither starts a new session. The
  input items are the new ones when the session exists.
- The user is the ``X-Eventide-User-Id`` header, ``metadata.user_id``, the ``user`` field,
  or ``"openai"``.

Answers to tool calls get the call's name from the request or the session's log; an answer
to a call neither holds is refused (400).
"""

from __future__ import annotations

import base64
import binascii
from typing import Any

from pydantic_core import from_json, to_json

from eventide import types
from eventide._ids import new_id
from eventide.events import Event
from eventide.openai_compat.conversation_items import ConversationItem
from eventide.openai_compat.openai_errors import openai_error
from eventide.openai_compat.request_fields import as_list
from eventide.protocol import USER_AUTHOR
from eventide.runner import Runner
from eventide.sessions.session import Session

__all__ = [
    "DEFAULT_USER",
    "decode_response_id",
    "encode_response_id",
    "import_history",
    "name_answers",
    "request_user",
]

DEFAULT_USER = "openai"


def encode_response_id(user_id: str, session_id: str) -> str:
    """A new response id that names its session: ``resp_<base64url of [user, session]>_<n>``."""
    token = base64.urlsafe_b64encode(to_json([user_id, session_id])).decode()
    return f"resp_{token.rstrip('=')}_{new_id().replace('-', '')}"


def decode_response_id(response_id: str) -> tuple[str, str] | None:
    """The (user, session) a response id names; None when it is not one of this server's."""
    if not response_id.startswith("resp_"):
        return None
    token, _, _ = response_id[5:].rpartition("_")
    try:
        decoded = from_json(base64.urlsafe_b64decode(token + "=" * (-len(token) % 4)))
    except (binascii.Error, ValueError):
        return None
    named = as_list(decoded)
    if named is None or len(named) != 2 or not all(isinstance(part, str) for part in named):
        return None
    return str(named[0]), str(named[1])


async def import_history(runner: Runner, session: Session, items: list[ConversationItem]) -> None:
    """Append the conversation so far to ``session``: user messages as the user's events,
    assistant messages and tool results as the root agent's (each user message starts an
    invocation of its own, as a live turn would)."""
    service = runner.session_service
    agent = runner.agent.name
    invocation = new_id()
    for item in items:
        if item.role == "system" or not item.parts:
            continue
        if item.role == "user":
            invocation = new_id()
        author = USER_AUTHOR if item.role == "user" else agent
        role = "model" if item.role == "assistant" else "user"
        event = Event(
            invocation_id=invocation,
            author=author,
            content=types.Content(role=role, parts=item.parts),
        )
        await service.append_event(session, event)


def name_answers(
    message: types.Content | None, history: list[ConversationItem], session: Session
) -> None:
    """Give each tool result in ``message`` the name of the call it answers (from the
    request's items or the session's log).

    Raises:
        ProtocolInputError: a result answers a call that neither holds.
    """
    if message is None or not message.parts:
        return
    answers = [p.function_response for p in message.parts if p.function_response is not None]
    unnamed = {a.id: a for a in answers if not a.name and a.id}
    if not unnamed:
        return
    for item in history:
        for part in item.parts:
            call = part.function_call
            if call is not None and call.id in unnamed and call.name:
                unnamed.pop(call.id).name = call.name
    for event in reversed(session.events):
        if not unnamed:
            break
        for call in event.get_function_calls():
            if call.id in unnamed and call.name:
                unnamed.pop(call.id).name = call.name
    if unnamed:
        missing = ", ".join(sorted(str(call_id) for call_id in unnamed))
        raise openai_error(
            400,
            f"The tool result(s) for call id(s) {missing} answer no call of this conversation: "
            "send each result with the id of a call the assistant made.",
            param="tool_call_id",
        )


def request_user(headers: Any, metadata: dict[str, Any] | None, user: Any) -> str:
    """The user id a request names (see the module docstring)."""
    header = headers.get("x-eventide-user-id")
    if header:
        return str(header)
    if metadata and isinstance(metadata.get("user_id"), str) and metadata["user_id"]:
        return str(metadata["user_id"])
    if isinstance(user, str) and user:
        return user
    return DEFAULT_USER
