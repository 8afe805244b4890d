"""``POST /v1/responses``: a turn of an app, in the Responses API's shape (and Open
Responses').

``model`` is the app's name. Each assistant message of the turn is a ``message`` output
item; a call the client must answer (its own tools, confirmations) is a ``function_call``
item (the response is ``completed``: the client answers with a ``function_call_output``
item and ``previous_response_id``); with ``X-Eventide-Tool-Calls: shown`` the agent's own
calls and their results are ``function_call`` and ``function_call_output`` items too. A
failed turn is ``failed`` with its ``error``. Streaming sends the API's events
(``response.created``, ``response.output_item.added``, ``response.output_text.delta``, ...,
``response.completed`` or ``response.failed``) with increasing ``sequence_number``s.
"""

from __future__ import annotations

import time
from typing import Any

from pydantic_core import to_json

from eventide.events import Event
from eventide.openai_compat.request_fields import as_list, as_object
from eventide.openai_compat.turn_output import ToolCall, ToolResult, TurnOutput, TurnText, Usage

__all__ = ["ResponseEvents", "ResponseShape", "response_resource"]


class ResponseShape:
    """What a response object repeats of its request."""

    def __init__(
        self,
        *,
        response_id: str,
        model: str,
        body: dict[str, Any],
        conversation: str | None,
    ) -> None:
        self.response_id = response_id
        self.model = model
        self.created_at = int(time.time())
        self.previous_response_id = body.get("previous_response_id")
        self.instructions = body.get("instructions")
        self.tools = [
            found for tool in as_list(body.get("tools")) or [] if (found := as_object(tool))
        ]
        self.metadata = as_object(body.get("metadata")) or {}
        self.conversation = conversation


def response_resource(
    shape: ResponseShape,
    output: TurnOutput,
    *,
    status: str,
    error: tuple[str, str] | None = None,
) -> dict[str, Any]:
    """The ``response`` object in ``status``."""
    finished = status in ("completed", "failed")
    resource: dict[str, Any] = {
        "id": shape.response_id,
        "object": "response",
        "created_at": shape.created_at,
        "completed_at": int(time.time()) if finished else None,
        "status": status,
        "incomplete_details": None,
        "model": shape.model,
        "previous_response_id": shape.previous_response_id,
        "instructions": shape.instructions if isinstance(shape.instructions, str) else None,
        "output": [_item(item, done=True) for item in output.items] if finished else [],
        "error": {"code": error[0], "message": error[1]} if error is not None else None,
        "tools": [_tool(tool) for tool in shape.tools],
        "tool_choice": "auto",
        "truncation": "disabled",
        "parallel_tool_calls": True,
        "text": {"format": {"type": "text"}},
        "top_p": 1.0,
        "presence_penalty": 0.0,
        "frequency_penalty": 0.0,
        "top_logprobs": 0,
        "temperature": 1.0,
        "reasoning": None,
        "usage": _usage(output.usage) if finished else None,
        "max_output_tokens": None,
        "max_tool_calls": None,
        "store": True,
        "background": False,
        "service_tier": "default",
        "metadata": shape.metadata,
        "safety_identifier": None,
        "prompt_cache_key": None,
    }
    if shape.conversation is not None:
        resource["conversation"] = {"id": shape.conversation}
    return resource


def failure_of(output: TurnOutput, error: BaseException | None) -> tuple[str, str] | None:
    """The ``error`` of a failed turn (a model error event, or what the turn raised)."""
    if output.error is not None:
        return output.error
    if error is not None:
        return type(error).__name__, f"The agent failed: {type(error).__name__}: {error}"
    return None


