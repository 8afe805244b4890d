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
    AssistantMessage,
    BaseEvent,
    FunctionCall,
    Interrupt,
    Message,
    MessagesSnapshotEvent,
    RunErrorEvent,
    RunFinishedEvent,
    RunFinishedInterruptOutcome,
    RunFinishedSuccessOutcome,
    RunStartedEvent,
    StateDeltaEvent,
    StateSnapshotEvent,
    StepFinishedEvent,
    StepStartedEvent,
    TextMessageEndEvent,
    TextMessageStartEvent,
    TokenUsage,
    ToolCall,
    ToolCallArgsEvent,
    ToolCallEndEvent,
    ToolCallResultEvent,
    ToolCallStartEvent,
    ToolMessage,
)
from ag_ui.encoder import EventEncoder
from pydantic import TypeAdapter, ValidationError

from eventide.events import Event
from eventide.protocol import REQUEST_CONFIRMATION_FUNCTION, SYNTHETIC_FUNCTIONS

__all__ = ["AgUiEvents", "content_frame"]

Emit = Callable[[bytes], None]
_ENCODER = EventEncoder()
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
        self.client_tools = client_tools
        self.interrupts: list[Interrupt] = []
        self.pending: list[str] = []
        self.model_error: tuple[str, str] | None = None
        self._step: str | None = None
        self._text: str | None = None  # the open message's id
        self._streamed = ""
        self._usage: dict[str, int] = {}

    def start(self, emit: Emit) -> None:
        _send(
            emit,
            RunStartedEvent(
                thread_id=self.thread_id, run_id=self.run_id, protocol_version=PROTOCOL_VERSION
            ),
        )
        _send(emit, StateSnapshotEvent(snapshot=self.state))

    def event(self, event: Event, emit: Emit) -> None:
        if event.author != self._step:
            self._close_text(emit)
            if self._step is not None:
                _send(emit, StepFinishedEvent(step_name=self._step))
            self._step = event.author
            _send(emit, StepStartedEvent(step_name=event.author))
        text = event.text
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
            _send(
                emit,
                ToolCallResultEvent(message_id=message_id, tool_call_id=call_id, content=content),
            )
            self.messages.append(ToolMessage(id=message_id, tool_call_id=call_id, content=content))
        delta = event.actions.state_delta
        if delta:
            operations = [
                {"op": "add", "path": "/" + _pointer(key), "value": value}
                for key, value in delta.items()
                if not key.startswith("temp:")
            ]
            if operations:
                self.state.update({k: v for k, v in delta.items() if not k.startswith("temp:")})
                _send(emit, StateDeltaEvent.model_validate({"delta": operations}))
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
            _send(emit, RunErrorEvent(message=message, code=code))
            return
        if self._step is not None:
            _send(emit, StepFinishedEvent(step_name=self._step))
            self._step = None
        usage = None
        if self._usage:
            tokens = self._usage
            usage = [
                TokenUsage(
                    input_tokens=tokens["input"],
                    output_tokens=tokens["output"],
                    total_tokens=tokens["input"] + tokens["output"],
                )
            ]
        if self.interrupts:
            _send(emit, StateSnapshotEvent(snapshot=self.state))
            try:
                earlier = [_MESSAGE.validate_python(m) for m in self.earlier_messages]
            except ValidationError as exc:
                message = f"An earlier message of the request is not an AG-UI message: {exc}"
                _send(emit, RunErrorEvent(message=message, code="INVALID_MESSAGES"))
                return
            _send(emit, MessagesSnapshotEvent(messages=[*earlier, *self.messages]))
            outcome: Any = RunFinishedInterruptOutcome(interrupts=self.interrupts)
        else:
            outcome = RunFinishedSuccessOutcome(pending_tool_call_ids=self.pending or None)
        _send(
            emit,
            RunFinishedEvent(
                thread_id=self.thread_id, run_id=self.run_id, outcome=outcome, usage=usage
            ),
        )

    def _calls(self, event: Event, emit: Emit) -> None:
        calls = event.get_function_calls()
        if not calls:
            return
        waiting = event.long_running_tool_ids or set()
        shown: list[ToolCall] = []
        for call in calls:
            call_id = call.id or ""
            name = call.name or ""
            args = call.args or {}
            if name in SYNTHETIC_FUNCTIONS:
                self.interrupts.append(_interrupt(call_id, name, args))
                continue
            arguments = json.dumps(args, ensure_ascii=False)
            _send(
                emit,
                ToolCallStartEvent(
                    tool_call_id=call_id, tool_call_name=name, parent_message_id=event.id
                ),
            )
            _send(emit, ToolCallArgsEvent(tool_call_id=call_id, delta=arguments))
            _send(emit, ToolCallEndEvent(tool_call_id=call_id))
            shown.append(
                ToolCall(id=call_id, function=FunctionCall(name=name, arguments=arguments))
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
            self._assistant_message(event.id).tool_calls = shown

    def _add_text(self, message_id: str, delta: str, emit: Emit) -> None:
        if self._text != message_id:
            self._close_text(emit)
            self._text = message_id
            self._streamed = ""
            _send(emit, TextMessageStartEvent(message_id=message_id, role="assistant"))
        self._streamed += delta
        emit(content_frame(message_id, delta))

    def _close_text(self, emit: Emit, final_text: str | None = None) -> None:
        message_id = self._text
        if message_id is None:
            return
        _send(emit, TextMessageEndEvent(message_id=message_id))
        self._assistant_message(message_id).content = final_text or self._streamed
        self._text = None
        self._streamed = ""

    def _assistant_message(self, message_id: str) -> AssistantMessage:
        for message in reversed(self.messages):
            if isinstance(message, AssistantMessage) and message.id == message_id:
                return message
        message = AssistantMessage(id=message_id)
        self.messages.append(message)
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


def content_frame(message_id: str, delta: str) -> bytes:
    """The ``TEXT_MESSAGE_CONTENT`` frame, byte for byte what the package's encoder writes
    for ``TextMessageContentEvent(message_id=..., delta=...)`` (a test holds it to that).

    Written directly because it is most of a streamed turn's frames, and the package's
    models serialize through a Python-level wrap serializer at about twice the cost.
    """
    return b"".join(
        (
            b'data: {"type":"TEXT_MESSAGE_CONTENT","messageId":',
            _JSON(message_id).encode(),
            b',"delta":',
            _JSON(delta).encode(),
            b"}\n\n",
        )
    )


_JSON = json.JSONEncoder(ensure_ascii=False).encode


def _pointer(key: str) -> str:
    """``key`` as one JSON Pointer reference token (RFC 6901)."""
    return key.replace("~", "~0").replace("/", "~1")


def _send(emit: Emit, event: BaseEvent) -> None:
    emit(_ENCODER.encode(event).encode())
