"""What every provider connector shares: retries, failures, call ids, keys, partial chunks.

Nothing here imports a provider SDK; each connector passes in a ``classify`` function that
turns its SDK's exceptions into a :class:`ProviderFailure`.
"""

from __future__ import annotations

import asyncio
import email.utils
import functools
import inspect
import json
import os
import random
from collections import deque
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Generic, TypeVar

from pydantic import PrivateAttr

from eventide import types
from eventide.errors import ConfigurationError, UsageError
from eventide.models.base_llm import BaseLlm
from eventide.models.llm_request import LlmRequest
from eventide.models.llm_response import LlmResponse

__all__ = [
    "GEMINI_BUILTIN_TOOLS",
    "RETRYABLE_STATUS",
    "CallIdAssigner",
    "OpenedStream",
    "ProviderFailure",
    "RetryPolicy",
    "api_key_from_env",
    "RemoteLlm",
    "call_with_retries",
    "close_stream",
    "code_part_as_text",
    "count_function_calls",
    "fill_missing_call_ids",
    "reject_builtin_tools",
    "guarded_stream",
    "json_arguments",
    "open_stream_with_retries",
    "partial_text_response",
    "response_dict",
    "fit_to_signature",
    "response_payload",
    "retry_after_seconds",
    "status_code_failure",
]

T = TypeVar("T")

# 408 request timeout and 429 rate limit; any 5xx (529: overloaded) unless its body says the
# request itself is invalid (see is_validation_message).
RETRYABLE_STATUS = frozenset({408, 429})

# Words of a request-validation error inside a 5xx body: llama.cpp's server (pydantic's
# error list), FastAPI-based servers, and providers that answer an invalid request with 500.
_VALIDATION_MARKERS = (
    "validation error",
    "literal_error",
    "'loc': (",
    '"loc": [',
    "input should be",
    "field required",
    "invalid_request_error",
)


@dataclass(slots=True, kw_only=True)
class ProviderFailure:
    """A failure reported by (or on the way to) a provider, as a connector will report it."""

    code: str
    message: str
    retryable: bool = False
    retry_after: float | None = None

    def to_response(self) -> LlmResponse:
        """The error response a connector yields for this failure."""
        return LlmResponse(error_code=self.code, error_message=self.message, turn_complete=True)


@dataclass(slots=True, kw_only=True)
class RetryPolicy:
    """Exponential backoff with jitter: attempt ``n`` waits about ``base_delay * 2**n``."""

    max_retries: int
    base_delay: float
    max_delay: float

    def delay(self, attempt: int, retry_after: float | None) -> float:
        """Seconds to wait before retry number ``attempt + 1``."""
        if retry_after is not None and retry_after >= 0:
            return min(retry_after, self.max_delay)
        ceiling = min(self.max_delay, self.base_delay * (2.0**attempt))
        # Half fixed, half random: clients that failed together do not retry together.
        return ceiling / 2 + random.uniform(0, ceiling / 2)


Classifier = Callable[[Exception], ProviderFailure | None]


async def call_with_retries(
    attempt: Callable[[], Awaitable[T]], *, policy: RetryPolicy, classify: Classifier
) -> T | ProviderFailure:
    """Run ``attempt``; retry retryable failures; return the last failure instead of raising.

    ``attempt`` holds only the SDK call, so whatever it raises came from the provider or on
    the way to it; exceptions ``classify`` does not recognise become ``BAD_RESPONSE``.
    """
    tries = 0
    while True:
        try:
            return await attempt()
        except _BrokenStream as broken:
            return broken.failure
        except (TypeError, AttributeError, NameError):
            raise  # a bug in the calling code (e.g. an SDK signature change), not the provider
        except Exception as exc:
            failure = classify(exc) or _unrecognized(exc)
            if not failure.retryable or tries >= policy.max_retries:
                if tries:
                    failure.message += f" (after {tries} retries)"
                return failure
            await asyncio.sleep(policy.delay(tries, failure.retry_after))
            tries += 1


