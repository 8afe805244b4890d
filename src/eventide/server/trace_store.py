"""``TraceStore``: the spans :class:`TracingPlugin` records, kept in memory per invocation and
linked to the events they produced, served in the shape ADK's dev UI reads.

The server gives every app's Runner a :class:`TracingPlugin` on a private tracer provider
(never the global one) whose spans end into this store, plus
:class:`EventSpanLinker`, a plugin that links each model-response event to the model call
span that produced it and each tool-response event to its tool span. ADK's UI then finds,
per event, the ``generate_content`` span with ``gcp.vertex.agent.event_id``, and draws the
trace tree of the session.

The store is bounded: it keeps the spans of the last ``max_invocations`` invocations.
"""

from __future__ import annotations

import json
import threading
from collections import OrderedDict
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, cast

from eventide.plugins.base_plugin import BasePlugin
from eventide.types import camel_case_keys

if TYPE_CHECKING:
    from eventide.contexts import InvocationContext
    from eventide.events import Event
    from eventide.server.model_request_recorder import ModelRequestRecorder

__all__ = ["EventSpanLinker", "TraceStore", "build_trace_recording"]

_MODEL_OPERATION = "chat"
_RESPONSE_FIELDS = {"content", "error_code", "error_message", "usage_metadata", "finish_reason"}


@dataclass(slots=True)
class _Invocation:
    spans: list[Any] = field(default_factory=list)
    session_id: str | None = None
    # The last ended model-call span per (branch, agent), waiting for its event.
    last_model_span: dict[tuple[str, str], Any] = field(default_factory=dict)
    tool_spans: dict[str, Any] = field(default_factory=dict)
    # span id -> the event it produced
    events: dict[int, Event] = field(default_factory=dict)


class TraceStore:
    """Keeps finished spans per invocation (fed by the tracer provider of
    :func:`build_trace_recording`, or any OpenTelemetry SDK span processor).

    Args:
        max_invocations: how many invocations' spans to keep; the oldest go first.
    """

    def __init__(self, *, max_invocations: int = 2000) -> None:
        self.max_invocations = max_invocations
        self._invocations: OrderedDict[str, _Invocation] = OrderedDict()
        self._span_of_event: dict[str, tuple[str, Any]] = {}
        self._session_invocations: dict[str, dict[str, None]] = {}
        # Spans end on the server's event loop; the lock only guards against an exporter
        # thread of another processor calling in.
        self._lock = threading.Lock()

    def on_end(self, span: Any) -> None:
        """Keep a finished span under its invocation."""
        # Read, never changed: the span's own mapping (no copy per span).
        attributes: Mapping[str, Any] = span.attributes or {}
        invocation_id = attributes.get("eventide.invocation_id")
        if not isinstance(invocation_id, str):
            return
        with self._lock:
            state = self._invocation(invocation_id)
            state.spans.append(span)
            conversation = attributes.get("gen_ai.conversation.id")
            if isinstance(conversation, str):
                self._remember_session(state, invocation_id, conversation)
            operation = attributes.get("gen_ai.operation.name")
            if operation == _MODEL_OPERATION:
                key = (
                    str(attributes.get("eventide.branch", "")),
                    str(attributes.get("gen_ai.agent.name", "")),
                )
                state.last_model_span[key] = span
            elif operation == "execute_tool":
                state.tool_spans[str(attributes.get("gen_ai.tool.call.id", ""))] = span

    def clear(self) -> None:
        """Forget every span."""
        with self._lock:
            self._invocations.clear()
            self._span_of_event.clear()
            self._session_invocations.clear()

    def _remember_session(self, state: _Invocation, invocation_id: str, session_id: str) -> None:
        state.session_id = session_id
        self._session_invocations.setdefault(session_id, {})[invocation_id] = None

    def _invocation(self, invocation_id: str) -> _Invocation:
        state = self._invocations.get(invocation_id)
        if state is None:
            state = self._invocations[invocation_id] = _Invocation()
            while len(self._invocations) > self.max_invocations:
                dropped_id, dropped = self._invocations.popitem(last=False)
                for event in dropped.events.values():
                    self._span_of_event.pop(event.id, None)
                if dropped.session_id is not None:
                    left = self._session_invocations.get(dropped.session_id, {})
                    left.pop(dropped_id, None)
                    if not left:
                        self._session_invocations.pop(dropped.session_id, None)
        return state

    # --- linking events to spans ---
    def link_event(self, event: Event, *, session_id: str) -> None:
        """Link a committed event to the model-call or tool span that produced it."""
        invocation_id = event.invocation_id
        with self._lock:
            state = self._invocations.get(invocation_id)
            if state is None:
                return
            self._remember_session(state, invocation_id, session_id)
            span = None
            responses = event.get_function_responses()
            if responses:
                span = state.tool_spans.pop(responses[0].id or "", None)
            elif event.content is not None and event.content.role in (None, "model"):
                span = state.last_model_span.pop((event.branch or "", event.author), None)
            elif event.error_code is not None:
                span = state.last_model_span.pop((event.branch or "", event.author), None)
            if span is None:
                return
            state.events[span.context.span_id] = event
            self._span_of_event[event.id] = (invocation_id, span)

    # --- reading, in ADK's shape ---
    def session_spans(
        self, session_id: str, recorder: ModelRequestRecorder | None
    ) -> list[dict[str, Any]]:
        """Every kept span of the session's invocations, oldest first, in ADK's shape."""
        with self._lock:
            invocation_ids = list(self._session_invocations.get(session_id, {}))
            picked = [
                (state, span)
                for invocation_id in invocation_ids
                if (state := self._invocations.get(invocation_id)) is not None
                for span in state.spans
            ]
        served = [_adk_span(span, state, recorder) for state, span in picked]
        served.sort(key=lambda s: s["start_time"])
        return served

    def event_span(
        self, event_id: str, recorder: ModelRequestRecorder | None
    ) -> dict[str, Any] | None:
        """The span that produced ``event_id`` as ADK answers it (its attributes plus
        ``trace_id`` and ``span_id``), or None when none is kept."""
        with self._lock:
            found = self._span_of_event.get(event_id)
            state = self._invocations.get(found[0]) if found is not None else None
        if found is None or state is None:
            return None
        served = _adk_span(found[1], state, recorder)
        return {
            **served["attributes"],
            "trace_id": served["trace_id"],
            "span_id": served["span_id"],
        }


