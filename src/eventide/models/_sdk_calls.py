"""Calling a provider SDK once: its exceptions classified, its streams opened, read and
closed safely, its response objects read as JSON data.

Nothing here imports a provider SDK, and nothing here retries: retries wrap a whole call
(:mod:`eventide.models.retrying_llm`).
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Generic, TypeVar, cast

from eventide.errors import ModelError
from eventide.models._failures import Classifier, malformed_stream, unrecognized_error
from eventide.models._json import JsonObject, obj

__all__ = [
    "OpenedStream",
    "StreamReader",
    "call_once",
    "close_stream",
    "fit_to_signature",
    "header_map",
    "open_stream",
    "response_dict",
]

T = TypeVar("T")

_BUGS = (TypeError, AttributeError, NameError)
"""Raised by the calling code itself (e.g. an SDK signature change): never the provider's."""


async def call_once(send: Callable[[], Awaitable[T]], classify: Classifier) -> T | ModelError:
    """Await ``send`` (only the SDK call); a provider failure comes back as the error."""
    try:
        return await send()
    except _BUGS:
        raise
    except Exception as exc:
        return classify(exc) or unrecognized_error(exc)


@dataclass(slots=True, kw_only=True)
class OpenedStream(Generic[T]):
    """A provider stream whose first item has arrived (so the HTTP status is known)."""

    first: T | None
    rest: AsyncIterator[T]
    exhausted: bool


async def open_stream(
    create: Callable[[], Awaitable[AsyncIterator[T]]], classify: Classifier
) -> OpenedStream[T] | ModelError:
    """Open a stream and read its first item.

    Some SDKs send the request when the stream is created, others on the first read;
    reading the first item here makes a 429 an error before any output either way (and so
    retryable). A first item that cannot be parsed is MALFORMED_STREAM.
    """
    iterator = await call_once(create, classify)
    if isinstance(iterator, ModelError):
        return iterator
    try:
        first = await anext(iterator)
    except StopAsyncIteration:
        return OpenedStream(first=None, rest=iterator, exhausted=True)
    except _BUGS:
        await close_stream(iterator)
        raise
    except Exception as exc:
        await close_stream(iterator)
        failure = classify(exc)
        if failure is None or failure.error_code == "CONNECTION_ERROR":
            return malformed_stream(f"{type(exc).__name__}: {exc}")
        return failure
    return OpenedStream(first=first, rest=iterator, exhausted=False)


class StreamReader(Generic[T]):
    """The items of an opened stream; a break ends the iteration and is kept in
    :attr:`failure` (anything the SDK raises while reading is the provider's failure)."""

    def __init__(self, opened: OpenedStream[T], classify: Classifier) -> None:
        self._opened = opened
        self._classify = classify
        self.failure: ModelError | None = None

    async def __aiter__(self) -> AsyncIterator[T]:
        opened = self._opened
        if opened.first is not None:
            yield opened.first
        if opened.exhausted:
            return
        while True:
            try:
                item = await anext(opened.rest)
            except StopAsyncIteration:
                return
            except _BUGS:
                raise
            except Exception as exc:
                failure = self._classify(exc)
                if failure is None or failure.error_code == "CONNECTION_ERROR":
                    failure = malformed_stream(f"{type(exc).__name__}: {exc}")
                self.failure = failure
                return
            yield item


async def close_stream(iterator: object) -> None:
    """Close an SDK stream (``close()`` in openai/anthropic, ``aclose()`` on generators)."""
    for name in ("close", "aclose"):
        method: object = getattr(iterator, name, None)
        if callable(method):
            try:
                result: object = method()
                if inspect.isawaitable(result):
                    await result
            except Exception:
                pass  # the stream is already broken; closing it is best effort
            return


def response_dict(value: object) -> JsonObject:
    """An SDK response object as plain JSON data (every SDK here builds on pydantic)."""
    if isinstance(value, dict):
        return cast(JsonObject, value)
    dump: object = getattr(value, "model_dump", None)
    if callable(dump):
        data: object = dump(mode="json", exclude_none=True)
        if isinstance(data, dict):
            return cast(JsonObject, data)
    raise TypeError(f"Cannot read a {type(value).__name__} as a provider response")


def fit_to_signature(method: Callable[..., object], body: JsonObject) -> JsonObject:
    """``body`` as keyword arguments of an SDK ``method``; unknown keys go in ``extra_body``.

    SDK versions differ in which request fields they name as parameters (anthropic 2.x
    dropped ``temperature``); the wire format does not, so such fields travel as extra body.
    """
    function: object = getattr(method, "__func__", method)
    known = _parameter_names(function) if callable(function) else None
    if known is None:
        return body
    fitted = {key: value for key, value in body.items() if key in known}
    extra = {key: value for key, value in body.items() if key not in known}
    if extra:
        fitted["extra_body"] = {**extra, **obj(fitted.get("extra_body"))}
    return fitted


@functools.lru_cache(maxsize=64)
def _parameter_names(function: Callable[..., object]) -> frozenset[str] | None:
    parameters = inspect.signature(function).parameters.values()
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters):
        return None
    return frozenset(p.name for p in parameters)


def header_map(response: object) -> Mapping[str, str] | None:
    """The headers of an SDK error's HTTP response (or the headers themselves), if any."""
    if isinstance(response, Mapping):
        return cast(Mapping[str, str], response)
    headers: object = getattr(response, "headers", None)
    if isinstance(headers, Mapping):
        return cast(Mapping[str, str], headers)
    return None
