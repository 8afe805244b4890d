"""The server's own span recording: spans the tracing plugin starts end into the callback."""

from __future__ import annotations

from opentelemetry import trace
from opentelemetry.trace import StatusCode

from eventide.server.span_recording import RecordedSpan, RecordingTracerProvider


def test_spans_keep_parents_attributes_status_and_exceptions() -> None:
    ended: list[RecordedSpan] = []
    tracer = trace.get_tracer("test", tracer_provider=RecordingTracerProvider(ended.append))
    root = tracer.start_span("invocation app", attributes={"a": "1", "dropped": None})
    child = tracer.start_span(
        "chat m", context=trace.set_span_in_context(root), attributes={"list": ["x", "y"]}
    )
    child.set_attribute("gen_ai.usage.input_tokens", 3)
    child.set_status(StatusCode.ERROR, "bad")
    child.record_exception(ValueError("boom"))
    child.end()
    child.end()  # a second end changes nothing
    child.set_attribute("late", 1)
    root.end()

    assert [span.name for span in ended] == ["chat m", "invocation app"]
    recorded_child, recorded_root = ended
    assert recorded_root.parent is None
    assert recorded_child.parent == recorded_root.context
    assert recorded_child.context.trace_id == recorded_root.context.trace_id
    assert recorded_child.context.span_id != recorded_root.context.span_id
    assert recorded_root.attributes == {"a": "1"}
    assert recorded_child.attributes == {"list": ("x", "y"), "gen_ai.usage.input_tokens": 3}
    assert recorded_child.status.status_code is StatusCode.ERROR
    assert recorded_child.status.description == "bad"
    [(event_name, event_attributes, _)] = recorded_child.events
    assert event_name == "exception"
    assert event_attributes["exception.type"] == "ValueError"
    assert event_attributes["exception.message"] == "boom"
    end_time = recorded_child.end_time
    assert end_time is not None and end_time >= recorded_child.start_time
    assert not recorded_child.is_recording()


def test_spans_started_as_current_end_on_exit() -> None:
    ended: list[RecordedSpan] = []
    tracer = RecordingTracerProvider(ended.append).get_tracer("test")
    with tracer.start_as_current_span("outer") as outer:
        assert trace.get_current_span() is outer
        inner = tracer.start_span("inner")
        inner.end()
    assert [span.name for span in ended] == ["inner", "outer"]
    assert ended[0].parent == ended[1].context


def test_a_span_keeps_its_own_attributes_and_status() -> None:
    """A span copies the attributes it is started with (the caller's dict may change after)
    and one span's status never shows on another (they start from one unset status)."""
    ended: list[RecordedSpan] = []
    tracer = RecordingTracerProvider(ended.append).get_tracer("test")
    given: dict[str, str | int] = {"a": "1", "n": 2}
    first = tracer.start_span("first", attributes=given)
    given["a"] = "changed"
    given["late"] = "x"
    second = tracer.start_span("second")
    first.set_status(StatusCode.ERROR, "bad")
    first.end()
    second.end()
    assert ended[0].attributes == {"a": "1", "n": 2}
    assert ended[0].status.status_code is StatusCode.ERROR
    assert ended[1].status.status_code is StatusCode.UNSET
    assert ended[1].attributes == {}