class ResponseEvents:
    """The streamed events of a turn (a ``FrameWriter``)."""

    def __init__(self, shape: ResponseShape, output: TurnOutput) -> None:
        self.shape = shape
        self.output = output
        self._sequence = 0
        self._positions: dict[int, int] = {}  # id(item) -> its output_index
        self._delta_fields = b""  # the open message's text-delta fields before the text

    def start(self, emit: Any) -> None:
        resource = b'"response":' + to_json(
            response_resource(self.shape, self.output, status="in_progress")
        )
        self._write(emit, b"response.created", resource)
        self._write(emit, b"response.in_progress", resource)

    def event(self, event: Event, emit: Any) -> None:
        for change, item, delta in self.output.read(event):
            if change == "text_start":
                assert isinstance(item, TurnText)
                index = self._place(item)
                self._send(
                    emit,
                    {
                        "type": "response.output_item.added",
                        "output_index": index,
                        "item": _item(item, done=False),
                    },
                )
                self._send(
                    emit,
                    {
                        "type": "response.content_part.added",
                        "item_id": _message_id(item),
                        "output_index": index,
                        "content_index": 0,
                        "part": {"type": "output_text", "text": "", "annotations": []},
                    },
                )
                # The message's deltas (most of the frames) differ only in the text.
                self._delta_fields = b"".join(
                    (
                        b'"item_id":',
                        to_json(_message_id(item)),
                        b',"output_index":%d,"content_index":0,"delta":' % index,
                    )
                )
            elif change == "text_delta":
                self._write(
                    emit,
                    b"response.output_text.delta",
                    self._delta_fields + to_json(delta) + b',"logprobs":[]',
                )
            elif change == "text_done":
                assert isinstance(item, TurnText)
                self._text_done(item, emit)
            elif change == "call":
                assert isinstance(item, ToolCall)
                self._call(item, emit)
            else:
                assert isinstance(item, ToolResult)
                index = self._place(item)
                for kind in ("response.output_item.added", "response.output_item.done"):
                    self._send(
                        emit, {"type": kind, "output_index": index, "item": _item(item, done=True)}
                    )

    def end(self, error: BaseException | None, emit: Any) -> None:
        failure = failure_of(self.output, error)
        status = "failed" if failure is not None else "completed"
        resource = response_resource(self.shape, self.output, status=status, error=failure)
        self._send(emit, {"type": f"response.{status}", "response": resource})

    def _text_done(self, item: TurnText, emit: Any) -> None:
        index = self._positions[id(item)]
        item_id = _message_id(item)
        self._send(
            emit,
            {
                "type": "response.output_text.done",
                "item_id": item_id,
                "output_index": index,
                "content_index": 0,
                "text": item.text,
                "logprobs": [],
            },
        )
        self._send(
            emit,
            {
                "type": "response.content_part.done",
                "item_id": item_id,
                "output_index": index,
                "content_index": 0,
                "part": {"type": "output_text", "text": item.text, "annotations": []},
            },
        )
        self._send(
            emit,
            {"type": "response.output_item.done", "output_index": index, "item": _item(item, True)},
        )

    def _call(self, item: ToolCall, emit: Any) -> None:
        index = self._place(item)
        item_id = _call_item_id(item)
        self._send(
            emit,
            {
                "type": "response.output_item.added",
                "output_index": index,
                "item": _item(item, False),
            },
        )
        self._send(
            emit,
            {
                "type": "response.function_call_arguments.delta",
                "item_id": item_id,
                "output_index": index,
                "delta": item.arguments,
            },
        )
        self._send(
            emit,
            {
                "type": "response.function_call_arguments.done",
                "item_id": item_id,
                "output_index": index,
                "name": item.name,
                "arguments": item.arguments,
            },
        )
        self._send(
            emit,
            {"type": "response.output_item.done", "output_index": index, "item": _item(item, True)},
        )

    def _place(self, item: TurnText | ToolCall | ToolResult) -> int:
        index = len(self._positions)
        self._positions[id(item)] = index
        return index

    def _send(self, emit: Any, frame: dict[str, Any]) -> None:
        kind = frame.pop("type")
        self._write(emit, kind.encode(), to_json(frame)[1:-1])

    def _write(self, emit: Any, kind: bytes, fields: bytes) -> None:
        """Send the event ``kind`` whose other fields are ``fields``, JSON object members
        (``"a":1,"b":2``), numbered next. Compact JSON, as OpenAI's own frames, written by
        pydantic-core's serializer: a fifth of json.dumps's cost."""
        sequence = self._sequence
        self._sequence = sequence + 1
        emit(
            b'event: %s\ndata: {"type":"%s",%s,"sequence_number":%d}\n\n'
            % (kind, kind, fields, sequence)
        )


def _item(item: TurnText | ToolCall | ToolResult, done: bool) -> dict[str, Any]:
    status = "completed" if done else "in_progress"
    if isinstance(item, TurnText):
        content: list[dict[str, Any]] = (
            [{"type": "output_text", "text": item.text, "annotations": []}] if done else []
        )
        return {
            "type": "message",
            "id": _message_id(item),
            "status": status,
            "role": "assistant",
            "content": content,
        }
    if isinstance(item, ToolCall):
        return {
            "type": "function_call",
            "id": _call_item_id(item),
            "call_id": item.call_id,
            "name": item.name,
            "arguments": item.arguments if done else "",
            "status": status,
        }
    return {
        "type": "function_call_output",
        "id": f"fco_{item.call_id}",
        "call_id": item.call_id,
        "output": item.output,
        "status": "completed",
    }


def _message_id(item: TurnText) -> str:
    return f"msg_{item.id}"


def _call_item_id(item: ToolCall) -> str:
    return f"fc_{item.call_id}"


def _tool(tool: dict[str, Any]) -> dict[str, Any]:
    return {
        "type": "function",
        "name": tool.get("name", ""),
        "description": tool.get("description"),
        "parameters": tool.get("parameters"),
        "strict": tool.get("strict"),
    }


def _usage(usage: Usage | None) -> dict[str, Any] | None:
    if usage is None:
        return None
    return {
        "input_tokens": usage.input_tokens,
        "output_tokens": usage.output_tokens,
        "total_tokens": usage.total_tokens,
        "input_tokens_details": {"cached_tokens": usage.cached_tokens},
        "output_tokens_details": {"reasoning_tokens": usage.reasoning_tokens},
    }
