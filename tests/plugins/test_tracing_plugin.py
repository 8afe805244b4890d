"""``TracingPlugin``: span structure and GenAI attributes, checked with the OTel SDK."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Mapping
from typing import Any

import pytest

from eventide import InMemoryRunner, LlmResponse, RunConfig, StreamingMode, types
from eventide.agents import LlmAgent
from eventide.plugins.tracing_plugin import TracingPlugin
from eventide.testing import ScriptedModel, text_response, tool_call_response

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
def plugin(exporter: InMemorySpanExporter) -> TracingPlugin:
    provider = sdk_trace.TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    return TracingPlugin(tracer_provider=provider)


def with_usage(response: LlmResponse, prompt: int, output: int) -> LlmResponse:
    response.usage_metadata = types.UsageMetadata(
        prompt_token_count=prompt, candidates_token_count=output
    )
    response.model_version = "scripted-v1"
    return response


async def run(agent: LlmAgent, plugin: TracingPlugin, message: str, **config: Any) -> list[Any]:
    runner = InMemoryRunner(agent, app_name="traced", plugins=[plugin])
    await runner.session_service.create_session(app_name="traced", user_id="u", session_id="s")
    return [
        e
        async for e in runner.run_async(
            user_id="u", session_id="s", new_message=message, run_config=RunConfig(**config)
        )
    ]


def attrs(span: ReadableSpan) -> Mapping[str, Any]:
    """A finished span's attributes (every span the plugin ends has some)."""
    assert span.attributes is not None, span.name
    return span.attributes


def tree(exporter: InMemorySpanExporter) -> dict[str, Any]:
    """Span name -> span, checking every span's parent is a span of the same trace."""
    spans = exporter.get_finished_spans()
    by_id = {span.context.span_id: span for span in spans}
    for span in spans:
        if span.parent is not None:
            assert span.parent.span_id in by_id, f"{span.name} has a parent that never ended"
    return {span.name: span for span in spans}


def parent_name(spans: dict[str, Any], name: str) -> str | None:
    parent = spans[name].parent
    if parent is None:
        return None
    return next(str(s.name) for s in spans.values() if s.context.span_id == parent.span_id)


async def test_invocation_agent_model_and_tool_spans_nest_with_genai_attributes(
    plugin: TracingPlugin, exporter: InMemorySpanExporter
) -> None:
    """A traced invocation with a tool call: the invocation contains the agent run, which
    contains both model calls and the tool call."""

    def get_weather(city: str) -> str:
        """Weather for a city."""
        return "sunny"

    model = ScriptedModel(
        responses=[
            with_usage(tool_call_response(("get_weather", {"city": "Oslo"})), 12, 3),
            with_usage(text_response("Sunny in Oslo."), 20, 5),
        ]
    )
    agent = LlmAgent(name="forecaster", model=model, tools=[get_weather])
    events = await run(agent, plugin, "weather in Oslo?")
    call_id = events[0].get_function_calls()[0].id

    spans = exporter.get_finished_spans()
    assert sorted(s.name for s in spans) == [
        "chat scripted",
        "chat scripted",
        "execute_tool get_weather",
        "invocation traced",
        "invoke_agent forecaster",
    ]
    named = tree(exporter)
    assert parent_name(named, "invocation traced") is None
    assert parent_name(named, "invoke_agent forecaster") == "invocation traced"
    assert parent_name(named, "execute_tool get_weather") == "invoke_agent forecaster"
    chats = [s for s in spans if s.name == "chat scripted"]
    agent_span = named["invoke_agent forecaster"]
    assert all(
        c.parent is not None and c.parent.span_id == agent_span.context.span_id for c in chats
    )
    assert len({s.context.trace_id for s in spans}) == 1

    assert attrs(named["invocation traced"])["gen_ai.conversation.id"] == "s"
    assert attrs(named["invocation traced"])["eventide.invocation_id"] == events[0].invocation_id
    assert attrs(agent_span)["gen_ai.operation.name"] == "invoke_agent"
    assert attrs(agent_span)["gen_ai.agent.name"] == "forecaster"
    first, second = sorted(chats, key=lambda s: s.start_time or 0)
    assert {k: attrs(first)[k] for k in attrs(first) if k.startswith("gen_ai.")} == {
        "gen_ai.operation.name": "chat",
        "gen_ai.request.model": "scripted",
        "gen_ai.agent.name": "forecaster",
        "gen_ai.usage.input_tokens": 12,
        "gen_ai.usage.output_tokens": 3,
        "gen_ai.response.model": "scripted-v1",
    }
    assert attrs(second)["gen_ai.usage.input_tokens"] == 20
    tool = attrs(named["execute_tool get_weather"])
    assert tool["gen_ai.operation.name"] == "execute_tool"
    assert tool["gen_ai.tool.name"] == "get_weather"
    assert tool["gen_ai.tool.call.id"] == call_id
    assert "gen_ai.tool.call.arguments" not in tool  # content capture is opt-in
    # The tool ran between the two model calls.
    assert first.end_time <= named["execute_tool get_weather"].start_time <= second.start_time


