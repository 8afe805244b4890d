"""The Anthropic connector, with the real anthropic SDK against a local fake Messages API."""

from __future__ import annotations

from typing import Any

import pytest

from eventide import types
from eventide.errors import ConfigurationError
from eventide.models.anthropic_llm import AnthropicLlm
from eventide.models.registry import LLMRegistry
from tests.models.conftest import (
    assert_golden,
    collect,
    compact,
    rich_request,
    simple_request,
    text,
)
from tests.models.fake_provider_servers import FakeProviderServer, Reply, anthropic_sse


def llm(server: FakeProviderServer, **kwargs: Any) -> AnthropicLlm:
    return AnthropicLlm(
        model="claude-test",
        api_key="sk-ant-test",
        base_url=server.url,
        retry_base_delay=0.001,
        **kwargs,
    )


def message(content: list[dict[str, Any]], stop: str = "end_turn") -> dict[str, Any]:
    return {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "model": "claude-test",
        "content": content,
        "stop_reason": stop,
        "stop_sequence": None,
        "usage": {"input_tokens": 10, "output_tokens": 6, "cache_read_input_tokens": 2},
    }


PARALLEL: list[dict[str, Any]] = [
    {"type": "thinking", "thinking": "Two cities.", "signature": "sig-1"},
    {"type": "text", "text": "Looking up."},
    {"type": "tool_use", "id": "toolu_p", "name": "get_weather", "input": {"city": "Paris"}},
    {"type": "tool_use", "id": "toolu_o", "name": "get_weather", "input": {"city": "Oslo"}},
]


def parallel_events(*, stop: bool = True) -> list[dict[str, Any]]:
    start = message([], stop="end_turn")
    start.update(
        stop_reason=None,
        usage={"input_tokens": 10, "output_tokens": 1, "cache_read_input_tokens": 2},
    )
    events: list[dict[str, Any]] = [
        {"type": "message_start", "message": start},
        {
            "type": "content_block_start",
            "index": 0,
            "content_block": {"type": "thinking", "thinking": "", "signature": ""},
        },
        {
            "type": "content_block_delta",
            "index": 0,
            "delta": {"type": "thinking_delta", "thinking": "Two cities."},
        },
        {
            "type": "content_block_delta",
            "index": 0,
            "delta": {"type": "signature_delta", "signature": "sig-1"},
        },
        {"type": "content_block_stop", "index": 0},
        {"type": "ping"},
        {"type": "content_block_start", "index": 1, "content_block": {"type": "text", "text": ""}},
        {
            "type": "content_block_delta",
            "index": 1,
            "delta": {"type": "text_delta", "text": "Looking"},
        },
        {
            "type": "content_block_delta",
            "index": 1,
            "delta": {"type": "text_delta", "text": " up."},
        },
        {"type": "content_block_stop", "index": 1},
        {
            "type": "content_block_start",
            "index": 2,
            "content_block": {
                "type": "tool_use",
                "id": "toolu_p",
                "name": "get_weather",
                "input": {},
            },
        },
        {
            "type": "content_block_delta",
            "index": 2,
            "delta": {"type": "input_json_delta", "partial_json": '{"city": '},
        },
        {
            "type": "content_block_delta",
            "index": 2,
            "delta": {"type": "input_json_delta", "partial_json": '"Paris"}'},
        },
        {"type": "content_block_stop", "index": 2},
        {
            "type": "content_block_start",
            "index": 3,
            "content_block": {
                "type": "tool_use",
                "id": "toolu_o",
                "name": "get_weather",
                "input": {},
            },
        },
        {
            "type": "content_block_delta",
            "index": 3,
            "delta": {"type": "input_json_delta", "partial_json": '{"city": "Oslo"}'},
        },
        {"type": "content_block_stop", "index": 3},
        {
            "type": "message_delta",
            "delta": {"stop_reason": "tool_use", "stop_sequence": None},
            "usage": {"output_tokens": 6},
        },
    ]
    if stop:
        events.append({"type": "message_stop"})
    return events