def _adk_span(
    span: Any, state: _Invocation, recorder: ModelRequestRecorder | None
) -> dict[str, Any]:
    context = span.context
    given: dict[str, Any] = dict(span.attributes or {})
    attributes: dict[str, Any] = {
        key: list(cast("tuple[object, ...]", value)) if isinstance(value, tuple) else value
        for key, value in given.items()
    }
    invocation_id = attributes.get("eventide.invocation_id")
    if state.session_id is not None:
        attributes["gen_ai.conversation.id"] = state.session_id
    if isinstance(invocation_id, str):
        attributes["gcp.vertex.agent.invocation_id"] = invocation_id
    event = state.events.get(context.span_id)
    if event is not None:
        attributes["gcp.vertex.agent.event_id"] = event.id
        if attributes.get("gen_ai.operation.name") == _MODEL_OPERATION:
            # ADK's UI recognises model calls by its own operation name.
            attributes["gen_ai.operation.name"] = "generate_content"
            request = recorder.request_json(event.id) if recorder is not None else None
            if request is not None:
                attributes["gcp.vertex.agent.llm_request"] = json.dumps(request)
            response = event.model_dump(mode="json", exclude_none=True, include=_RESPONSE_FIELDS)
            attributes["gcp.vertex.agent.llm_response"] = json.dumps(camel_case_keys(response))
    parent = span.parent
    return {
        "name": span.name,
        "start_time": span.start_time,
        "end_time": span.end_time,
        "trace_id": context.trace_id,
        "span_id": context.span_id,
        "parent_span_id": parent.span_id if parent is not None else None,
        "attributes": attributes,
        "logs": [],
    }


class EventSpanLinker(BasePlugin):
    """Links each committed event to the span that produced it, in a :class:`TraceStore`."""

    def __init__(self, store: TraceStore, *, name: str = "eventide_event_span_linker") -> None:
        super().__init__(name)
        self.store = store

    async def on_event_callback(
        self, *, invocation_context: InvocationContext, event: Event
    ) -> Event | None:
        if not event.partial:
            self.store.link_event(event, session_id=invocation_context.session.id)
        return None


def build_trace_recording(
    store: TraceStore,
) -> list[BasePlugin] | None:
    """The plugins that record an app's spans into ``store``: a :class:`TracingPlugin` on a
    private tracer provider whose spans go straight to the store (see
    :mod:`eventide.server.span_recording`) and the :class:`EventSpanLinker`. None when the
    OpenTelemetry API is not installed (``pip install 'eventide[tracing]'``)."""
    try:
        from eventide.server.span_recording import RecordingTracerProvider
    except ImportError:
        return None
    from eventide.plugins.tracing_plugin import TracingPlugin

    provider = RecordingTracerProvider(store.on_end)
    return [
        TracingPlugin(tracer_provider=provider, name="eventide_dev_traces"),
        EventSpanLinker(store),
    ]
