"""A turn's Eventide events as AG-UI events, encoded with the official ``ag-ui-protocol``.

The mapping, in stream order:

- ``RUN_STARTED`` (with the protocol version), then ``STATE_SNAPSHOT`` of the session's
  state as the run starts (the client's state change included).
- Steps: each agent that produces events is a step (``STEP_STARTED`` / ``STEP_FINISHED``,
  named after the agent), closed when another agent takes over and before the run ends.
- Text: a model event's text is one message (its id is the event's id): streamed partial
  chunks are its ``TEXT_MESSAGE_CONTENT`` deltas between ``TEXT_MESSAGE_START`` and
  ``TEXT_MESSAGE_END``; thoughts are not shown.
- Tool calls: ``TOOL_CALL_START`` / ``TOOL_CALL_ARGS`` (the arguments' JSON) /
  ``TOOL_CALL_END`` under the model event's message id; the agent's own tools' results are
  ``TOOL_CALL_RESULT``. The runtime's confirmation and credential requests are not tool calls
  the client sees: they are interrupts.
- State: each committed ``state_delta`` is a ``STATE_DELTA`` JSON Patch (an ``add`` per key,
  which also replaces; ``temp:`` keys are never committed and never sent).
- The end: ``RUN_FINISHED`` with ``outcome`` ``interrupt`` when the run waits on
  confirmations, credentials or other long-running calls (each an ``Interrupt`` whose id is
  the call's id; ``STATE_SNAPSHOT`` and ``MESSAGES_SNAPSHOT`` go before it, as the spec asks),
  else ``success``, with ``pendingToolCallIds`` naming the client's own tools' calls. A
  failure (an exception, a model's error event) is ``RUN_ERROR``; nothing follows it.
- ``usage`` on ``RUN_FINISHED`` sums the model events' token counts.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from ag_ui.core import (
    PROTOCOL_VERSION,
    Interrupt,
    Message,
    MessagesSnapshotEvent,
)
from pydantic import TypeAdapter, ValidationError

from eventide.ag_ui.frames import content_frame, encoded, frame, run_error_frame
from eventide.events import Event
from eventide.protocol import REQUEST_CONFIRMATION_FUNCTION, SYNTHETIC_FUNCTIONS
from eventide.server.protocol_turns import event_text

__all__ = ["AgUiEvents"]

Emit = Callable[[bytes], None]
_MESSAGE: TypeAdapter[Any] = TypeAdapter(Message)


class AgUiEvents:
    """The AG-UI events of one run (a ``FrameWriter``).

    Args:
        thread_id: the run's thread (the session).
        run_id: the run's id, from the input.
        state: the session's state as the run starts.
        messages: the messages the client sent (the start of ``MESSAGES_SNAPSHOT``).
        client_tools: the names of the client's own tools.
        earlier_messages: messages the client sent before ``messages``, as JSON not yet
            validated (validated only for a ``MESSAGES_SNAPSHOT``).
    """

    def __init__(
        self,
        *,
        thread_id: str,
        run_id: str,
        state: dict[str, Any],
        messages: list[Message],
        client_tools: set[str],
        earlier_messages: list[object] | None = None,
    ) -> None:
        self.thread_id = thread_id
        self.run_id = run_id
        self.state = dict(state)
        self.messages = list(messages)
        self.earlier_messages = earlier_messages or []
        # This run's messages in their wire form, validated only for a MESSAGES_SNAPSHOT
        # (an interrupted run's end): most runs never need them as models.
        self.said: list[dict[str, Any]] = []
        self.client_tools = client_tools
        self.interrupts: list[Interrupt] = []
        self.pending: list[str] = []
        self.model_error: tuple[str, str] | None = None
        self._step: str | None = None
        self._text: str | None = None  # the open message's id
        self._streamed = ""
        self._usage: dict[str, int] = {}

    def start(self, emit: Emit) -> None:
        emit(
            frame(
                {
                    "type": "RUN_STARTED",
                    "threadId": self.thread_id,
                    "runId": self.run_id,
                    "protocolVersion": PROTOCOL_VERSION,
                }
            )
        )
        emit(frame({"type": "STATE_SNAPSHOT", "snapshot": self.state}))

    def event(self, event: Event, emit: Emit) -> None:
        if event.author != self._step:
            self._close_text(emit)
            if self._step is not None:
                emit(frame({"type": "STEP_FINISHED", "stepName": self._step}))
            self._step = event.author
            emit(frame({"type": "STEP_STARTED", "stepName": event.author}))
        text = event_text(event)
        if event.partial:
            if text:
                self._add_text(event.id, text, emit)
            return
        if text:
            if self._text == event.id:
                if text.startswith(self._streamed) and len(text) > len(self._streamed):
                    self._add_text(event.id, text[len(self._streamed) :], emit)
            else:
                self._add_text(event.id, text, emit)
        self._close_text(emit, final_text=text)
        self._calls(event, emit)
        for response in event.get_function_responses():
            call_id = response.id or ""
            content = json.dumps(response.response or {}, ensure_ascii=False)
            message_id = f"{event.id}-{call_id}"
            emit(
                frame(
                    {
                        "type": "TOOL_CALL_RESULT",
                        "messageId": message_id,
                        "toolCallId": call_id,
                        "content": content,
                    }
                )
            )
            self.said.append(
                {"id": message_id, "role": "tool", "toolCallId": call_id, "content": content}
            )
        delta = event.actions.state_delta
        if delta:
            operations = [
                {"op": "add", "path": "/" + _pointer(key), "value": value}
                for key, value in delta.items()
                if not key.startswith("temp:")
            ]
            if operations:
                self.state.update({k: v for k, v in delta.items() if not k.startswith("temp:")})
                emit(frame({"type": "STATE_DELTA", "delta": operations}))
        if event.usage_metadata is not None:
            counts = event.usage_metadata
            usage = self._usage
            usage["input"] = usage.get("input", 0) + (counts.prompt_token_count or 0)
            usage["output"] = usage.get("output", 0) + (counts.candidates_token_count or 0)
        if event.error_code:
            self.model_error = (event.error_code, event.error_message or event.error_code)

    def end(self, error: BaseException | None, emit: Emit) -> None:
        self._close_text(emit)
        if error is not None or self.model_error is not None:
            code, message = self.model_error or (
                type(error).__name__,
                f"The agent failed: {type(error).__name__}: {error}",
            )
            emit(run_error_frame(message, code))
            return
        if self._step is not None:
            emit(frame({"type": "STEP_FINISHED", "stepName": self._step}))
            self._step = None
        if self.interrupts:
            # The spec asks for the state and the messages before an interrupted run's end.
            emit(frame({"type": "STATE_SNAPSHOT", "snapshot": self.state}))
            try:
                earlier = [_MESSAGE.validate_python(m) for m in self.earlier_messages]
                said = [_MESSAGE.validate_python(m) for m in self.said]
            except ValidationError as exc:
                message = f"An earlier message of the request is not an AG-UI message: {exc}"
                emit(run_error_frame(message, "INVALID_MESSAGES"))
                return
            messages = [*earlier, *self.messages, *said]
            emit(encoded(MessagesSnapshotEvent(messages=messages)))
            interrupts = [i.model_dump(mode="json", by_alias=True) for i in self.interrupts]
            outcome: dict[str, Any] = {"type": "interrupt", "interrupts": interrupts}
        elif self.pending:
            outcome = {"type": "success", "pendingToolCallIds": self.pending}
        else:
            outcome = {"type": "success"}
        finished: dict[str, Any] = {
            "type": "RUN_FINISHED",
            "threadId": self.thread_id,
            "runId": self.run_id,
            "outcome": outcome,
        }
        if self._usage:
            tokens = self._usage
            total = tokens["input"] + tokens["output"]
            finished["usage"] = [
                {
                    "inputTokens": tokens["input"],
                    "outputTokens": tokens["output"],
                    "totalTokens": total,
                }
            ]
        emit(frame(finished))

    def _calls(self, event: Event, emit: Emit) -> None:
        calls = event.get_function_calls()
        if not calls:
            return
        waiting = event.long_running_tool_ids or set()
        shown: list[dict[str, Any]] = []
        for call in calls:
            call_id = call.id or ""
            name = call.name or ""
            args = call.args or {}
            if name in SYNTHETIC_FUNCTIONS:
                self.interrupts.append(_interrupt(call_id, name, args))
                continue
            arguments = json.dumps(args, ensure_ascii=False)
            emit(
                frame(
                    {
                        "type": "TOOL_CALL_START",
                        "toolCallId": call_id,
                        "toolCallName": name,
                        "parentMessageId": event.id,
                    }
                )
            )
            emit(frame({"type": "TOOL_CALL_ARGS", "toolCallId": call_id, "delta": arguments}))
            emit(frame({"type": "TOOL_CALL_END", "toolCallId": call_id}))
            shown.append(
                {
                    "id": call_id,
                    "type": "function",
                    "function": {"name": name, "arguments": arguments},
                }
            )
            if call_id in waiting:
                if name in self.client_tools:
                    self.pending.append(call_id)
                else:
                    self.interrupts.append(
                        Interrupt(
                            id=call_id,
                            reason="input_required",
                            message=f"The tool {name!r} waits for an answer.",
                            tool_call_id=call_id,
                        )
                    )
        if shown:
            self._assistant_message(event.id)["toolCalls"] = shown

    def _add_text(self, message_id: str, delta: str, emit: Emit) -> None:
        if self._text != message_id:
            self._close_text(emit)
            self._text = message_id
            self._streamed = ""
            emit(
                frame({"type": "TEXT_MESSAGE_START", "messageId": message_id, "role": "assistant"})
            )
        self._streamed += delta
        emit(content_frame(message_id, delta))

    def _close_text(self, emit: Emit, final_text: str | None = None) -> None:
        message_id = self._text
        if message_id is None:
            return
        emit(frame({"type": "TEXT_MESSAGE_END", "messageId": message_id}))
        self._assistant_message(message_id)["content"] = final_text or self._streamed
        self._text = None
        self._streamed = ""

    def _assistant_message(self, message_id: str) -> dict[str, Any]:
        known: dict[str, Any]
        for known in reversed(self.said):
            if known["id"] == message_id and known["role"] == "assistant":
                return known
        message: dict[str, Any] = {"id": message_id, "role": "assistant"}
        self.said.append(message)
        return message


def _interrupt(call_id: str, name: str, args: dict[str, Any]) -> Interrupt:
    if name == REQUEST_CONFIRMATION_FUNCTION:
        original: dict[str, Any] = args.get("originalFunctionCall") or {}
        confirmation: dict[str, Any] = args.get("toolConfirmation") or {}
        return Interrupt(
            id=call_id,
            reason="tool_call",
            message=confirmation.get("hint")
            or f"Confirm the call to {original.get('name', 'a tool')!r}?",
            tool_call_id=original.get("id"),
            response_schema={
                "type": "object",
                "properties": {"approved": {"type": "boolean"}, "payload": {}},
                "required": ["approved"],
            },
            metadata={"eventide": {"function_call": original}},
        )
    return Interrupt(
        id=call_id,
        reason="eventide:credential",
        message="The tool needs a credential: answer with the auth config, credential filled in.",
        tool_call_id=args.get("function_call_id"),
        metadata={"eventide": {"auth_config": args.get("auth_config")}},
    )


def _pointer(key: str) -> str:
    """``key`` as one JSON Pointer reference token (RFC 6901)."""
    return key.replace("~", "~0").replace("/", "~1")