async def test_request_translation_matches_golden(server: FakeProviderServer) -> None:
    """System, images, signed/unsigned thoughts, parallel calls (one id generated), tool
    results merged into one user turn, tools, tool choice, schema and settings."""
    request = rich_request()
    request.contents[1].parts[0].thought_signature = b"sig-0"  # type: ignore[index]
    request.config.thinking_budget = 1024
    request.config.top_k = 40
    server.add(Reply(body=message([{"type": "text", "text": "{}"}])))
    [response] = await collect(llm(server).generate_content_async(request))
    assert server.requests[0].path == "/v1/messages"
    headers = server.requests[0].headers
    assert "sk-ant-test" in (headers.get("x-api-key", ""), headers.get("authorization", "")[7:])
    assert_golden("anthropic_request", server.bodies[0])
    assert compact([response]) == [
        {
            "content": {"role": "model", "parts": [{"text": "{}"}]},
            "finish_reason": "STOP",
            "model_version": "claude-test",
            "turn_complete": True,
            "usage_metadata": {
                "prompt_token_count": 12,
                "candidates_token_count": 6,
                "total_token_count": 18,
                "cached_content_token_count": 2,
            },
        }
    ]


async def test_parallel_calls_and_thinking(server: FakeProviderServer) -> None:
    server.add(Reply(body=message(PARALLEL, stop="tool_use")))
    [response] = await collect(llm(server).generate_content_async(simple_request()))
    assert compact([response])[0]["content"] == {
        "role": "model",
        "parts": [
            {"text": "Two cities.", "thought": True, "thought_signature": "c2lnLTE="},
            {"text": "Looking up."},
            {"function_call": {"id": "toolu_p", "name": "get_weather", "args": {"city": "Paris"}}},
            {"function_call": {"id": "toolu_o", "name": "get_weather", "args": {"city": "Oslo"}}},
        ],
    }


async def test_stream_ends_like_non_streaming(server: FakeProviderServer) -> None:
    """Thought and text deltas stream; tool input JSON is assembled; the final response
    equals the non-streaming one."""
    server.add(
        Reply(body=message(PARALLEL, stop="tool_use")), Reply(sse=anthropic_sse(parallel_events()))
    )
    model = llm(server)
    [non_streamed] = await collect(model.generate_content_async(simple_request()))
    streamed = await collect(model.generate_content_async(simple_request(), stream=True))
    assert compact(streamed[:-1]) == [
        {
            "content": {"role": "model", "parts": [{"text": "Two cities.", "thought": True}]},
            "partial": True,
        },
        {"content": {"role": "model", "parts": [{"text": "Looking"}]}, "partial": True},
        {"content": {"role": "model", "parts": [{"text": " up."}]}, "partial": True},
    ]
    assert compact([streamed[-1]]) == compact([non_streamed])


