"""An AG-UI ``RunAgentInput`` read as one Eventide turn of the thread's session.

- The thread is the session (``threadId`` is its id; created on first use). The user is the
  ``X-Eventide-User-Id`` header, ``forwardedProps.userId`` (or ``user_id``), or ``"ag-ui"``.
- The client sends the whole conversation every run; the new input is what follows the
  last assistant message: user messages (text, images, files) and tool messages answering
  the client's own tools' calls (``error`` set: the result is ``{"error": ...}``).
- ``tools`` are the client's tools (``RunConfig.client_tools``): a call to one ends the run
  with ``outcome.pendingToolCallIds``, and the next run's tool message answers it.
- ``resume`` answers the interrupts the previous run ended with (a confirmation, a credential,
  any other long-running call, such as a workflow's request for input): each entry becomes the
  ``FunctionResponse`` to that call. A confirmation's payload is ``{"approved": bool}``
  (``cancelled`` declines); any other payload is the call's result. An interrupt left open,
  or an entry naming none, is the protocol's ``RUN_ERROR``.
- ``state``, a JSON object, is applied as a committed state change: the keys whose value
  differs from the session's are committed with the turn (``temp:`` keys are not stored;
  keys the client leaves out are kept). A run with no new input, no resume and no state
  change runs nothing.
- ``context`` and ``forwardedProps`` other than the user are not used.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, cast

from ag_ui.core import (
    AssistantMessage,
    Message,
    ResumeEntry,
    RunAgentInput,
    ToolMessage,
    UserMessage,
)

from eventide import types
from eventide.errors import ProtocolInputError
from eventide.protocol import (
    REQUEST_CONFIRMATION_FUNCTION,
    REQUEST_CREDENTIAL_FUNCTION,
    USER_AUTHOR,
)
from eventide.sessions.session import Session

__all__ = ["DEFAULT_USER", "Interrupted", "TurnPlan", "pending_calls", "plan_turn"]

DEFAULT_USER = "ag-ui"


def _input_error(code: str, message: str) -> ProtocolInputError:
    """A run input the protocol says to answer with ``RUN_ERROR`` (``code`` says which)."""
    return ProtocolInputError(message, code=code)


@dataclass(slots=True, frozen=True)
class Interrupted:
    """A call the session's latest invocation waits on, that is no client tool's."""

    call_id: str
    name: str
    args: dict[str, Any]


@dataclass(slots=True)
class TurnPlan:
    """What the run does: the message to commit, the state to set, the client's tools."""

    new_message: types.Content | None
    state_delta: dict[str, Any]
    client_tools: list[types.FunctionDeclaration] = field(default_factory=list)

    @property
    def runs_agent(self) -> bool:
        """Whether the agent runs (there is a message); else only the state is committed."""
        return self.new_message is not None


def plan_turn(run: RunAgentInput, session: Session) -> TurnPlan:
    """Read ``run`` against the thread's ``session``.

    Raises:
        ProtocolInputError: the input breaks a rule of the protocol (see the module docstring).
    """
    tools = [
        types.FunctionDeclaration(
            name=tool.name,
            description=tool.description,
            parameters_json_schema=cast("dict[str, Any]", tool.parameters)
            if isinstance(tool.parameters, dict)
            else None,
        )
        for tool in run.tools or []
    ]
    client_names = {tool.name for tool in tools}
    parts = _new_parts(run.messages, session)
    answered = {p.function_response.id for p in parts if p.function_response is not None}
    waiting = [
        call
        for call in pending_calls(session)
        if call.name not in client_names and call.call_id not in answered
    ]
    parts.extend(_resume_parts(run.resume or [], waiting, session))
    return TurnPlan(
        new_message=types.Content(role="user", parts=parts) if parts else None,
        state_delta=_state_change(run.state, session),
        client_tools=tools,
    )


def pending_calls(session: Session) -> list[Interrupted]:
    """The long-running calls of the session's latest invocation still without an answer."""
    events = session.events
    latest = next((e.invocation_id for e in reversed(events) if e.author != USER_AUTHOR), None)
    if latest is None:
        return []
    calls: dict[str, Interrupted] = {}
    answered: set[str] = set()
    for event in reversed(events):
        if event.invocation_id != latest and event.author != USER_AUTHOR:
            break
        for response in event.get_function_responses():
            answered.add(response.id or "")
        waiting = event.long_running_tool_ids or set()
        for call in event.get_function_calls():
            if call.id in waiting and call.id not in answered:
                calls[call.id] = Interrupted(call.id, call.name or "", dict(call.args or {}))
    return list(reversed(calls.values()))


def _new_parts(messages: list[Message], session: Session) -> list[types.Part]:
    last_assistant = -1
    for index, message in enumerate(messages):
        if isinstance(message, AssistantMessage):
            last_assistant = index
    names: dict[str, str] | None = None  # read from the log only for a tool message
    parts: list[types.Part] = []
    for message in messages[last_assistant + 1 :]:
        if isinstance(message, UserMessage):
            parts.extend(_user_parts(message))
        elif isinstance(message, ToolMessage):
            if names is None:
                names = _call_names(messages, session)
            name = names.get(message.tool_call_id)
            if name is None:
                raise _input_error(
                    "UNKNOWN_TOOL_CALL",
                    f"Tool message {message.id!r} answers call {message.tool_call_id!r}, which "
                    "no assistant message of this thread made: answer a call of the last run.",
                )
            parts.append(_answer(message.tool_call_id, name, message))
    return parts


