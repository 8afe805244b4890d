"""Rendering a turn's events in the terminal: streamed text, compact tool and state lines,
workflow node outputs, and the questions a workflow asks (``RequestInput``)."""

from __future__ import annotations

import json
from typing import Any, cast

from rich.console import Console
from rich.text import Text

from eventide.events import Event
from eventide.protocol import TRANSFER_TO_AGENT
from eventide.workflow import REQUEST_INPUT_FUNCTION

__all__ = ["EventPrinter"]

_MAX_VALUE = 160


class EventPrinter:
    """Prints events as they arrive.

    Partial events' text is printed as it streams; the complete event that follows ends the
    line instead of printing the text again. Tool calls, tool results, transfers, state and
    artifact changes get one dim line each; error events one red line.

    A workflow node's output gets a ``◆ path: output`` line; a request for input a ``?``
    line with its question, and is kept in :attr:`questions` until answered.

    Attributes:
        had_error: an error event was printed since the last :meth:`start_turn`.
        questions: (call id, question) of each request for input not answered yet.
    """

    def __init__(self, console: Console) -> None:
        self._console = console
        self._streaming: str | None = None  # the author whose text is being streamed
        self.had_error = False
        self.questions: list[tuple[str, str]] = []

    def start_turn(self) -> None:
        """Forget the previous turn's state (questions stay until answered)."""
        self._streaming = None
        self.had_error = False

    def answered(self, call_id: str) -> None:
        """The user answered the request ``call_id``."""
        self.questions = [q for q in self.questions if q[0] != call_id]

    def finish_turn(self) -> None:
        """End a line left open by streamed text."""
        self._end_stream()

    def print_event(self, event: Event) -> None:
        """Print one event (partial or complete)."""
        if event.author == "user":
            return
        if event.partial:
            self._print_chunk(event)
            return
        content = event.content
        parts = content.parts or [] if content is not None else []
        texts = [p.text for p in parts if p.text and not p.thought]
        if texts:
            if self._streaming == event.author:
                self._end_stream()
            else:
                self._end_stream()
                line = Text()
                line.append(f"{event.author} › ", style="bold cyan")
                line.append("".join(texts))
                self._console.print(line)
        for part in parts:
            call = part.function_call
            if call is not None and call.name == REQUEST_INPUT_FUNCTION and call.id:
                question = str((call.args or {}).get("message") or "Your answer?")
                self.questions.append((call.id, question))
                self._note("?", question, "bold yellow")
            elif call is not None and call.name != TRANSFER_TO_AGENT:
                self._note("→", f"{call.name}({_format_args(call.args or {})})", "yellow")
            response = part.function_response
            if response is not None and response.name != TRANSFER_TO_AGENT:
                self._note("←", f"{response.name}: {_short(response.response)}", "green")
        if event.output is not None and event.node_info.path:
            self._note("◆", f"{event.node_info.path}: {_short(event.output)}", "cyan")
        actions = event.actions
        if actions.transfer_to_agent:
            self._note("⇢", f"transfer to {actions.transfer_to_agent}", "magenta")
        if actions.escalate:
            self._note("⇡", "escalate", "magenta")
        for key, value in actions.state_delta.items():
            self._note("·", f"state {key} = {_short(value)}", "blue")
        for filename, version in actions.artifact_delta.items():
            self._note("·", f"artifact {filename} v{version}", "blue")
        if event.error_code or event.error_message:
            self.had_error = True
            self._end_stream()
            message = f"{event.author}: {event.error_code or 'error'}: {event.error_message or ''}"
            self._console.print(Text(f"  ✗ {message.rstrip(': ')}", style="bold red"))

    def _print_chunk(self, event: Event) -> None:
        content = event.content
        if content is None or not content.parts:
            return
        text = "".join(p.text for p in content.parts if p.text and not p.thought)
        if not text:
            return
        if self._streaming != event.author:
            self._end_stream()
            self._console.print(Text(f"{event.author} › ", style="bold cyan"), end="")
            self._streaming = event.author
        self._console.print(Text(text), end="")
        self._console.file.flush()

    def _end_stream(self) -> None:
        if self._streaming is not None:
            self._console.print()
            self._streaming = None

    def _note(self, mark: str, text: str, style: str) -> None:
        self._end_stream()
        line = Text("  ")
        line.append(mark, style=style)
        line.append(f" {text}", style="dim")
        self._console.print(line)


def _format_args(args: dict[str, Any]) -> str:
    text = ", ".join(f"{key}={json.dumps(value, default=str)}" for key, value in args.items())
    return _clip(text)


def _short(value: Any) -> str:
    if isinstance(value, dict) and set(cast("dict[str, Any]", value)) == {"result"}:
        value = cast("dict[str, Any]", value)["result"]
    text = value if isinstance(value, str) else json.dumps(value, default=str, ensure_ascii=False)
    return _clip(text)


def _clip(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= _MAX_VALUE else text[: _MAX_VALUE - 1] + "…"
