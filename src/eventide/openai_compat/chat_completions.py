"""``POST /v1/chat/completions``: a turn of an app, in the Chat Completions API's shape.

``model`` is the app's name. The answer's ``message.content`` is the turn's assistant text
(several messages of one turn joined by a blank line); ``tool_calls`` holds the calls the
client must answer (its own tools, confirmations) with ``finish_reason: "tool_calls"``, and,
when asked for (``X-Eventide-Tool-Calls: shown``), the agent's own calls too, which need no
answer (``finish_reason`` stays ``"stop"`` when only those are present; their results are
not shown: the Chat Completions API has no place for them). Streaming sends
``chat.completion.chunk`` frames and ``data: [DONE]``; ``stream_options.include_usage`` adds
the usage chunk. The session the turn ran in is named in the ``X-Eventide-Session-Id``
response header.
"""

from __future__ import annotations

import time
from typing import Any

from pydantic_core import to_json

from eventide.events import Event
from eventide.openai_compat.openai_errors import openai_error, openai_error_json
from eventide.openai_compat.request_fields import as_object
from eventide.openai_compat.turn_output import ToolCall, TurnOutput, Usage

__all__ = ["ChatChunks", "chat_completion", "include_usage"]


def include_usage(body: dict[str, Any]) -> bool:
    """Whether a streamed answer ends with a usage chunk (``stream_options.include_usage``).

    Raises:
        ProtocolInputError: ``stream_options`` is not an object.
    """
    value = body.get("stream_options")
    if value is None:
        return False
    options = as_object(value)
    if options is None:
        raise openai_error(400, "stream_options must be an object.", param="stream_options")
    return bool(options.get("include_usage"))


def chat_completion(output: TurnOutput, *, completion_id: str, model: str) -> dict[str, Any]:
    """The ``chat.completion`` object of a finished turn."""
    calls = [item for item in output.items if isinstance(item, ToolCall)]
    message: dict[str, Any] = {"role": "assistant", "content": output.text or None}
    if calls:
        message["tool_calls"] = [
            {
                "id": call.call_id,
                "type": "function",
                "function": {"name": call.name, "arguments": call.arguments},
            }
            for call in calls
        ]
    return {
        "id": completion_id,
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": message,
                "finish_reason": _finish_reason(output),
                "logprobs": None,
            }
        ],
        "usage": _usage(output.usage),
    }


class ChatChunks:
    """The ``chat.completion.chunk`` frames of a streamed turn (a ``FrameWriter``)."""

    def __init__(self, output: TurnOutput, *, completion_id: str, model: str, usage: bool) -> None:
        self.output = output
        self.usage = usage
        self._base = {
            "id": completion_id,
            "object": "chat.completion.chunk",
            "created": int(time.time()),
            "model": model,
        }
        self._texts = 0
        self._calls = 0
        # A content delta's frame is this object with the delta's JSON string in the middle:
        # written from the two halves, not by serializing the whole dict per chunk.
        around = to_json(
            {
                **self._base,
                "choices": [{"index": 0, "delta": {"content": "\x00"}, "finish_reason": None}],
            }
        ).split(b'"\\u0000"')
        self._content_head = b"data: " + around[0]
        self._content_tail = around[1] + b"\n\n"

    def start(self, emit: Any) -> None:
        emit(self._chunk({"role": "assistant", "content": ""}))

    def event(self, event: Event, emit: Any) -> None:
        for change, item, delta in self.output.read(event):
            if change == "text_start":
                if self._texts:
                    emit(self._chunk({"content": "\n\n"}))
                self._texts += 1
            elif change == "text_delta":
                emit(self._content_head + to_json(delta) + self._content_tail)
            elif change == "call":
                assert isinstance(item, ToolCall)
                call = {
                    "index": self._calls,
                    "id": item.call_id,
                    "type": "function",
                    "function": {"name": item.name, "arguments": item.arguments},
                }
                self._calls += 1
                emit(self._chunk({"tool_calls": [call]}))

    def end(self, error: BaseException | None, emit: Any) -> None:
        output = self.output
        if error is not None or output.error is not None:
            message = (
                f"{output.error[0]}: {output.error[1]}"
                if output.error is not None
                else f"The agent failed: {type(error).__name__}: {error}"
            )
            code = output.error[0] if output.error is not None else type(error).__name__
            body = openai_error_json(message, kind="server_error", code=code)
            emit(b"data: " + to_json(body) + b"\n\n")
        else:
            emit(self._chunk({}, finish_reason=_finish_reason(output)))
            if self.usage:
                frame: dict[str, Any] = {
                    **self._base,
                    "choices": [],
                    "usage": _usage(output.usage),
                }
                emit(b"data: " + to_json(frame) + b"\n\n")
        emit(b"data: [DONE]\n\n")

    def _chunk(self, delta: dict[str, Any], finish_reason: str | None = None) -> bytes:
        frame = {
            **self._base,
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish_reason}],
        }
        return b"data: " + to_json(frame) + b"\n\n"


def _finish_reason(output: TurnOutput) -> str:
    return "tool_calls" if output.client_calls else "stop"


def _usage(usage: Usage | None) -> dict[str, Any] | None:
    if usage is None:
        return None
    return {
        "prompt_tokens": usage.input_tokens,
        "completion_tokens": usage.output_tokens,
        "total_tokens": usage.total_tokens,
        "prompt_tokens_details": {"cached_tokens": usage.cached_tokens},
        "completion_tokens_details": {"reasoning_tokens": usage.reasoning_tokens},
    }
