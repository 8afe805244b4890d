"""LiteLLM connector: every provider LiteLLM supports, as a fallback.

Install with ``pip install 'eventide[litellm]'``. The model string is ``litellm/`` followed
by LiteLLM's own model name, e.g. ``"litellm/mistral/mistral-large-latest"``,
``"litellm/bedrock/anthropic.claude-3-5-sonnet-20240620-v1:0"`` or
``"litellm/openai/gpt-4.1"``. Keys come from the variables LiteLLM reads for that provider
(``MISTRAL_API_KEY``, AWS credentials, ...); ``api_base``/``api_key`` override them.

LiteLLM speaks the OpenAI Chat Completions format to every provider, so the request and the
response are translated exactly as :mod:`eventide.models.openai_llm` does. LiteLLM's own
retries are switched off: Eventide retries rate limits and transient failures with the
connector's policy. Importing ``litellm`` is slow (seconds), which is one more reason it is
only imported when a ``litellm/`` model is first called. Set
``LITELLM_LOCAL_MODEL_COST_MAP=True`` to stop LiteLLM fetching its price list at import.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

from eventide.errors import ModelError
from eventide.models._failures import connection_error, status_error, timeout_error
from eventide.models._openai_chat_format import (
    chat_request,
    feed_chat_chunk,
    read_chat_completion,
)
from eventide.models._sdk_calls import header_map, response_dict
from eventide.models._stream_assembler import StreamAssembler
from eventide.models.llm_request import LlmRequest
from eventide.models.llm_response import LlmResponse
from eventide.models.providers import Provider
from eventide.models.remote_llm import RemoteLlm, WireCall

__all__ = ["LiteLlm"]


class LiteLlm(RemoteLlm):
    """A model reached through LiteLLM.

    Attributes:
        model: ``litellm/<provider>/<model>`` (the ``litellm/`` prefix is stripped).
        api_base: the provider endpoint, when not LiteLLM's default for the provider.
        api_key: the provider key, when not taken from the provider's variable.
        extra_args: further keyword arguments for ``litellm.acompletion``.
    """

    model: str
    api_base: str | None = None
    api_key: str | None = None
    extra_args: dict[str, Any] = {}

    @classmethod
    def supported_models(cls) -> list[str]:
        """``litellm/*``."""
        return [r"litellm/.*"]

    def _arguments(self, llm_request: LlmRequest) -> dict[str, Any]:
        model = self.model.removeprefix("litellm/")
        body = chat_request(llm_request, model=model, max_tokens_field="max_tokens")
        body.update(llm_request.config.extra)
        body.update(self.extra_args)
        # LiteLLM retries on its own unless told not to; the connector's policy applies.
        body["num_retries"] = 0
        body["max_retries"] = 0
        if self.timeout is not None:
            body["timeout"] = self.timeout
        if self.api_base:
            body["api_base"] = self.api_base
        if self.api_key:
            body["api_key"] = self.api_key
        return body

    def _make_provider(self) -> Provider:
        return _LiteLlmRoute(timeout=self.timeout)

    def _wire_call(self, llm_request: LlmRequest, provider: Provider) -> WireCall:
        litellm: Any = provider.client()
        arguments = self._arguments(llm_request)

        async def send() -> object:
            result: object = await litellm.acompletion(**arguments)
            return result

        async def open_stream() -> AsyncIterator[object]:
            created = await litellm.acompletion(
                **arguments, stream=True, stream_options={"include_usage": True}
            )
            return aiter(created)

        return WireCall(send=send, open_stream=open_stream, read=_read, feed=_feed)


def _read(result: object, assembler: StreamAssembler) -> None:
    read_chat_completion(response_dict(result), assembler)


def _feed(item: object, assembler: StreamAssembler) -> list[LlmResponse]:
    return feed_chat_chunk(response_dict(item), assembler)


class _LiteLlmRoute(Provider):
    """LiteLLM routes each call itself: the "client" is the ``litellm`` module."""

    def __init__(self, *, timeout: float | None) -> None:
        super().__init__(name="LiteLLM", timeout=timeout)

    def _make_client(self) -> Any:
        import litellm

        return litellm

    async def _close_client(self, client: Any) -> None:
        pass  # LiteLLM keeps no client of ours open

    def classify(self, exc: Exception) -> ModelError | None:
        """Errors of ``litellm``."""
        from litellm import exceptions

        message = str(getattr(exc, "message", exc))
        if isinstance(exc, exceptions.Timeout):
            return timeout_error(self.name, exc)
        if isinstance(exc, exceptions.MidStreamFallbackError):
            # LiteLLM's wrapper for anything that broke a stream after it started.
            return ModelError(
                f"The stream broke off or could not be parsed ({message}); retry the turn.",
                error_code="MALFORMED_STREAM",
            )
        if isinstance(exc, exceptions.ContextWindowExceededError):
            return ModelError(message, error_code="context_length_exceeded")
        if isinstance(exc, exceptions.ContentPolicyViolationError):
            return ModelError(message, error_code="SAFETY")
        if isinstance(exc, exceptions.APIConnectionError):
            return connection_error(self.name, exc)
        status: object = getattr(exc, "status_code", None)
        if isinstance(status, int) and type(exc).__module__.startswith("litellm"):
            headers = header_map(getattr(exc, "response", None)) or header_map(
                getattr(exc, "litellm_response_headers", None)
            )
            return status_error(status, None, message, provider=self.name, headers=headers)
        return None
