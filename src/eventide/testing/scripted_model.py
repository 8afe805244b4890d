"""``ScriptedModel`` and ``FunctionModel``: models whose answers tests decide."""

from __future__ import annotations

import inspect
from collections.abc import AsyncGenerator, Awaitable, Callable, Sequence
from typing import Any, cast

from pydantic import Field, PrivateAttr

from eventide import types
from eventide.errors import ScriptExhaustedError
from eventide.models.base_llm import BaseLlm
from eventide.models.llm_request import LlmRequest
from eventide.models.llm_response import LlmResponse

__all__ = [
    "FunctionModel",
    "ScriptExhaustedError",
    "ScriptedModel",
    "text_response",
    "tool_call_response",
]

ScriptItem = LlmResponse | str | Exception | Sequence[LlmResponse]


def text_response(text: str) -> LlmResponse:
    """A complete model answer with one text part."""
    return LlmResponse(content=types.Content(role="model", parts=[types.Part(text=text)]))


def tool_call_response(*calls: tuple[str, dict[str, Any]], text: str | None = None) -> LlmResponse:
    """A model answer calling tools: ``tool_call_response(("get_weather", {"city": "Paris"}))``."""
    parts = [types.Part(text=text)] if text else []
    parts += [
        types.Part(function_call=types.FunctionCall(name=name, args=args)) for name, args in calls
    ]
    return LlmResponse(content=types.Content(role="model", parts=parts))


def _chunked(response: LlmResponse, chunk_size: int) -> list[LlmResponse]:
    """Split a text answer into partial chunks followed by the complete response."""
    text = response.content.text if response.content is not None else None
    if not text or chunk_size <= 0:
        return [response]
    chunks = [
        LlmResponse(
            content=types.Content(role="model", parts=[types.Part(text=text[i : i + chunk_size])]),
            partial=True,
        )
        for i in range(0, len(text), chunk_size)
    ]
    return [*chunks, response]


class ScriptedModel(BaseLlm):
    """Answers each call with the next item of a script, and records every request.

    A script item is an ``LlmResponse``, a string (a text answer), an exception (raised by
    the call, e.g. to test error callbacks), or a list of ``LlmResponse``s (yielded in order,
    e.g. partial chunks then the final response). When streaming is requested and the item is
    a single text response, it is split into ``stream_chunk_size``-character partial chunks.

    Example:
        >>> model = ScriptedModel(responses=["Hello!"])
        >>> model.model
        'scripted'

    Attributes:
        requests: every ``LlmRequest`` received, in order.
    """

    model: str = "scripted"
    responses: list[Any] = Field(default_factory=list)
    stream_chunk_size: int = 0
    _position: int = PrivateAttr(default=0)
    _requests: list[LlmRequest] = PrivateAttr(default_factory=list)

    @property
    def requests(self) -> list[LlmRequest]:
        """Every request received so far."""
        return self._requests

    @property
    def calls(self) -> int:
        """How many times the model was called."""
        return len(self._requests)

    def add(self, *items: ScriptItem) -> None:
        """Append items to the script."""
        self.responses.extend(items)

    async def generate_content_async(
        self, llm_request: LlmRequest, stream: bool = False
    ) -> AsyncGenerator[LlmResponse, None]:
        private = self.__pydantic_private__  # faster than the attribute syntax
        assert private is not None
        private["_requests"].append(llm_request)
        position = private["_position"]
        if position >= len(self.responses):
            raise ScriptExhaustedError(
                f"ScriptedModel was called {position + 1} times but its script has only "
                f"{len(self.responses)} responses. Add more with ScriptedModel(responses=[...]) "
                "or model.add(...)."
            )
        item = self.responses[position]
        private["_position"] = position + 1
        if isinstance(item, str):
            # Build the answer once; later plays of this script item reuse it.
            item = self.responses[position] = text_response(item)
        for response in _expand(item, stream, self.stream_chunk_size):
            yield response


def _expand(item: Any, stream: bool, chunk_size: int) -> list[LlmResponse]:
    if isinstance(item, BaseException):
        raise item
    if isinstance(item, str):
        item = text_response(item)
    # Responses are handed out as they are (not copied): the flow never changes a model's
    # response in place, so one scripted object may be played back many times.
    if isinstance(item, LlmResponse):
        if stream and chunk_size:
            return _chunked(item, chunk_size)
        return [item]
    if isinstance(item, Sequence):
        return [LlmResponse.model_validate(r) for r in cast("Sequence[object]", item)]
    return [LlmResponse.model_validate(item)]


ResponseFunction = Callable[[LlmRequest], "ScriptItem | Awaitable[ScriptItem]"]


class FunctionModel(BaseLlm):
    """A model whose every answer is computed by ``function(llm_request)``.

    The function may be sync or async and returns what a ``ScriptedModel`` script item may
    be (an ``LlmResponse``, a string, a list of responses) or raises.
    """

    model: str = "function"
    function: Callable[..., Any]
    stream_chunk_size: int = 0
    _requests: list[LlmRequest] = PrivateAttr(default_factory=list)

    @property
    def requests(self) -> list[LlmRequest]:
        """Every request received so far."""
        return self._requests

    async def generate_content_async(
        self, llm_request: LlmRequest, stream: bool = False
    ) -> AsyncGenerator[LlmResponse, None]:
        self._requests.append(llm_request)
        item = self.function(llm_request)
        if inspect.isawaitable(item):
            item = await item
        for response in _expand(item, stream, self.stream_chunk_size):
            yield response