@dataclass(slots=True, kw_only=True)
class OpenedStream(Generic[T]):
    """A provider stream whose first item has arrived (so the HTTP status is known)."""

    first: T | None
    rest: AsyncIterator[T]
    exhausted: bool


async def open_stream_with_retries(
    open_stream: Callable[[], Awaitable[AsyncIterator[T]]],
    *,
    policy: RetryPolicy,
    classify: Classifier,
) -> OpenedStream[T] | ProviderFailure:
    """Open a stream and read its first item, retrying as :func:`call_with_retries` does.

    Some SDKs send the request when the stream is created, others on the first read; reading
    the first item inside the retry loop makes a 429 retryable either way. Once an item has
    been read nothing is retried: partial output may already have reached the user.
    """

    async def attempt() -> OpenedStream[T]:
        iterator = await open_stream()
        try:
            first = await anext(iterator)
        except StopAsyncIteration:
            return OpenedStream(first=None, rest=iterator, exhausted=True)
        except Exception as exc:
            await close_stream(iterator)
            failure = classify(exc)
            if failure is None or failure.code == "CONNECTION_ERROR":
                raise _BrokenStream(_malformed(exc)) from exc
            raise
        return OpenedStream(first=first, rest=iterator, exhausted=False)

    return await call_with_retries(attempt, policy=policy, classify=classify)


async def guarded_stream(
    opened: OpenedStream[T], *, classify: Classifier
) -> AsyncIterator[T | ProviderFailure]:
    """The stream's items; a broken stream ends with one :class:`ProviderFailure` item.

    Anything the SDK raises while reading (a cut connection, an unparsable event) is a
    provider-side failure here, never an exception for the caller.
    """
    if opened.first is not None:
        yield opened.first
    if opened.exhausted:
        return
    while True:
        try:
            item = await anext(opened.rest)
        except StopAsyncIteration:
            return
        except Exception as exc:
            failure = classify(exc)
            if failure is None or failure.code == "CONNECTION_ERROR":
                failure = _malformed(exc)
            yield failure
            return
        yield item


async def close_stream(iterator: object) -> None:
    """Close an SDK stream (``close()`` in openai/anthropic, ``aclose()`` on generators)."""
    for name in ("close", "aclose"):
        method = getattr(iterator, name, None)
        if callable(method):
            try:
                result = method()
                if inspect.isawaitable(result):
                    await result
            except Exception:
                pass  # the stream is already broken; closing it is best effort
            return


class _BrokenStream(Exception):
    def __init__(self, failure: ProviderFailure) -> None:
        super().__init__(failure.message)
        self.failure = failure


def _malformed(exc: Exception) -> ProviderFailure:
    return ProviderFailure(
        code="MALFORMED_STREAM",
        message=(
            "The provider's response stream broke off or could not be parsed "
            f"({type(exc).__name__}: {exc}). Any partial output is incomplete; retry the turn."
        ),
    )


def _unrecognized(exc: Exception) -> ProviderFailure:
    return ProviderFailure(
        code="BAD_RESPONSE",
        message=f"The provider call failed: {type(exc).__name__}: {exc}",
    )


def status_code_failure(
    status: int, provider_code: str | None, message: str, *, provider: str
) -> ProviderFailure:
    """A failure for an HTTP error status, with the provider's own code when it has one."""
    lowered = f"{provider_code or ''} {message}".lower()
    retry = status in RETRYABLE_STATUS or (
        status >= 500 and not any(marker in lowered for marker in _VALIDATION_MARKERS)
    )
    code = provider_code or str(status)
    if "safety" in lowered or "content_filter" in lowered or "content_policy" in lowered:
        code = "SAFETY"
    return ProviderFailure(
        code=code, message=f"{provider} returned HTTP {status}: {message}", retryable=retry
    )


