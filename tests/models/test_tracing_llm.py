"""``TracingLlm``: a span around each call of any model, shaped like ``TracingPlugin``'s."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import pytest

from eventide import InMemoryRunner, LlmResponse, RunConfig, StreamingMode, types
from eventide.agents import LlmAgent
from eventide.errors import ModelError
from eventide.models import TracingLlm
from eventide.models.llm_request import LlmRequest
from eventide.models.openai_llm import OpenAILlm
from eventide.plugins.tracing_plugin import TracingPlugin
from eventide.testing import ScriptedModel, text_response, tool_call_response
from tests.models.conftest import collect, text
from tests.models.fake_provider_servers import FakeProviderServer, Reply

sdk_trace = pytest.importorskip("opentelemetry.sdk.trace")
from opentelemetry.sdk.trace import ReadableSpan  # noqa: E402
from opentelemetry.sdk.trace.export import SimpleSpanProcessor  # noqa: E402
from opentelemetry.sdk.trace.export.in_memory_span_exporter import (  # noqa: E402
    InMemorySpanExporter,
)
from opentelemetry.trace import StatusCode  # noqa: E402


@pytest.fixture
def exporter() -> InMemorySpanExporter:
    return InMemorySpanExporter()


@pytest.fixture
def provider(exporter: InMemorySpanExporter) -> Any:
    tracer_provider = sdk_trace.TracerProvider()
    tracer_provider.add_span_processor(SimpleSpanProcessor(exporter))
    return tracer_provider


def attrs(span: ReadableSpan) -> Mapping[str, Any]:
    assert span.attributes is not None, span.name
    return span.attributes


def genai(span: ReadableSpan) -> dict[str, Any]:
    return {k: v for k, v in attrs(span).items() if k.startswith("gen_ai.")}


def with_usage(response: LlmResponse, prompt: int, output: int) -> LlmResponse:
    response.usage_metadata = types.UsageMetadata(
        prompt_token_count=prompt, candidates_token_count=output
    )
    response.model_version = "scripted-v1"
    response.finish_reason = "STOP"
    return response


def request(**config: Any) -> LlmRequest:
    return LlmRequest(
        model="scripted",
        contents=[types.Content(role="user", parts=[types.Part(text="hi")])],
        config=types.GenerateContentConfig(**config),
    )


async def test_tracing_llm_records_the_spans_tracing_plugin_records(
    provider: Any, exporter: InMemorySpanExporter
) -> None:
    """Rule (connectors, tracing): TracingLlm around any model records each call as a
    ``chat {model}`` span with the GenAI attributes TracingPlugin gives its model spans."""

    def get_weather(city: str) -> str:
        """Weather for a city."""
        return "sunny"

    scripted = ScriptedModel(
        responses=[
            with_usage(tool_call_response(("get_weather", {"city": "Oslo"})), 12, 3),
            with_usage(text_response("Sunny in Oslo."), 20, 5),
        ]
    )
    agent = LlmAgent(
        name="forecaster",
        model=TracingLlm(llm=scripted, tracer_provider=provider),
        tools=[get_weather],
        generate_content_config=types.GenerateContentConfig(temperature=0.5, max_output_tokens=64),
    )
    runner = InMemoryRunner(
        agent, app_name="traced", plugins=[TracingPlugin(tracer_provider=provider)]
    )
    await runner.session_service.create_session(app_name="traced", user_id="u", session_id="s")
    events = [
        e async for e in runner.run_async(user_id="u", session_id="s", new_message="weather?")
    ]
    assert events[-1].content is not None and events[-1].content.text == "Sunny in Oslo."

    spans = exporter.get_finished_spans()
    chats = [s for s in spans if s.name == "chat scripted"]
    # Two calls, each traced by the plugin (in the agent's span) and by the wrapper.
    by_plugin = sorted(
        (s for s in chats if "eventide.invocation_id" in attrs(s)), key=lambda s: s.start_time or 0
    )
    by_wrapper = sorted(
        (s for s in chats if "eventide.invocation_id" not in attrs(s)),
        key=lambda s: s.start_time or 0,
    )
    assert len(by_plugin) == len(by_wrapper) == 2
    for plugin_span, wrapper_span in zip(by_plugin, by_wrapper, strict=True):
        expected = genai(plugin_span)
        del expected["gen_ai.agent.name"]  # the plugin knows the agent; a model does not
        assert genai(wrapper_span) == expected
    assert genai(by_wrapper[0]) == {
        "gen_ai.operation.name": "chat",
        "gen_ai.request.model": "scripted",
        "gen_ai.request.temperature": 0.5,
        "gen_ai.request.max_tokens": 64,
        "gen_ai.usage.input_tokens": 12,
        "gen_ai.usage.output_tokens": 3,
        "gen_ai.response.model": "scripted-v1",
        "gen_ai.response.finish_reasons": ("STOP",),
    }
    assert attrs(by_wrapper[0])["eventide.stream"] is False
    assert "gen_ai.input.messages" not in attrs(by_wrapper[0])  # content capture is opt-in
    assert all(s.status.status_code is StatusCode.UNSET for s in by_wrapper)


async def test_tracing_llm_marks_the_first_chunk_of_a_stream(
    provider: Any, exporter: InMemorySpanExporter
) -> None:
    """Rule (connectors, tracing): a streamed call is one span, with a ``first_chunk``
    event at the first partial response (time to first token)."""
    scripted = ScriptedModel(responses=["Hello there, streaming."], stream_chunk_size=5)
    agent = LlmAgent(name="streamer", model=TracingLlm(llm=scripted, tracer_provider=provider))
    runner = InMemoryRunner(agent, app_name="traced")
    await runner.session_service.create_session(app_name="traced", user_id="u", session_id="s")
    events = [
        e
        async for e in runner.run_async(
            user_id="u",
            session_id="s",
            new_message="hi",
            run_config=RunConfig(streaming_mode=StreamingMode.SSE),
        )
    ]
    assert sum(1 for e in events if e.partial) == 5
    [span] = exporter.get_finished_spans()
    assert attrs(span)["eventide.stream"] is True
    assert [event.name for event in span.events] == ["first_chunk"]
    assert span.start_time is not None and span.end_time is not None
    assert span.start_time <= span.events[0].timestamp <= span.end_time


async def test_tracing_llm_records_failures_and_errors_of_a_real_connector(
    provider: Any, exporter: InMemorySpanExporter, server: FakeProviderServer
) -> None:
    """Rule (connectors, tracing): a call that failed at the provider is an error span
    naming the error code; the error response still reaches the caller."""
    server.add(Reply(status=400, body={"error": {"message": "bad model"}}))
    llm = TracingLlm(
        llm=OpenAILlm(model="m", base_url=f"{server.url}/v1", api_key="k", max_retries=0),
        tracer_provider=provider,
    )
    [response] = await collect(llm.generate_content_async(request()))
    await llm.close()
    assert response.error_code == "400"
    [span] = exporter.get_finished_spans()
    assert span.name == "chat scripted"  # the request's model name wins, as in the plugin
    assert span.status.status_code is StatusCode.ERROR
    assert "bad model" in (span.status.description or "")
    assert attrs(span)["eventide.error_code"] == "400"
    assert attrs(span)["error.type"] == "model_error"


async def test_tracing_llm_records_an_exception_and_lets_it_through(
    provider: Any, exporter: InMemorySpanExporter
) -> None:
    """Rule (connectors, tracing): an exception from the model is recorded on the span
    and raised to the caller unchanged."""
    failure = ModelError("boom", error_code="UNAVAILABLE")
    llm = TracingLlm(llm=ScriptedModel(responses=[failure]), tracer_provider=provider)
    with pytest.raises(ModelError, match="boom"):
        await collect(llm.generate_content_async(request()))
    [span] = exporter.get_finished_spans()
    assert span.status.status_code is StatusCode.ERROR
    assert attrs(span)["error.type"] == "ModelError"
    assert [event.name for event in span.events] == ["exception"]


async def test_tracing_llm_ends_the_span_of_a_call_its_caller_abandoned(
    provider: Any, exporter: InMemorySpanExporter
) -> None:
    """Rule (connectors, tracing): a call whose caller stops reading before the complete
    response still ends its span, marked incomplete (no span leaks)."""
    chunks = [text_response("a"), text_response("b"), text_response("ab")]
    chunks[0].partial = chunks[1].partial = True
    llm = TracingLlm(llm=ScriptedModel(responses=[chunks]), tracer_provider=provider)
    responses = llm.generate_content_async(request(), stream=True)
    first = await anext(responses)
    assert first.partial
    await responses.aclose()
    [span] = exporter.get_finished_spans()
    assert attrs(span)["error.type"] == "incomplete"
    assert span.status.status_code is StatusCode.ERROR


async def test_tracing_llm_nests_under_the_current_span_and_captures_content_on_request(
    provider: Any, exporter: InMemorySpanExporter
) -> None:
    """Rule (connectors, tracing): the span's parent is the span current at the call;
    ``capture_content`` records the messages, instruction and answer as JSON."""
    llm = TracingLlm(
        llm=ScriptedModel(responses=["Hi!"]), tracer_provider=provider, capture_content=True
    )
    tracer = provider.get_tracer("test")
    with tracer.start_as_current_span("my script"):
        [response] = await collect(
            llm.generate_content_async(request(system_instruction="Be brief."))
        )
    assert text(response) == "Hi!"
    spans = {s.name: s for s in exporter.get_finished_spans()}
    chat, outer = spans["chat scripted"], spans["my script"]
    assert chat.parent is not None and chat.parent.span_id == outer.context.span_id
    assert json.loads(attrs(chat)["gen_ai.input.messages"]) == [
        {"role": "user", "parts": [{"text": "hi"}]}
    ]
    assert attrs(chat)["gen_ai.system_instructions"] == "Be brief."
    assert json.loads(attrs(chat)["gen_ai.output.messages"]) == [
        {"role": "model", "parts": [{"text": "Hi!"}]}
    ]


class _Counted(ScriptedModel):
    prepared: int = 0
    closed: int = 0

    def prepare(self) -> None:
        self.prepared += 1

    async def close(self) -> None:
        self.closed += 1


async def test_tracing_llm_prepares_and_closes_what_it_wraps() -> None:
    """Rule (connectors, tracing): the wrapper takes the wrapped model's name and
    prepares and closes it."""
    inner = _Counted(model="gpt-x")
    llm = TracingLlm(llm=inner)
    assert llm.model == "gpt-x"
    llm.prepare()
    await llm.close()
    assert (inner.prepared, inner.closed) == (1, 1)
