"""How A2A ids map onto Eventide's: a context is a session, a task is an invocation.

- A **context id** is the id of a session. A client may name one (it becomes the session's
  id) or leave it out (the server makes one).
- The session belongs to the user ``A2A_USER_<context id>`` unless the request carries a
  user the server authenticated, as in google-adk: a caller's name that nobody checked is
  never used to reach another user's state.
- A **task id** is the id of the invocation that started the task, made so that it also
  names its context: ``a2a-<random hex>:<context id, percent-encoded>``. Any server process
  sharing the session database finds a task's session from its id alone, with no table of
  its own.
- Every event committed for a task carries ``custom_metadata["eventide_a2a_task"] = task
  id`` (put there through ``RunConfig.custom_metadata``), so a task that goes on over several
  invocations (an app that is not resumable answers a paused call in a new one) is still one
  task in the log.
"""

from __future__ import annotations

import uuid
from urllib.parse import quote, unquote

from a2a.server.context import ServerCallContext

__all__ = [
    "ERROR_KEY",
    "MESSAGE_KEY",
    "STATE_KEY",
    "TASK_KEY",
    "context_of_task",
    "new_context_id",
    "new_task_id",
    "user_for_context",
]

TASK_KEY = "eventide_a2a_task"
"""``custom_metadata`` key: the A2A task an event belongs to."""

MESSAGE_KEY = "eventide_a2a_message"
"""``custom_metadata`` key: the client's message id of the message a run answers."""

STATE_KEY = "eventide_a2a_state"
"""``custom_metadata`` key on the marker that ends a task: ``completed``, ``failed`` or
``canceled`` (a task paused for input needs no marker: its pending calls say so)."""

ERROR_KEY = "eventide_a2a_error"
"""``custom_metadata`` key on a ``failed`` marker: what went wrong."""

_TASK_PREFIX = "a2a-"
_USER_PREFIX = "A2A_USER_"


def new_context_id() -> str:
    """A fresh context (session) id."""
    return uuid.uuid4().hex


def new_task_id(context_id: str) -> str:
    """A fresh task id that names ``context_id``."""
    return f"{_TASK_PREFIX}{uuid.uuid4().hex}:{quote(context_id, safe='')}"


def context_of_task(task_id: str) -> str | None:
    """The context id a task id names, or None when ``task_id`` is not one of ours."""
    if not task_id.startswith(_TASK_PREFIX):
        return None
    head, sep, encoded = task_id.partition(":")
    if not sep or not encoded or len(head) <= len(_TASK_PREFIX):
        return None
    return unquote(encoded)


def user_for_context(context_id: str, call: ServerCallContext | None) -> str:
    """The Eventide user a context's session belongs to (see the module docstring)."""
    user = call.user if call is not None else None
    if user is not None and user.is_authenticated and user.user_name:
        return user.user_name
    return f"{_USER_PREFIX}{context_id}"