class RemoteLlm(BaseLlm):
    """Settings every provider connector has: timeout and retries.

    Attributes:
        timeout: seconds one HTTP request may take (None: the SDK's default).
        max_retries: how often a rate-limited (429) or transient (5xx, connection) failure
            is retried before it is reported as an error response.
        retry_base_delay: seconds before the first retry; doubled each retry, with jitter.
        retry_max_delay: upper bound of one wait (also caps a provider's Retry-After).
    """

    timeout: float | None = 120.0
    max_retries: int = 3
    retry_base_delay: float = 0.5
    retry_max_delay: float = 30.0

    # The SDK client, made on first use by the connector.
    _client: Any = PrivateAttr(default=None)

    async def close(self) -> None:
        """Close the HTTP connections of the SDK client (made again on next use)."""
        if self._client is not None:
            await self._client.close()
            self._client = None

    def _retry_policy(self) -> RetryPolicy:
        return RetryPolicy(
            max_retries=max(0, self.max_retries),
            base_delay=self.retry_base_delay,
            max_delay=self.retry_max_delay,
        )


def api_key_from_env(explicit: str | None, variables: Iterable[str], *, provider: str) -> str:
    """The API key given explicitly, else from the first set variable of ``variables``.

    Raises:
        ConfigurationError: no key anywhere; the message names the variables.
    """
    if explicit:
        return explicit
    names = list(variables)
    for name in names:
        value = os.environ.get(name)
        if value:
            return value
    raise ConfigurationError(
        f"No {provider} API key: set the environment variable {' or '.join(names)}, or pass "
        "api_key=... to the connector."
    )


def count_function_calls(llm_request: LlmRequest) -> int:
    """How many function calls the request's history holds (numbers generated ids)."""
    return sum(
        1
        for content in llm_request.contents
        for part in content.parts or ()
        if part.function_call is not None
    )


class CallIdAssigner:
    """Gives id-less function calls the stable ids ``call_<n>`` and pairs their responses.

    Some providers (Gemini) may omit call ids, but OpenAI and Anthropic require every tool
    result to name its call. Ids are numbered by position in the history, so the same
    history always translates to the same request; a response without an id pairs with the
    oldest unanswered call of the same name.
    """

    def __init__(self) -> None:
        self._count = 0
        self._pending: dict[str, deque[str]] = {}

    def call_id(self, call: types.FunctionCall) -> str:
        """The id to send for ``call``."""
        self._count += 1
        call_id = call.id or f"call_{self._count}"
        self._pending.setdefault(call.name or "", deque()).append(call_id)
        return call_id

    def response_id(self, response: types.FunctionResponse) -> str:
        """The id to send for ``response``: its own, else its call's."""
        pending = self._pending.get(response.name or "")
        if response.id:
            if pending and response.id in pending:
                pending.remove(response.id)
            return response.id
        if pending:
            return pending.popleft()
        self._count += 1
        return f"call_{self._count}"


def fill_missing_call_ids(parts: list[types.Part], *, calls_before: int) -> None:
    """Give function calls without an id the id ``call_<n>`` (n continues the history's)."""
    number = calls_before
    for part in parts:
        if part.function_call is not None:
            number += 1
            if not part.function_call.id:
                part.function_call.id = f"call_{number}"


def partial_text_response(text: str, *, thought: bool = False) -> LlmResponse:
    """One streamed chunk of text (or of a thought)."""
    part = types.Part(text=text, thought=True) if thought else types.Part(text=text)
    return LlmResponse(content=types.Content(role="model", parts=[part]), partial=True)


def response_dict(value: Any) -> dict[str, Any]:
    """An SDK response object as plain JSON data (every SDK here builds on pydantic)."""
    if isinstance(value, dict):
        return value
    dump = getattr(value, "model_dump", None)
    if callable(dump):
        data = dump(mode="json", exclude_none=True)
        if isinstance(data, dict):
            return data
    raise TypeError(f"Cannot read a {type(value).__name__} as a provider response")


def json_arguments(raw: str | None) -> tuple[dict[str, Any], str | None]:
    """Parse a function call's JSON arguments; on failure return ``{}`` and a message."""
    if not raw:
        return {}, None
    try:
        value = json.loads(raw)
    except json.JSONDecodeError as exc:
        return {}, f"the model sent function arguments that are not JSON ({exc}): {raw[:200]!r}"
    if not isinstance(value, dict):
        return {}, f"the model sent function arguments that are not a JSON object: {raw[:200]!r}"
    return value, None


