"""Multi-turn tool conversations through Runner + LlmAgent + FunctionTool, per connector.

Each connector runs its real SDK against the local fake server, which plays the model: it
asks for a tool call, then answers with text once the tool's result is sent back. The test
checks the whole event sequence and that every tool result went back paired with its call.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest

from eventide import LlmAgent
from eventide.models.anthropic_llm import AnthropicLlm
from eventide.models.base_llm import BaseLlm
from eventide.models.gemini_llm import GeminiLlm
from eventide.models.openai_llm import OpenAILlm
from eventide.run_config import RunConfig, StreamingMode
from eventide.tools.function_tool import FunctionTool
from tests.agents.llm_helpers import start, turn
from tests.event_summary import summarize
from tests.models.fake_provider_servers import (
    FakeProviderServer,
    Reply,
    anthropic_sse,
    chat_sse,
)
from tests.models.test_gemini_llm import answer
from tests.models.test_openai_llm import RESPONSE_OBJECT, chunk, completion

pytestmark = pytest.mark.filterwarnings(
    "ignore:Inheritance class AiohttpClientSession:DeprecationWarning"
)


def get_weather(city: str) -> dict[str, Any]:
    """Current temperature of a city."""
    return {"temp_c": {"Paris": 18, "Oslo": 4}[city]}


@dataclass
class Provider:
    make: Callable[[FakeProviderServer], BaseLlm]
    call: Callable[[str, str], Reply]
    text: Callable[[str], Reply]
    # (call ids, result ids) found in a request body, in order.
    pairs: Callable[[dict[str, Any]], tuple[list[str | None], list[str | None]]]


def _chat_pairs(body: dict[str, Any]) -> tuple[list[str | None], list[str | None]]:
    calls = [c["id"] for m in body["messages"] for c in m.get("tool_calls") or ()]
    results = [m["tool_call_id"] for m in body["messages"] if m["role"] == "tool"]
    return calls, results


def _responses_pairs(body: dict[str, Any]) -> tuple[list[str | None], list[str | None]]:
    calls = [i["call_id"] for i in body["input"] if i.get("type") == "function_call"]
    results = [i["call_id"] for i in body["input"] if i.get("type") == "function_call_output"]
    return calls, results


def _anthropic_pairs(body: dict[str, Any]) -> tuple[list[str | None], list[str | None]]:
    blocks = [b for m in body["messages"] for b in m["content"]]
    calls = [b["id"] for b in blocks if b["type"] == "tool_use"]
    results = [b["tool_use_id"] for b in blocks if b["type"] == "tool_result"]
    return calls, results


def _gemini_pairs(body: dict[str, Any]) -> tuple[list[str | None], list[str | None]]:
    parts = [p for c in body["contents"] for p in c["parts"]]
    calls = [p["functionCall"].get("id") for p in parts if "functionCall" in p]
    results = [p["functionResponse"].get("id") for p in parts if "functionResponse" in p]
    return calls, results


def _responses_reply(output: list[dict[str, Any]]) -> Reply:
    return Reply(body={**RESPONSE_OBJECT, "output": output})


def _anthropic_reply(content: list[dict[str, Any]], stop: str) -> Reply:
    return Reply(
        body={
            "id": "msg_1",
            "type": "message",
            "role": "assistant",
            "model": "claude-test",
            "content": content,
            "stop_reason": stop,
            "usage": {"input_tokens": 5, "output_tokens": 5},
        }
    )


PROVIDERS = {
    "openai_chat": Provider(
        make=lambda s: OpenAILlm(model="gpt-test", api_key="k", base_url=f"{s.url}/v1"),
        call=lambda cid, city: Reply(
            body=completion(
                {
                    "role": "assistant",
                    "content": None,
                    "tool_calls": [
                        {
                            "id": cid,
                            "type": "function",
                            "function": {
                                "name": "get_weather",
                                "arguments": f'{{"city":"{city}"}}',
                            },
                        }
                    ],
                },
                finish="tool_calls",
            )
        ),
        text=lambda t: Reply(body=completion({"role": "assistant", "content": t})),
        pairs=_chat_pairs,
    ),
    "openai_responses": Provider(
        make=lambda s: OpenAILlm(
            model="gpt-test", api="responses", api_key="k", base_url=f"{s.url}/v1"
        ),
        call=lambda cid, city: _responses_reply(
            [
                {
                    "id": "fc_1",
                    "type": "function_call",
                    "call_id": cid,
                    "name": "get_weather",
                    "arguments": f'{{"city":"{city}"}}',
                    "status": "completed",
                }
            ]
        ),
        text=lambda t: _responses_reply(
            [
                {
                    "id": "msg_1",
                    "type": "message",
                    "role": "assistant",
                    "status": "completed",
                    "content": [{"type": "output_text", "text": t, "annotations": []}],
                }
            ]
        ),
        pairs=_responses_pairs,
    ),
    "anthropic": Provider(
        make=lambda s: AnthropicLlm(model="claude-test", api_key="k", base_url=s.url),
        call=lambda cid, city: _anthropic_reply(
            [{"type": "tool_use", "id": cid, "name": "get_weather", "input": {"city": city}}],
            "tool_use",
        ),
        text=lambda t: _anthropic_reply([{"type": "text", "text": t}], "end_turn"),
        pairs=_anthropic_pairs,
    ),
    # Gemini omits call ids: the connector numbers them and keeps them out of the request.
    "gemini": Provider(
        make=lambda s: GeminiLlm(model="gemini-test", api_key="k", base_url=s.url),
        call=lambda cid, city: Reply(
            body=answer([{"functionCall": {"name": "get_weather", "args": {"city": city}}}])
        ),
        text=lambda t: Reply(body=answer([{"text": t}])),
        pairs=_gemini_pairs,
    ),
}


def _expected_turn(city: str, temp: int, text: str) -> list[tuple[str, str, Any]]:
    return [
        ("weather", "call", (("get_weather", (("city", city),)),)),
        ("weather", "response", (("get_weather", (("temp_c", temp),)),)),
        ("weather", "text", text),
    ]


@pytest.mark.parametrize("name", sorted(PROVIDERS))
async def test_two_turn_tool_conversation(server: FakeProviderServer, name: str) -> None:
    """Spec: a tool call event, its function response event (same id), then the final
    text event (is_final_response) per turn; the second turn's request carries the whole
    history with every result paired to its call."""
    provider = PROVIDERS[name]
    server.add(
        provider.call("call_p1", "Paris"),
        provider.text("18C in Paris."),
        provider.call("call_o1", "Oslo"),
        provider.text("4C in Oslo."),
    )
    agent = LlmAgent(
        name="weather",
        model=provider.make(server),
        instruction="Answer with the weather tool.",
        tools=[FunctionTool(get_weather)],
    )
    runner, session_id = await start(agent)
    first = await turn(runner, session_id, "Weather in Paris?")
    second = await turn(runner, session_id, "And Oslo?")
    await runner.close()

    assert summarize(first) == _expected_turn("Paris", 18, "18C in Paris.")
    assert summarize(second) == _expected_turn("Oslo", 4, "4C in Oslo.")
    assert [e.is_final_response() for e in first + second] == [False, False, True] * 2
    call_ids = [e.get_function_calls()[0].id for e in (first[0], second[0])]
    response_ids = [e.get_function_responses()[0].id for e in (first[1], second[1])]
    assert call_ids == response_ids
    assert all(call_ids)
    assert len(server.requests) == 4
    calls, results = provider.pairs(server.bodies[3])
    assert len(calls) == len(results) == 2
    assert calls == results
    if name == "gemini":
        assert calls == [None, None]  # generated ids are never sent to Gemini
    else:
        assert calls == ["call_p1", "call_o1"]


async def test_streamed_tool_conversation(server: FakeProviderServer) -> None:
    """With SSE streaming, partial text events precede the final one; the tool call
    (streamed in argument fragments) appears once, complete."""
    call_chunks = [
        chunk(
            {
                "tool_calls": [
                    {
                        "index": 0,
                        "id": "call_s",
                        "type": "function",
                        "function": {"name": "get_weather", "arguments": '{"ci'},
                    }
                ]
            }
        ),
        chunk({"tool_calls": [{"index": 0, "function": {"arguments": 'ty": "Paris"}'}}]}),
        chunk({}, finish="tool_calls"),
    ]
    text_chunks = [chunk({"content": "18C "}), chunk({"content": "in Paris."}, finish="stop")]
    server.add(Reply(sse=chat_sse(call_chunks)), Reply(sse=chat_sse(text_chunks)))
    agent = LlmAgent(
        name="weather",
        model=OpenAILlm(model="gpt-test", api_key="k", base_url=f"{server.url}/v1"),
        tools=[FunctionTool(get_weather)],
    )
    runner, session_id = await start(agent)
    events = await turn(
        runner, session_id, "Paris?", run_config=RunConfig(streaming_mode=StreamingMode.SSE)
    )
    await runner.close()
    assert summarize(events) == [
        ("weather", "call", (("get_weather", (("city", "Paris"),)),)),
        ("weather", "response", (("get_weather", (("temp_c", 18),)),)),
        ("weather", "partial", "18C "),
        ("weather", "partial", "in Paris."),
        ("weather", "text", "18C in Paris."),
    ]
    assert events[-1].is_final_response()


async def test_streamed_anthropic_error_reaches_the_caller_as_an_event(
    server: FakeProviderServer,
) -> None:
    """A provider error mid-stream ends the turn with an error event, not an exception."""
    events_sse = anthropic_sse(
        [
            {
                "type": "message_start",
                "message": {
                    "id": "m",
                    "type": "message",
                    "role": "assistant",
                    "model": "claude-test",
                    "content": [],
                    "stop_reason": None,
                    "usage": {"input_tokens": 1, "output_tokens": 1},
                },
            },
            {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}},
        ]
    )
    server.add(Reply(sse=events_sse))
    agent = LlmAgent(
        name="weather",
        # An overload before any output is retryable; with no retries left it is the
        # turn's error event.
        model=AnthropicLlm(model="claude-test", api_key="k", base_url=server.url, max_retries=0),
    )
    runner, session_id = await start(agent)
    events = await turn(
        runner, session_id, "Hi", run_config=RunConfig(streaming_mode=StreamingMode.SSE)
    )
    await runner.close()
    assert summarize(events) == [("weather", "error", "overloaded_error")]
