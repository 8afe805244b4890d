"""How a provider failure becomes a :class:`~eventide.errors.ModelError`, and which are
retried.

Retried: 429 (rate limit), 408 (request timeout), a 5xx whose body is not a request
validation error (529: overloaded), and connection failures. Everything else (a refused
key, an invalid request, a 500 that carries pydantic's error list, a timeout of the whole
request) is reported at once: the same request cannot succeed later.
"""

from __future__ import annotations

import email.utils
from collections.abc import Callable, Mapping
from datetime import UTC, datetime

from eventide.errors import ModelError

__all__ = [
    "RETRYABLE_STATUS",
    "Classifier",
    "connection_error",
    "malformed_stream",
    "retry_after_seconds",
    "status_error",
    "timeout_error",
    "unrecognized_error",
]

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

Classifier = Callable[[Exception], ModelError | None]
"""Turns an SDK's exception into a :class:`ModelError` (None: not the provider's)."""


def status_error(
    status: int,
    provider_code: str | None,
    message: str,
    *,
    provider: str,
    headers: Mapping[str, str] | None = None,
) -> ModelError:
    """The error for an HTTP error status, with the provider's own code when it has one."""
    lowered = f"{provider_code or ''} {message}".lower()
    retryable = status in RETRYABLE_STATUS or (
        status >= 500 and not any(marker in lowered for marker in _VALIDATION_MARKERS)
    )
    code = provider_code or str(status)
    if "safety" in lowered or "content_filter" in lowered or "content_policy" in lowered:
        code = "SAFETY"
    return ModelError(
        f"{provider} returned HTTP {status}: {message}",
        error_code=code,
        retryable=retryable,
        retry_after=retry_after_seconds(headers),
        status_code=status,
    )


def timeout_error(provider: str, exc: Exception) -> ModelError:
    """The request took longer than the connector's ``timeout``."""
    return ModelError(
        f"{provider} did not answer in time ({exc!r}). Raise the connector's timeout.",
        error_code="TIMEOUT",
    )


def connection_error(provider: str, exc: Exception, url: str | None = None) -> ModelError:
    """The server could not be reached, or dropped the connection before answering.

    The URL is named: for a local server (``OPENAI_BASE_URL``) it is the first thing to
    check, and the provider's name alone would point at the wrong place.
    """
    where = f"{provider} at {url}" if url else provider
    detail = str(exc).strip().rstrip(".") or type(exc).__name__
    return ModelError(
        f"Cannot reach {where}: {detail}. Check that the server runs"
        + (" at that URL." if url else " and its URL."),
        error_code="CONNECTION_ERROR",
        retryable=True,
    )


def malformed_stream(detail: str) -> ModelError:
    """A stream that broke off or could not be parsed once it had started."""
    return ModelError(
        f"The provider's response stream broke off or could not be parsed ({detail}). Any "
        "partial output is incomplete; retry the turn.",
        error_code="MALFORMED_STREAM",
    )


def empty_stream() -> ModelError:
    """A stream that ended before anything arrived: no text, call or finish reason.

    Servers that cannot stream a request (some local servers, when tools are offered) end
    the stream this way every time, so retrying the turn does not help.
    """
    return ModelError(
        "The model server's stream ended empty: no text, no tool call, no finish reason. "
        "Retrying will not help: the server does not stream this request (some local "
        "servers cannot stream when tools are offered). Turn streaming off for it "
        "(RunConfig(streaming_mode=StreamingMode.NONE), `eventide run --no-stream`) or use "
        "a server that streams with tools.",
        error_code="EMPTY_STREAM",
    )


def unrecognized_error(exc: Exception) -> ModelError:
    """An SDK exception no classifier knows."""
    return ModelError(
        f"The provider call failed: {type(exc).__name__}: {exc}", error_code="BAD_RESPONSE"
    )


def retry_after_seconds(headers: Mapping[str, str] | None) -> float | None:
    """The ``Retry-After`` (seconds or an HTTP date) or ``retry-after-ms`` header of a
    failed response, in seconds."""
    if headers is None:
        return None
    millis = headers.get("retry-after-ms")
    value = headers.get("retry-after")
    try:
        if millis is not None:
            return float(millis) / 1000
        if value is None:
            return None
        return float(value)
    except ValueError:
        pass
    if value is None:
        return None
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return max(0.0, (when - datetime.now(UTC)).total_seconds())