def response_payload(response: types.FunctionResponse) -> str:
    """A function response's payload as the JSON text OpenAI and Anthropic expect."""
    return json.dumps(response.response or {}, ensure_ascii=False, default=str)


def code_part_as_text(part: types.Part) -> str | None:
    """Gemini code-execution parts, rendered as text for providers that lack them."""
    if part.executable_code is not None:
        lang = (part.executable_code.language or "").lower().replace("language_unspecified", "")
        return f"```{lang}\n{part.executable_code.code or ''}\n```"
    if part.code_execution_result is not None:
        result = part.code_execution_result
        return f"Code execution {result.outcome or 'result'}:\n{result.output or ''}"
    return None


def retry_after_seconds(headers: Any) -> float | None:
    """The ``Retry-After`` (seconds or an HTTP date) or ``retry-after-ms`` header of a
    failed response, in seconds."""
    if headers is None:
        return None
    try:
        millis = headers.get("retry-after-ms")
        if millis is not None:
            return float(millis) / 1000
        value = headers.get("retry-after")
        if value is None:
            return None
        try:
            return float(value)
        except ValueError:
            when = email.utils.parsedate_to_datetime(str(value))
            return max(0.0, (when - datetime.now(UTC)).total_seconds())
    except (TypeError, ValueError):
        return None


def fit_to_signature(method: Callable[..., Any], body: dict[str, Any]) -> dict[str, Any]:
    """``body`` as keyword arguments of an SDK ``method``; unknown keys go in ``extra_body``.

    SDK versions differ in which request fields they name as parameters (anthropic 2.x
    dropped ``temperature``); the wire format does not, so such fields travel as extra body.
    """
    known = _parameter_names(getattr(method, "__func__", method))
    if known is None:
        return body
    fitted = {key: value for key, value in body.items() if key in known}
    extra = {key: value for key, value in body.items() if key not in known}
    if extra:
        fitted["extra_body"] = {**extra, **fitted.get("extra_body", {})}
    return fitted


@functools.lru_cache(maxsize=64)
def _parameter_names(function: Callable[..., Any]) -> frozenset[str] | None:
    parameters = inspect.signature(function).parameters.values()
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters):
        return None
    return frozenset(p.name for p in parameters)


# The fields of ``types.Tool`` that switch on one of Gemini's built-in tools.
GEMINI_BUILTIN_TOOLS = ("code_execution", "google_search", "url_context", "retrieval")


def reject_builtin_tools(llm_request: LlmRequest, *, provider: str) -> None:
    """Refuse Gemini's built-in tools where a provider has no equivalent, rather than
    silently leaving them out.

    Raises:
        UsageError: the request enables one of :data:`GEMINI_BUILTIN_TOOLS`.
    """
    for tool in llm_request.config.tools or ():
        for name in GEMINI_BUILTIN_TOOLS:
            if getattr(tool, name) is not None:
                raise UsageError(
                    f"Tool(.., {name}=...) is a Gemini built-in tool, which {provider} cannot "
                    "run. Use a Gemini model for it, or give the agent a FunctionTool that "
                    "does the same job."
                )


def openai_tool_choice(
    tool_config: types.ToolConfig | None,
    *,
    function_ref: Callable[[str], dict[str, Any]],
    allowed: Callable[[list[dict[str, Any]]], dict[str, Any]],
) -> Any:
    """An OpenAI ``tool_choice`` for a ``ToolConfig`` (None: leave it to the API).

    Chat Completions and the Responses API spell a named function and a list of allowed
    tools differently; ``function_ref`` and ``allowed`` give those shapes.
    """
    if tool_config is None or tool_config.mode is None:
        return None
    if tool_config.mode == "NONE":
        return "none"
    if tool_config.mode == "AUTO":
        return "auto"
    names = tool_config.allowed_function_names or []
    if len(names) == 1:
        return function_ref(names[0])
    if names:
        return allowed([function_ref(n) for n in names])
    return "required"
