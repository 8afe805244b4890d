"""``RetryingLlm``: retries around any model, and the retry loop every connector uses.

A call is retried only when it failed before any output reached the caller and its error
says it can succeed later (:attr:`ModelError.retryable <eventide.errors.ModelError>`:
429, 408, a transient 5xx, a connection failure). The wait honours the provider's
``Retry-After``; otherwise it doubles from ``base_delay`` with jitter.
"""

from __future__ import annotations

import random
from asyncio import sleep
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable
from contextlib import aclosing
from dataclasses import dataclass
from typing import Any, cast

from pydantic import model_validator

from eventide.errors import ModelError
from eventide.models.base_llm import BaseLlm
from eventide.models.llm_request import LlmRequest
from eventide.models.llm_response import LlmResponse

__all__ = ["RetryPolicy", "RetryingLlm", "retry_response", "retry_responses"]


@dataclass(frozen=True, slots=True, kw_only=True)
class RetryPolicy:
    """Exponential backoff with jitter: attempt ``n`` waits about ``base_delay * 2**n``.

    Attributes:
        max_retries: retries after the first attempt.
        base_delay: seconds before the first retry.
        max_delay: upper bound of one wait (also caps a provider's Retry-After).
    """

    max_retries: int = 3
    base_delay: float = 0.5
    max_delay: float = 30.0

    def delay(self, attempt: int, retry_after: float | None) -> float:
        """Seconds to wait before retry number ``attempt + 1``."""
        if retry_after is not None and retry_after >= 0:
            return min(retry_after, self.max_delay)
        ceiling = min(self.max_delay, self.base_delay * (2.0**attempt))
        # Half fixed, half random: clients that failed together do not retry together.
        return ceiling / 2 + random.uniform(0, ceiling / 2)


async def retry_responses(
    attempt: Callable[[], AsyncIterator[LlmResponse]], policy: RetryPolicy
) -> AsyncGenerator[LlmResponse, None]:
    """The responses of ``attempt()``, started again while it fails retryably before its
    first output; the error that ends the retries says how many there were."""
    tries = 0
    while True:
        retry: ModelError | None = None
        output_seen = False
        async with aclosing(_responses(attempt)) as responses:
            async for response in responses:
                retry = _retry_for(response, tries, policy, output_seen=output_seen)
                if retry is not None:
                    break
                # Once output reached the caller, nothing that follows is retried.
                output_seen = (
                    output_seen or response.partial is True or response.content is not None
                )
                yield response
        if retry is None:
            return
        await sleep(policy.delay(tries, retry.retry_after))
        tries += 1


async def retry_response(
    attempt: Callable[[], Awaitable[LlmResponse]], policy: RetryPolicy
) -> LlmResponse:
    """The one whole response of ``attempt()``, called again while it fails retryably: what
    :func:`retry_responses` does for a call that is not streamed, without its generators."""
    tries = 0
    while True:
        response = await attempt()
        retry = _retry_for(response, tries, policy, output_seen=False)
        if retry is None:
            return response
        await sleep(policy.delay(tries, retry.retry_after))
        tries += 1


def _retry_for(
    response: LlmResponse, tries: int, policy: RetryPolicy, *, output_seen: bool
) -> ModelError | None:
    """The error to retry the call for, or None when ``response`` is kept (an error that
    ends the retries then says how many there were)."""
    error = response.error
    if error is None or response.partial:
        return None
    if (
        isinstance(error, ModelError)
        and error.retryable
        and tries < policy.max_retries
        and not output_seen
        and response.content is None
    ):
        return error
    if tries and response.error_message is not None:
        response.error_message += f" (after {tries} retries)"
    return None


async def _responses(
    attempt: Callable[[], AsyncIterator[LlmResponse]],
) -> AsyncGenerator[LlmResponse, None]:
    async for response in attempt():
        yield response


class RetryingLlm(BaseLlm):
    """Any model, with failed calls retried (see the module docstring).

    ``RetryingLlm(llm=OpenAILlm(model="gpt-4.1", max_retries=0), max_retries=5)``. The
    built-in connectors already retry with their own ``max_retries``; wrap custom models, or
    a :class:`~eventide.models.fallback_llm.FallbackLlm`, in this.

    Attributes:
        llm: the model called.
        max_retries: retries after the first attempt.
        base_delay: seconds before the first retry (doubled each retry, with jitter).
        max_delay: upper bound of one wait (also caps a provider's Retry-After).
    """

    model: str = ""
    llm: BaseLlm
    max_retries: int = 3
    base_delay: float = 0.5
    max_delay: float = 30.0

    @model_validator(mode="before")
    @classmethod
    def _model_name(cls, raw: Any) -> Any:
        if not isinstance(raw, dict):
            return raw
        data = cast(dict[str, Any], raw)
        if not data.get("model") and "llm" in data:
            inner: Any = data["llm"]
            if isinstance(inner, BaseLlm):
                return {**data, "model": inner.model}
        return data

    async def generate_content_async(
        self, llm_request: LlmRequest, stream: bool = False
    ) -> AsyncGenerator[LlmResponse, None]:
        """Call :attr:`llm`, retrying as the module docstring says."""
        policy = RetryPolicy(
            max_retries=max(0, self.max_retries),
            base_delay=self.base_delay,
            max_delay=self.max_delay,
        )
        async for response in retry_responses(
            lambda: self.llm.generate_content_async(llm_request, stream), policy
        ):
            yield response

    def prepare(self) -> None:
        """Prepare the wrapped model (see :meth:`BaseLlm.prepare`)."""
        self.llm.prepare()

    async def close(self) -> None:
        """Close the wrapped model."""
        await self.llm.close()
