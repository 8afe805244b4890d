"""A turn's events read as what the OpenAI APIs show: assistant text, tool calls, tool
results, usage, a failure.

- Text: each model event with text is one assistant message (its id is the event's id);
  its partial chunks, when streaming, are the message's deltas. Thoughts are not shown.
- Calls the client must answer are always shown: calls to the client's own tools (the
  request's ``tools``) and the runtime's confirmation and credential requests
  (``eventide_request_confirmation``, ``eventide_request_credential``; answered with a tool
  result holding ``{"confirmed": true}`` or the credential).
- Calls the agent makes to its own tools, and their results, are shown only when asked
  (``tool_calls="shown"``): the caller sees them but has nothing to do.
- Usage is the sum of the model events' ``usage_metadata``; None when no model reported any.
- A model event with an ``error_code`` fails the turn.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Literal

from eventide.events import Event
from eventide.protocol import SYNTHETIC_FUNCTIONS
from eventide.server.protocol_turns import event_text

__all__ = ["ToolCall", "ToolResult", "TurnOutput", "TurnText", "Usage"]


@dataclass(slots=True)
class TurnText:
    """An assistant message; ``done`` once its complete event arrived."""

    id: str
    text: str = ""
    done: bool = False


@dataclass(slots=True)
class ToolCall:
    """A tool call; ``for_client`` when the caller must run it and answer."""

    call_id: str
    name: str
    arguments: str
    for_client: bool


@dataclass(slots=True)
class ToolResult:
    """What one of the agent's own tools returned (shown only when tool calls are)."""

    call_id: str
    name: str
    output: str


Item = TurnText | ToolCall | ToolResult
Change = tuple[Literal["text_start", "text_delta", "text_done", "call", "result"], Item, str]
"""What one event changed: a message opened, text added (the third element), a message
complete; a call or a result shown."""


@dataclass(slots=True)
class Usage:
    """Token counts of the turn's model calls."""

    input_tokens: int = 0
    output_tokens: int = 0
    cached_tokens: int = 0
    reasoning_tokens: int = 0

    @property
    def total_tokens(self) -> int:
        """Input plus output."""
        return self.input_tokens + self.output_tokens


class TurnOutput:
    """Reads a turn's events in order (:meth:`read`) into :attr:`items`.

    Args:
        show_tool_calls: also show the agent's own tool calls and their results.
        client_tools: the names of the tools the client declared for the turn.
    """

    def __init__(self, *, show_tool_calls: bool, client_tools: set[str]) -> None:
        self.show_tool_calls = show_tool_calls
        self.client_tools = client_tools
        self.items: list[Item] = []
        self.usage: Usage | None = None
        self.error: tuple[str, str] | None = None
        self._open: TurnText | None = None

    @property
    def client_calls(self) -> list[ToolCall]:
        """The calls the client must answer (the turn waits for them)."""
        return [i for i in self.items if isinstance(i, ToolCall) and i.for_client]

    @property
    def text(self) -> str:
        """All the turn's assistant text, the messages separated by a blank line."""
        return "\n\n".join(i.text for i in self.items if isinstance(i, TurnText) and i.text)

    def read(self, event: Event) -> list[Change]:
        """Take in the next event; what it changed, in order."""
        changes: list[Change] = []
        text = event_text(event)
        if event.partial:
            if text:
                self._add_text(event.id, text, changes)
            return changes
        if text:
            message = self._open
            if message is not None and message.id == event.id:
                streamed = message.text
                if text.startswith(streamed) and len(text) > len(streamed):
                    self._add_text(event.id, text[len(streamed) :], changes)
            else:
                self._add_text(event.id, text, changes)
        self._close_text(changes)
        if event.usage_metadata is not None:
            self._add_usage(event)
        if event.error_code:
            self.error = (event.error_code, event.error_message or event.error_code)
        waiting = event.long_running_tool_ids or set()
        for call in event.get_function_calls():
            name = call.name or ""
            for_client = name in SYNTHETIC_FUNCTIONS or (
                name in self.client_tools and call.id in waiting
            )
            if for_client or self.show_tool_calls:
                arguments = json.dumps(call.args or {}, ensure_ascii=False)
                item = ToolCall(call.id or "", name, arguments, for_client)
                self.items.append(item)
                changes.append(("call", item, ""))
        if self.show_tool_calls:
            for response in event.get_function_responses():
                output = json.dumps(response.response or {}, ensure_ascii=False)
                result = ToolResult(response.id or "", response.name or "", output)
                self.items.append(result)
                changes.append(("result", result, ""))
        return changes

    def _add_text(self, message_id: str, delta: str, changes: list[Change]) -> None:
        message = self._open
        if message is None or message.id != message_id:
            self._close_text(changes)
            message = self._open = TurnText(message_id)
            self.items.append(message)
            changes.append(("text_start", message, ""))
        message.text += delta
        changes.append(("text_delta", message, delta))

    def _close_text(self, changes: list[Change]) -> None:
        message = self._open
        if message is not None:
            message.done = True
            self._open = None
            changes.append(("text_done", message, ""))

    def _add_usage(self, event: Event) -> None:
        counts = event.usage_metadata
        assert counts is not None
        usage = self.usage if self.usage is not None else Usage()
        usage.input_tokens += counts.prompt_token_count or 0
        usage.output_tokens += counts.candidates_token_count or 0
        usage.cached_tokens += counts.cached_content_token_count or 0
        usage.reasoning_tokens += counts.thoughts_token_count or 0
        self.usage = usage
