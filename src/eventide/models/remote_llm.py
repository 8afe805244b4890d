"""``RemoteLlm``: the call-and-retry skeleton every provider connector shares.

A connector says only how a request travels on its wire (:class:`WireCall`: the SDK call,
and how a response or a stream item feeds the :class:`StreamAssembler`); its
:class:`~eventide.models.providers.Provider` owns the client. Everything else is here, once:
failures become error responses, streams are opened, read, guarded and closed, and failed
calls are retried (:func:`~eventide.models.retrying_llm.retry_response`, and
:func:`~eventide.models.retrying_llm.retry_responses` for streams).
"""

from __future__ import annotations

import functools
import threading
from abc import abstractmethod
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable
from dataclasses import dataclass

from pydantic import PrivateAttr

from eventide.errors import ModelError
from eventide.models._history import count_function_calls
from eventide.models._sdk_calls import (
    StreamReader,
    call_once,
    close_stream,
    open_stream,
)
from eventide.models._stream_assembler import StreamAssembler
from eventide.models.base_llm import BaseLlm
from eventide.models.llm_request import LlmRequest
from eventide.models.llm_response import LlmResponse
from eventide.models.providers import Provider
from eventide.models.retrying_llm import RetryPolicy, retry_response, retry_responses

__all__ = ["RemoteLlm", "WireCall"]

_MAKING = threading.Lock()
"""Held while a provider is made: :meth:`RemoteLlm.prepare` may run in another thread."""


@dataclass(slots=True, kw_only=True)
class WireCall:
    """One request on a provider's wire.

    Attributes:
        send: make the non-streamed SDK call (returns the SDK's response object).
        open_stream: make the streamed SDK call (returns an async iterator of items).
        read: feed a whole response into the assembler.
        feed: feed one stream item into the assembler; returns the partials to yield.
    """

    send: Callable[[], Awaitable[object]]
    open_stream: Callable[[], Awaitable[AsyncIterator[object]]]
    read: Callable[[object, StreamAssembler], None]
    feed: Callable[[object, StreamAssembler], list[LlmResponse]]


class RemoteLlm(BaseLlm):
    """Settings every provider connector has: timeout and retries.

    Attributes:
        timeout: seconds one HTTP request may take (None: the SDK's default).
        max_retries: how often a rate-limited (429), timed-out (408), transient (5xx) or
            unreachable call is retried before it is reported as an error response.
        retry_base_delay: seconds before the first retry; doubled each retry, with jitter.
        retry_max_delay: upper bound of one wait (also caps a provider's Retry-After).
    """

    timeout: float | None = 120.0
    max_retries: int = 3
    retry_base_delay: float = 0.5
    retry_max_delay: float = 30.0

    _provider: Provider | None = PrivateAttr(default=None)

    @abstractmethod
    def _make_provider(self) -> Provider:
        """The provider for this connector's settings (made on first use)."""

    @abstractmethod
    def _wire_call(self, llm_request: LlmRequest, provider: Provider) -> WireCall:
        """How ``llm_request`` travels to ``provider``."""

    def get_provider(self) -> Provider:
        """The provider that owns the client, made on first use."""
        # Read through __pydantic_private__: the attribute syntax goes through
        # BaseModel.__getattr__, which costs several microseconds a read.
        private = self.__pydantic_private__
        assert private is not None
        provider: Provider | None = private["_provider"]
        if provider is None:
            with _MAKING:
                provider = private["_provider"]
                if provider is None:
                    provider = private["_provider"] = self._make_provider()
        return provider

    def prepare(self) -> None:
        """Make the provider's client now (imports its SDK); see :meth:`BaseLlm.prepare`."""
        super().prepare()
        self.get_provider().prepare()

    async def close(self) -> None:
        """Close the provider's client (a new one is made on next use)."""
        if self._provider is not None:
            provider, self._provider = self._provider, None
            await provider.aclose()

    async def generate_content_async(
        self, llm_request: LlmRequest, stream: bool = False
    ) -> AsyncGenerator[LlmResponse, None]:
        """Call the model; see :class:`~eventide.models.base_llm.BaseLlm`."""
        policy = _policy(self.max_retries, self.retry_base_delay, self.retry_max_delay)
        if not stream:
            # One response: awaited, not passed up through a generator per layer.
            yield await retry_response(lambda: self._whole(llm_request), policy)
            return
        async for response in retry_responses(lambda: self._stream(llm_request), policy):
            yield response

    async def _whole(self, llm_request: LlmRequest) -> LlmResponse:
        provider = self.get_provider()
        wire = self._wire_call(llm_request, provider)
        result = await call_once(wire.send, provider.classify)
        if isinstance(result, ModelError):
            return LlmResponse.from_error(result)
        assembler = StreamAssembler(
            calls_before=lambda: count_function_calls(llm_request), partials=False
        )
        wire.read(result, assembler)
        return assembler.final()

    async def _stream(self, llm_request: LlmRequest) -> AsyncGenerator[LlmResponse, None]:
        provider = self.get_provider()
        wire = self._wire_call(llm_request, provider)
        assembler = StreamAssembler(calls_before=lambda: count_function_calls(llm_request))
        opened = await open_stream(wire.open_stream, provider.classify)
        if isinstance(opened, ModelError):
            yield LlmResponse.from_error(opened)
            return
        reader = StreamReader(opened, provider.classify)
        try:
            async for item in reader:
                for partial in wire.feed(item, assembler):
                    yield partial
                if assembler.ended:
                    break
        finally:
            await close_stream(opened.rest)
        if reader.failure is not None and not assembler.ended:
            yield LlmResponse.from_error(reader.failure)
            return
        yield assembler.final()


@functools.lru_cache(maxsize=64)
def _policy(max_retries: int, base_delay: float, max_delay: float) -> RetryPolicy:
    """The retry policy of these settings (made once: a frozen dataclass costs a few
    microseconds to build, each call)."""
    return RetryPolicy(max_retries=max(0, max_retries), base_delay=base_delay, max_delay=max_delay)
