"""Building the model's conversation (``LlmRequest.contents``) from the session's events.

Rules:
- Only events of this agent's branch and its ancestors' are included (a parallel sibling's
  work stays invisible), and only events with content.
- The user's messages keep role 'user'; this agent's own events keep their roles; events of
  other agents are presented as context, in a user-role message ("For context: [name] said:
  ...") so the model does not mistake them for its own words.
- Every function call is immediately followed by its response; when a call was answered more
  than once (a long-running tool's update, a confirmed re-run), the latest answer is used.
- Requests for user input the runtime synthesized (confirmations, credentials) are left out.
- ``include_contents='none'`` keeps only the current turn: from the last user message on.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from eventide import types
from eventide.events import Event

__all__ = ["SYNTHETIC_FUNCTIONS", "build_contents"]

REQUEST_CONFIRMATION_FUNCTION = "eventide_request_confirmation"
REQUEST_CREDENTIAL_FUNCTION = "eventide_request_credential"
SYNTHETIC_FUNCTIONS = frozenset({REQUEST_CONFIRMATION_FUNCTION, REQUEST_CREDENTIAL_FUNCTION})


def build_contents(
    events: Sequence[Event],
    *,
    agent_name: str,
    branch: str | None,
    current_turn_only: bool = False,
) -> list[types.Content]:
    """The conversation for ``agent_name``'s next model call."""
    visible = [e for e in events if e.content is not None and _on_branch(e.branch, branch)]
    if current_turn_only:
        start = 0
        for i in range(len(visible) - 1, -1, -1):
            if visible[i].author == "user":
                start = i
                break
        visible = visible[start:]

    # The latest response for each call id, and the ids whose call is in the history:
    # those responses are placed right after their call instead of where they arrived.
    latest: dict[str, types.Part] = {}
    called: set[str] = set()
    for event in visible:
        for part in event.content.parts or () if event.content else ():
            if part.function_response is not None and part.function_response.id:
                latest[part.function_response.id] = part
            elif part.function_call is not None and part.function_call.id:
                called.add(part.function_call.id)

    contents: list[types.Content] = []
    for event in visible:
        parts = [p for p in (event.content.parts or ()) if _keep_in_place(p, called)]  # type: ignore[union-attr]
        if not parts:
            continue
        calls = [p.function_call for p in parts if p.function_call is not None]
        answers = [latest[c.id] for c in calls if c.id and c.id in latest]
        if event.author not in ("user", agent_name):
            contents.append(_as_context(event.author, parts))
            if answers:
                contents.append(_as_context(event.author, answers))
            continue
        if event.author == "user" or any(p.function_response for p in parts):
            role = "user"
        else:
            role = "model"
        contents.append(types.Content(role=role, parts=parts))
        if answers:
            contents.append(types.Content(role="user", parts=answers))
    return contents


def _keep_in_place(part: types.Part, called: set[str]) -> bool:
    if part.function_call is not None:
        return part.function_call.name not in SYNTHETIC_FUNCTIONS
    response = part.function_response
    if response is not None:
        if response.name in SYNTHETIC_FUNCTIONS:
            return False
        return not (response.id and response.id in called)
    return True


def _on_branch(event_branch: str | None, branch: str | None) -> bool:
    """Whether an event of ``event_branch`` is visible from ``branch``."""
    if not event_branch or event_branch == branch:
        return True
    if branch is None:
        return False
    return branch.startswith(event_branch + ".")


def _as_context(author: str, parts: Sequence[types.Part]) -> types.Content:
    lines: list[types.Part] = [types.Part(text="For context:")]
    for part in parts:
        if part.thought:
            continue
        if part.text:
            lines.append(types.Part(text=f"[{author}] said: {part.text}"))
        elif part.function_call is not None:
            call = part.function_call
            lines.append(
                types.Part(
                    text=f"[{author}] called tool `{call.name}` with parameters: "
                    f"{json.dumps(call.args or {}, default=str)}"
                )
            )
        elif part.function_response is not None:
            response = part.function_response
            lines.append(
                types.Part(
                    text=f"[{author}] `{response.name}` tool returned result: "
                    f"{json.dumps(response.response or {}, default=str)}"
                )
            )
        else:
            lines.append(part)
    return types.Content(role="user", parts=lines)