def _user_parts(message: UserMessage) -> list[types.Part]:
    if isinstance(message.content, str):
        return [types.Part(text=message.content)] if message.content else []
    parts: list[types.Part] = []
    for item in message.content:
        data = item.model_dump(by_alias=False)
        kind = data.get("type")
        if kind == "text":
            parts.append(types.Part(text=str(data.get("text", ""))))
            continue
        source: dict[str, Any] = data.get("source") or {}
        mime_type: str = (
            source.get("mime_type") or data.get("mime_type") or "application/octet-stream"
        )
        if source.get("type") == "data" and source.get("value"):
            blob = types.Blob.model_validate({"mime_type": mime_type, "data": source["value"]})
            parts.append(types.Part(inline_data=blob))
        elif source.get("type") == "url" and source.get("value"):
            parts.append(
                types.Part(file_data=types.FileData(file_uri=source["value"], mime_type=mime_type))
            )
        else:
            raise _input_error(
                "UNSUPPORTED_CONTENT",
                f"User message {message.id!r} has a {kind!r} part this server cannot read: "
                "send text, or media as data or a URL.",
            )
    return parts


def _answer(call_id: str, name: str, message: ToolMessage) -> types.Part:
    content = message.content
    text = (
        content
        if isinstance(content, str)
        else "".join(getattr(part, "text", "") for part in content)
    )
    try:
        value: object = json.loads(text)
    except ValueError:
        value = text
    response = cast("dict[str, Any]", value) if isinstance(value, dict) else {"result": value}
    if message.error:
        response = {**response, "error": message.error}
    return types.Part(
        function_response=types.FunctionResponse(id=call_id, name=name, response=response)
    )


def _call_names(messages: list[Message], session: Session) -> dict[str, str]:
    names: dict[str, str] = {}
    for event in session.events[-50:]:
        for call in event.get_function_calls():
            if call.id and call.name:
                names[call.id] = call.name
    for message in messages:
        if isinstance(message, AssistantMessage):
            for tool_call in message.tool_calls or []:
                names[tool_call.id] = tool_call.function.name
    return names


def _resume_parts(
    entries: list[ResumeEntry], waiting: list[Interrupted], session: Session
) -> list[types.Part]:
    by_id = {call.call_id: call for call in waiting}
    parts: list[types.Part] = []
    for entry in entries:
        call = by_id.pop(entry.interrupt_id, None)
        if call is None:
            if entry.interrupt_id in _answered_ids(session):
                continue  # a replayed resume: already answered, nothing to do again
            raise _input_error(
                "UNKNOWN_INTERRUPT",
                f"resume names interrupt {entry.interrupt_id!r}, which is not open on this "
                "thread: answer the interrupts the last run finished with.",
            )
        parts.append(
            types.Part(
                function_response=types.FunctionResponse(
                    id=call.call_id, name=call.name, response=_resume_response(entry, call)
                )
            )
        )
    if by_id:
        open_ids = ", ".join(sorted(by_id))
        raise _input_error(
            "PENDING_INTERRUPTS",
            f"The thread waits on interrupt(s) {open_ids}: send a resume entry for each "
            "(status 'resolved' with the answer, or 'cancelled').",
        )
    return parts


def _resume_response(entry: ResumeEntry, call: Interrupted) -> dict[str, Any]:
    payload = entry.payload
    if call.name == REQUEST_CONFIRMATION_FUNCTION:
        if entry.status == "cancelled":
            return {"confirmed": False}
        answer_data = cast("dict[str, Any]", payload) if isinstance(payload, dict) else {}
        if not isinstance(answer_data.get("approved"), bool):
            raise _input_error(
                "INVALID_RESUME_PAYLOAD",
                f'The confirmation {call.call_id!r} needs a payload {{"approved": true|false}}.',
            )
        return {"confirmed": answer_data["approved"], "payload": answer_data.get("payload")}
    if entry.status == "cancelled":
        if call.name == REQUEST_CREDENTIAL_FUNCTION:
            raise _input_error(
                "CREDENTIAL_REQUIRED",
                f"The credential request {call.call_id!r} cannot be cancelled: the tool needs it.",
            )
        return {"cancelled": True}
    if isinstance(payload, dict):
        return cast("dict[str, Any]", payload)
    return {"result": payload}


def _answered_ids(session: Session) -> set[str]:
    ids: set[str] = set()
    for event in session.events[-50:]:
        for response in event.get_function_responses():
            if response.id:
                ids.add(response.id)
    return ids


def _state_change(state: Any, session: Session) -> dict[str, Any]:
    if state is None:
        return {}
    if not isinstance(state, dict):
        raise _input_error(
            "INVALID_STATE",
            f"state must be a JSON object (Eventide state is keyed), not {type(state).__name__}.",
        )
    current = session.state
    return {
        key: value
        for key, value in cast("dict[str, Any]", state).items()
        if not key.startswith("temp:") and current.get(key, _MISSING) != value
    }


_MISSING = object()
