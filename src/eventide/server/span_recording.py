"""A tracer provider that hands finished spans straight to a callback, for the dev traces.

The server records every turn's spans (invocation, agent, model and tool calls) so that the
dev UIs can show them. The OpenTelemetry SDK's spans do much the server never uses (a
sampler, span limits, attribute validation and a lock per span, resources, processors), and
under load they were one of the largest costs of a turn. These spans implement the
OpenTelemetry API (so :class:`~eventide.plugins.tracing_plugin.TracingPlugin` records into
them unchanged) and keep only what :class:`~eventide.server.trace_store.TraceStore` serves:
name, ids, parent, times, attributes, status and exception events. Only ``opentelemetry-api``
is needed.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Generator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any, cast

from opentelemetry import trace
from opentelemetry.context import Context
from opentelemetry.trace import (
    Link,
    SpanContext,
    SpanKind,
    Status,
    StatusCode,
    TraceFlags,
)
from opentelemetry.util.types import Attributes, AttributeValue

__all__ = ["RecordedSpan", "RecordingTracerProvider"]

_SAMPLED = TraceFlags(TraceFlags.SAMPLED)


def _value(value: Any) -> Any:
    # As the SDK keeps them: sequences as tuples.
    return tuple(cast("list[object]", value)) if isinstance(value, list) else value


def _kept(attributes: Attributes) -> dict[str, Any]:
    """A span's own copy of ``attributes``, as the SDK keeps them: no ``None`` values, lists
    as tuples. The common case (neither) is a copy made and checked in C; the comprehension
    over the items cost a third of a span's recording (3 spans a turn)."""
    if not attributes:
        return {}
    kept = dict(attributes)
    values = kept.values()
    if None in values or list in map(type, values):
        return {k: _value(v) for k, v in kept.items() if v is not None}
    return kept


# Status is immutable: every span starts with this one.
_UNSET = Status(StatusCode.UNSET)


class RecordedSpan(trace.Span):
    """One span, readable as the SDK's (``name``, ``context``, ``parent``, ``start_time``,
    ``end_time``, ``attributes``, ``status``, ``events``); ``on_end`` gets it when it ends."""

    def __init__(
        self,
        name: str,
        context: SpanContext,
        parent: SpanContext | None,
        attributes: Attributes,
        on_end: Callable[[RecordedSpan], None],
    ) -> None:
        self.name = name
        self.context = context
        self.parent = parent
        self.start_time = time.time_ns()
        self.end_time: int | None = None
        self.attributes: dict[str, Any] = _kept(attributes)
        self.status = _UNSET
        self.events: list[tuple[str, dict[str, Any], int]] = []
        self._on_end = on_end

    def get_span_context(self) -> SpanContext:
        return self.context

    def set_attributes(self, attributes: Mapping[str, AttributeValue]) -> None:
        for key, value in attributes.items():
            self.set_attribute(key, value)

    def set_attribute(self, key: str, value: AttributeValue) -> None:
        if self.end_time is None and value is not None:
            self.attributes[key] = _value(value)

    def add_event(
        self, name: str, attributes: Attributes = None, timestamp: int | None = None
    ) -> None:
        if self.end_time is None:
            self.events.append((name, dict(attributes or {}), timestamp or time.time_ns()))

    def update_name(self, name: str) -> None:
        if self.end_time is None:
            self.name = name

    def is_recording(self) -> bool:
        return self.end_time is None

    def set_status(self, status: Status | StatusCode, description: str | None = None) -> None:
        if self.end_time is None:
            self.status = status if isinstance(status, Status) else Status(status, description)

    def record_exception(
        self,
        exception: BaseException,
        attributes: Attributes = None,
        timestamp: int | None = None,
        escaped: bool = False,
    ) -> None:
        described = {
            "exception.type": type(exception).__qualname__,
            "exception.message": str(exception),
            "exception.escaped": str(escaped),
            **(attributes or {}),
        }
        self.add_event("exception", described, timestamp)

    def end(self, end_time: int | None = None) -> None:
        if self.end_time is not None:
            return
        self.end_time = end_time or time.time_ns()
        self._on_end(self)


class _Tracer(trace.Tracer):
    def __init__(self, on_end: Callable[[RecordedSpan], None]) -> None:
        self._on_end = on_end
        self._bits = random.getrandbits

    def start_span(
        self,
        name: str,
        context: Context | None = None,
        kind: SpanKind = SpanKind.INTERNAL,
        attributes: Attributes = None,
        links: Sequence[Link] | None = None,
        start_time: int | None = None,
        record_exception: bool = True,
        set_status_on_exception: bool = True,
    ) -> RecordedSpan:
        given = trace.get_current_span(context).get_span_context()
        parent = given if given.is_valid else None
        trace_id = given.trace_id if parent is not None else self._bits(128) or 1
        own = SpanContext(trace_id, self._bits(64) or 1, is_remote=False, trace_flags=_SAMPLED)
        span = RecordedSpan(name, own, parent, attributes, self._on_end)
        if start_time is not None:
            span.start_time = start_time
        return span

    @contextmanager
    def start_as_current_span(  # type: ignore[override]  # the API's is a decorated method
        self,
        name: str,
        context: Context | None = None,
        kind: SpanKind = SpanKind.INTERNAL,
        attributes: Attributes = None,
        links: Sequence[Link] | None = None,
        start_time: int | None = None,
        record_exception: bool = True,
        set_status_on_exception: bool = True,
        end_on_exit: bool = True,
    ) -> Generator[trace.Span]:
        span = self.start_span(name, context, kind, attributes, links, start_time)
        with trace.use_span(span, end_on_exit=end_on_exit) as current:
            yield current


class RecordingTracerProvider(trace.TracerProvider):
    """Gives tracers whose spans call ``on_end`` when they end (and go nowhere else)."""

    def __init__(self, on_end: Callable[[RecordedSpan], None]) -> None:
        self._tracer = _Tracer(on_end)

    def get_tracer(
        self,
        instrumenting_module_name: str,
        instrumenting_library_version: str | None = None,
        schema_url: str | None = None,
        attributes: Attributes | None = None,
    ) -> trace.Tracer:
        return self._tracer