async def test_transfer_nests_the_target_agent_under_the_agent_that_transferred(
    plugin: TracingPlugin, exporter: InMemorySpanExporter
) -> None:
    """transfer_to_agent: the target agent runs inside the transferring agent's run."""
    billing = LlmAgent(
        name="billing", model=ScriptedModel(responses=["Refund sent."]), description="Refunds."
    )
    root = LlmAgent(
        name="desk",
        model=ScriptedModel(
            responses=[tool_call_response(("transfer_to_agent", {"agent_name": "billing"}))]
        ),
        sub_agents=[billing],
    )
    await run(root, plugin, "refund please")
    named = tree(exporter)
    assert parent_name(named, "invoke_agent desk") == "invocation traced"
    assert parent_name(named, "invoke_agent billing") == "invoke_agent desk"
    assert parent_name(named, "execute_tool transfer_to_agent") == "invoke_agent desk"


async def test_streamed_call_is_one_span_ended_by_the_complete_response(
    plugin: TracingPlugin, exporter: InMemorySpanExporter
) -> None:
    """Streaming: partial chunks do not end the model span; the complete response does."""
    response = with_usage(text_response("a fairly long streamed answer"), 4, 6)
    model = ScriptedModel(responses=[response], stream_chunk_size=5)
    events = await run(
        LlmAgent(name="streamer", model=model), plugin, "hi", streaming_mode=StreamingMode.SSE
    )
    assert sum(1 for e in events if e.partial) > 1
    chats = [s for s in exporter.get_finished_spans() if s.name.startswith("chat")]
    assert len(chats) == 1
    assert attrs(chats[0])["gen_ai.usage.output_tokens"] == 6


async def test_model_error_response_marks_the_span_as_an_error(
    plugin: TracingPlugin, exporter: InMemorySpanExporter
) -> None:
    """Error events: a response with error_code becomes an error event and an error span."""
    failing = LlmResponse(error_code="RATE_LIMIT", error_message="slow down")
    await run(LlmAgent(name="busy", model=ScriptedModel(responses=[failing])), plugin, "hi")
    chat = next(s for s in exporter.get_finished_spans() if s.name.startswith("chat"))
    assert chat.status.status_code is StatusCode.ERROR
    assert chat.status.description == "slow down"
    assert attrs(chat)["eventide.error_code"] == "RATE_LIMIT"


async def test_invocation_that_raises_has_its_spans_ended_as_abandoned_later(
    exporter: InMemorySpanExporter,
) -> None:
    """An invocation that raises never reaches after_run; its open spans are ended (as
    errors) once newer invocations push it out, so a server does not leak them."""
    import eventide.plugins.tracing_plugin as tracing_module

    provider = sdk_trace.TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    plugin = TracingPlugin(tracer_provider=provider)
    original = tracing_module._MAX_OPEN_INVOCATIONS
    tracing_module._MAX_OPEN_INVOCATIONS = 1
    try:
        broken = LlmAgent(name="broken", model=ScriptedModel(responses=[RuntimeError("boom")]))
        with pytest.raises(RuntimeError, match="boom"):
            await run(broken, plugin, "hi")
        assert [s.name for s in exporter.get_finished_spans()] == ["chat scripted"]
        ok = LlmAgent(name="fine", model=ScriptedModel(responses=["ok"]))
        await run(ok, plugin, "hi")
    finally:
        tracing_module._MAX_OPEN_INVOCATIONS = original
    spans = exporter.get_finished_spans()
    named = {s.name: s for s in spans}
    broken_chat = next(s for s in spans if attrs(s).get("gen_ai.agent.name") == "broken")
    assert broken_chat.status.status_code is StatusCode.ERROR
    assert attrs(broken_chat)["error.type"] == "RuntimeError"
    assert named["invoke_agent broken"].status.status_code is StatusCode.ERROR
    invocations = [s.status.status_code for s in spans if s.name == "invocation traced"]
    assert invocations == [StatusCode.ERROR, StatusCode.UNSET]  # abandoned, then fine
    assert "invoke_agent fine" in named


def test_tracing_is_lazy_importing_eventide_loads_no_opentelemetry() -> None:
    """Off by default and cheap: neither `import eventide` nor importing the plugin module
    loads OpenTelemetry; only creating a TracingPlugin does."""
    code = (
        "import sys, eventide, eventide.plugins.tracing_plugin\n"
        "print(any(m.startswith('opentelemetry') for m in sys.modules))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    assert result.stdout.strip() == "False"


async def test_parallel_branches_nest_under_the_workflow_agent(
    plugin: TracingPlugin, exporter: InMemorySpanExporter
) -> None:
    """Concurrent branches (ParallelAgent): each branch's agent and model spans nest under
    the workflow agent's span, never under each other."""
    from eventide.agents import ParallelAgent

    left = LlmAgent(name="left", model=ScriptedModel(responses=["L"]))
    right = LlmAgent(name="right", model=ScriptedModel(responses=["R"]))
    runner = InMemoryRunner(
        ParallelAgent(name="fan", sub_agents=[left, right]), app_name="traced", plugins=[plugin]
    )
    await runner.session_service.create_session(app_name="traced", user_id="u", session_id="s")
    async for _ in runner.run_async(user_id="u", session_id="s", new_message="go"):
        pass
    spans = exporter.get_finished_spans()
    by_id = {s.context.span_id: s for s in spans}

    def parent(span: Any) -> str:
        return by_id[span.parent.span_id].name

    agents = {s.name: parent(s) for s in spans if s.name.startswith("invoke_agent")}
    assert agents == {
        "invoke_agent fan": "invocation traced",
        "invoke_agent left": "invoke_agent fan",
        "invoke_agent right": "invoke_agent fan",
    }
    chats = sorted(
        (attrs(s)["gen_ai.agent.name"], parent(s)) for s in spans if s.name.startswith("chat")
    )
    assert chats == [("left", "invoke_agent left"), ("right", "invoke_agent right")]