async def test_retries_429_and_overload(server: FakeProviderServer) -> None:
    server.add(
        Reply(
            status=429,
            body={"type": "error", "error": {"type": "rate_limit_error", "message": "slow down"}},
            headers={"retry-after": "0"},
        ),
        Reply(
            status=529,
            body={"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}},
        ),
        Reply(body=message([{"type": "text", "text": "Hi"}])),
    )
    [response] = await collect(llm(server).generate_content_async(simple_request()))
    assert (response.error_code, text(response)) == (None, "Hi")
    assert len(server.requests) == 3


@pytest.mark.parametrize(
    ("status", "error_type", "message_text"),
    [
        (400, "invalid_request_error", "prompt is too long: 210000 tokens > 200000 maximum"),
        (401, "authentication_error", "invalid x-api-key"),
        (404, "not_found_error", "model: claude-nope"),
    ],
)
async def test_errors_become_error_responses(
    server: FakeProviderServer, status: int, error_type: str, message_text: str
) -> None:
    server.add(
        Reply(
            status=status,
            body={"type": "error", "error": {"type": error_type, "message": message_text}},
        )
    )
    [response] = await collect(llm(server).generate_content_async(simple_request()))
    assert response.error_code == error_type
    assert message_text in (response.error_message or "")
    assert len(server.requests) == 1


async def test_refusal_is_a_safety_error(server: FakeProviderServer) -> None:
    server.add(Reply(body=message([], stop="refusal")))
    [response] = await collect(llm(server).generate_content_async(simple_request()))
    assert (response.finish_reason, response.error_code) == ("SAFETY", "SAFETY")


async def test_error_event_mid_stream(server: FakeProviderServer) -> None:
    events = parallel_events()[:9] + [
        {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}
    ]
    server.add(Reply(sse=anthropic_sse(events)))
    streamed = await collect(llm(server).generate_content_async(simple_request(), stream=True))
    assert [r.partial for r in streamed[:-1]] == [True, True, True]
    assert streamed[-1].error_code == "overloaded_error"
    assert len(server.requests) == 1


@pytest.mark.parametrize("how", ["cut", "garbage", "ends_mid_tool_input"])
async def test_malformed_stream_becomes_error_response(
    server: FakeProviderServer, how: str
) -> None:
    """Rule (connectors, streams): a stream cut off, unparsable, or ending cleanly before
    its stop reason with a tool input half sent is MALFORMED_STREAM."""
    sse = anthropic_sse(parallel_events()[:12])
    if how == "garbage":
        sse += "event: content_block_delta\ndata: {nope\n\n"
    server.add(Reply(sse=sse, cut=how == "cut"))
    streamed = await collect(llm(server).generate_content_async(simple_request(), stream=True))
    assert streamed[-1].error_code == "MALFORMED_STREAM"
    assert all(r.partial for r in streamed[:-1])


async def test_stream_with_stop_reason_but_no_message_stop_is_used(
    server: FakeProviderServer,
) -> None:
    """Rule (connectors, streams): a stream whose stop reason arrived and whose content is
    complete is used even when ``message_stop`` never comes."""
    server.add(Reply(sse=anthropic_sse(parallel_events(stop=False))))
    streamed = await collect(llm(server).generate_content_async(simple_request(), stream=True))
    final = streamed[-1]
    assert (final.error_code, final.finish_reason) == (None, "STOP")
    assert final.content is not None and final.content.parts is not None
    calls = [p.function_call.args for p in final.content.parts if p.function_call]
    assert calls == [{"city": "Paris"}, {"city": "Oslo"}]


async def test_bad_streamed_tool_json(server: FakeProviderServer) -> None:
    events = parallel_events()
    events[12] = {
        "type": "content_block_delta",
        "index": 2,
        "delta": {"type": "input_json_delta", "partial_json": "Paris}"},
    }
    server.add(Reply(sse=anthropic_sse(events)))
    streamed = await collect(llm(server).generate_content_async(simple_request(), stream=True))
    assert streamed[-1].error_code == "MALFORMED_FUNCTION_CALL"


async def test_history_from_gemini_without_ids_pairs_results() -> None:
    """Calls without ids (Gemini history) get call_<n> ids, and results pair by name order."""
    from eventide.models.anthropic_llm import messages_request
    from eventide.models.llm_request import LlmRequest

    request = LlmRequest(
        contents=[
            types.Content(role="user", parts=[types.Part(text="go")]),
            types.Content(
                role="model",
                parts=[
                    types.Part.from_function_call(name="a", args={}),
                    types.Part.from_function_call(name="b", args={}),
                ],
            ),
            types.Content(
                role="user",
                parts=[
                    types.Part.from_function_response(name="b", response={"r": 2}),
                    types.Part.from_function_response(name="a", response={"r": 1}),
                ],
            ),
        ]
    )
    body = messages_request(request, model="m", default_max_tokens=10)
    uses = [(b["name"], b["id"]) for b in body["messages"][1]["content"]]
    results = [b["tool_use_id"] for b in body["messages"][2]["content"]]
    assert uses == [("a", "call_1"), ("b", "call_2")]
    assert results == ["call_2", "call_1"]


async def test_missing_key_names_the_variable() -> None:
    with pytest.raises(ConfigurationError, match="ANTHROPIC_API_KEY"):
        await collect(AnthropicLlm(model="claude-x").generate_content_async(simple_request()))


@pytest.mark.parametrize("name", ["claude-sonnet-4-5", "anthropic/claude-opus-4-1"])
def test_registry_resolves_claude_names(name: str) -> None:
    assert LLMRegistry.resolve(name) is AnthropicLlm


async def test_timeout_is_reported_not_raised(server: FakeProviderServer) -> None:
    import threading

    release = threading.Event()
    server.add(Reply(body=message([{"type": "text", "text": "late"}]), hold=release))
    try:
        [response] = await collect(
            llm(server, timeout=0.2).generate_content_async(simple_request())
        )
    finally:
        release.set()
    assert response.error_code == "TIMEOUT"


async def test_gemini_builtin_tools_are_refused(server: FakeProviderServer) -> None:
    from eventide.errors import UsageError

    request = simple_request()
    request.config.tools = [types.Tool(google_search={})]
    with pytest.raises(UsageError, match="google_search"):
        await collect(llm(server).generate_content_async(request))
    assert server.requests == []
