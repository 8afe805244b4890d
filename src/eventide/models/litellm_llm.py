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

from collections.abc import AsyncGenerator, AsyncIterator
from typing import Any

from eventide.models._connector_support import (
    ProviderFailure,
    RemoteLlm,
    call_with_retries,
    count_function_calls,
    open_stream_with_retries,
    response_dict,
    status_code_failure,
)
from eventide.models._openai_chat_format import (
    chat_request,
    parse_chat_completion,
    stream_chat_completion,
)
from eventide.models.llm_request import LlmRequest
from eventide.models.llm_response import LlmResponse

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

    async def generate_content_async(
        self, llm_request: LlmRequest, stream: bool = False
    ) -> AsyncGenerator[LlmResponse, None]:
        """Call the model; see :class:`~eventide.models.base_llm.BaseLlm`."""
        import litellm

        arguments = self._arguments(llm_request)
        calls_before = count_function_calls(llm_request)
        policy = self._retry_policy()
        if not stream:
            result = await call_with_retries(
                lambda: litellm.acompletion(**arguments), policy=policy, classify=_classify
            )
            if isinstance(result, ProviderFailure):
                yield result.to_response()
            else:
                yield parse_chat_completion(response_dict(result), calls_before=calls_before)
            return

        async def open_stream() -> AsyncIterator[Any]:
            created = await litellm.acompletion(
                **arguments, stream=True, stream_options={"include_usage": True}
            )
            return aiter(created)

        opened = await open_stream_with_retries(open_stream, policy=policy, classify=_classify)
        if isinstance(opened, ProviderFailure):
            yield opened.to_response()
            return
        async for response in stream_chat_completion(opened, calls_before, _classify):
            yield response


def _classify(exc: Exception) -> ProviderFailure | None:
    from litellm import exceptions

    message = str(getattr(exc, "message", exc))
    if isinstance(exc, exceptions.Timeout):
        return ProviderFailure(
            code="TIMEOUT",
            message=f"The provider did not answer in time ({message}). Raise the timeout.",
        )
    if isinstance(exc, exceptions.MidStreamFallbackError):
        # LiteLLM's wrapper for anything that broke a stream after it started.
        return ProviderFailure(
            code="MALFORMED_STREAM",
            message=f"The stream broke off or could not be parsed ({message}); retry the turn.",
        )
    if isinstance(exc, exceptions.ContextWindowExceededError):
        return ProviderFailure(code="context_length_exceeded", message=message)
    if isinstance(exc, exceptions.ContentPolicyViolationError):
        return ProviderFailure(code="SAFETY", message=message)
    if isinstance(exc, exceptions.APIConnectionError):
        return ProviderFailure(code="CONNECTION_ERROR", message=message, retryable=True)
    status = getattr(exc, "status_code", None)
    if isinstance(status, int) and type(exc).__module__.startswith("litellm"):
        return status_code_failure(status, None, message, provider="LiteLLM")
    return None
