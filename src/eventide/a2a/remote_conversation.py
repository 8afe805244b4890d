"""What a ``RemoteA2aAgent`` sends: the conversation since its last turn, or the user's
answer to the remote's question.

The remote keeps its own session of the conversation (its context), so each turn sends only
what is new since the agent last answered: the user's messages as they are (text, files) and
other agents' answers as text (``[billing] said: ...``), which the remote's model reads as
context rather than as its own words. When the remote paused for input, the user's answer is
sent to the paused task instead: a function response to a call the remote made (an Eventide
or google-adk remote) travels as the function response; the answer to a plain question
(``eventide_a2a_input_required``) travels as text.

The task and context ids live in the agent's own committed events
(``custom_metadata["a2a:task_id"]`` and ``["a2a:context_id"]``, google-adk's keys).
"""

from __future__ import annotations

import json
import uuid
from dataclasses import dataclass

from a2a.types import a2a_pb2

from eventide import types
from eventide.a2a.part_conversion import to_a2a_parts
from eventide.events import Event
from eventide.protocol import TRANSFER_TO_AGENT, USER_AUTHOR

__all__ = [
    "CONTEXT_ID_KEY",
    "INPUT_REQUIRED_FUNCTION",
    "TASK_ID_KEY",
    "OutgoingMessage",
    "outgoing_message",
]

TASK_ID_KEY = "a2a:task_id"
CONTEXT_ID_KEY = "a2a:context_id"
INPUT_REQUIRED_FUNCTION = "eventide_a2a_input_required"
"""The call a ``RemoteA2aAgent`` pauses with when the remote asked a question in words."""


@dataclass(slots=True, kw_only=True)
class OutgoingMessage:
    """The message to send, or None when there is nothing new to send."""

    message: a2a_pb2.Message | None


def _metadata(event: Event, key: str) -> str | None:
    value = (event.custom_metadata or {}).get(key)
    return value if isinstance(value, str) else None


def _answer_parts(
    answers: list[types.FunctionResponse], calls: dict[str, types.FunctionCall]
) -> list[a2a_pb2.Part]:
    parts: list[a2a_pb2.Part] = []
    for answer in answers:
        call = calls[answer.id or ""]
        if call.name == INPUT_REQUIRED_FUNCTION:
            response = answer.response or {}
            text = response.get("result", response.get("answer"))
            parts.append(a2a_pb2.Part(text=text if isinstance(text, str) else json.dumps(response)))
        else:  # marked adk_type: function_response, as the remote's own call expects
            parts.extend(to_a2a_parts([types.Part(function_response=answer)]))
    return parts


def _as_context(event: Event) -> list[types.Part]:
    """Another agent's event, as text the remote reads as context (transfers, which only
    route the conversation here, are left out)."""
    parts: list[types.Part] = []
    for part in (event.content.parts or []) if event.content else []:
        routing = part.function_call or part.function_response
        if part.thought or (routing is not None and routing.name == TRANSFER_TO_AGENT):
            continue
        if part.text:
            parts.append(types.Part(text=f"[{event.author}] said: {part.text}"))
        elif part.function_call is not None:
            call = part.function_call
            args = json.dumps(call.args or {}, ensure_ascii=False, default=str)
            parts.append(types.Part(text=f"[{event.author}] called {call.name}({args})"))
        elif part.function_response is not None:
            answer = part.function_response
            body = json.dumps(answer.response or {}, ensure_ascii=False, default=str)
            parts.append(types.Part(text=f"[{event.author}] {answer.name} returned {body}"))
    return parts


def outgoing_message(agent_name: str, events: list[Event]) -> OutgoingMessage:
    """What ``agent_name`` sends next, read from the session's ``events``."""
    last_turn = -1
    for index in range(len(events) - 1, -1, -1):
        if events[index].author == agent_name and not events[index].partial:
            last_turn = index
            break
    previous = events[last_turn] if last_turn >= 0 else None
    context_id = _metadata(previous, CONTEXT_ID_KEY) if previous is not None else None
    new_events = events[last_turn + 1 :]
    message_id = uuid.uuid4().hex

    # The user's answer to a question the remote paused on.
    if previous is not None and previous.long_running_tool_ids:
        calls = {
            call.id: call
            for call in previous.get_function_calls()
            if call.id in previous.long_running_tool_ids
        }
        answers = [
            response
            for event in new_events
            if event.author == USER_AUTHOR
            for response in event.get_function_responses()
            if response.id in calls
        ]
        if answers:
            return OutgoingMessage(
                message=a2a_pb2.Message(
                    message_id=message_id,
                    role=a2a_pb2.ROLE_USER,
                    parts=_answer_parts(answers, {k: v for k, v in calls.items() if k}),
                    task_id=_metadata(previous, TASK_ID_KEY) or "",
                    context_id=context_id or "",
                )
            )

    parts: list[types.Part] = []
    for event in new_events:
        if event.partial or event.content is None or not event.content.parts:
            continue
        if event.author == USER_AUTHOR:
            parts.extend(
                part
                for part in event.content.parts
                if part.function_response is None and not part.thought
            )
        else:
            parts.extend(_as_context(event))
    converted = to_a2a_parts(parts)
    if not converted:
        return OutgoingMessage(message=None)
    return OutgoingMessage(
        message=a2a_pb2.Message(
            message_id=message_id,
            role=a2a_pb2.ROLE_USER,
            parts=converted,
            context_id=context_id or "",
        )
    )
