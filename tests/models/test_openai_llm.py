"""The OpenAI connector, with the real openai SDK against a local fake OpenAI server."""

from __future__ import annotations

import threading
from typing import Any

import pytest

from eventide import types
from eventide.errors import ConfigurationError
from eventide.models._history import CallIdAssigner
from eventide.models._openai_chat_format import (
    _assistant_message,
    _read_choice,
    _read_common,
    chat_messages,
    read_chat_completion,
)
from eventide.models._stream_assembler import StreamAssembler
from eventide.models.llm_request import LlmRequest
from eventide.models.openai_llm import OpenAILlm
from eventide.models.registry import LLMRegistry
from tests.models.conftest import (
    assert_golden,
    collect,
    compact,
    rich_request,
    simple_request,
    text,
)
from tests.models.fake_provider_servers import FakeProviderServer, Reply, chat_sse, responses_sse

USAGE = {
    "prompt_tokens": 12,
    "completion_tokens": 5,
    "total_tokens": 17,
    "prompt_tokens_details": {"cached_tokens": 2},
    "completion_tokens_details": {"reasoning_tokens": 1},
}


def llm(server: FakeProviderServer, **kwargs: Any) -> OpenAILlm:
    return OpenAILlm(
        model="gpt-test",
        api_key="sk-test",
        base_url=f"{server.url}/v1",
        retry_base_delay=0.001,
        **kwargs,
    )


def completion(message: dict[str, Any], finish: str = "stop") -> dict[str, Any]:
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "created": 1,
        "model": "gpt-test",
        "choices": [{"index": 0, "message": message, "finish_reason": finish}],
        "usage": USAGE,
    }


def chunk(delta: dict[str, Any], finish: str | None = None, **extra: Any) -> dict[str, Any]:
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion.chunk",
        "created": 1,
        "model": "gpt-test",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
        **extra,
    }


PARALLEL_CALLS = {
    "role": "assistant",
    "content": "Looking up.",
    "tool_calls": [
        {
            "id": "call_p",
            "type": "function",
            "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'},
        },
        {
            "id": "call_o",
            "type": "function",
            "function": {"name": "get_weather", "arguments": '{"city": "Oslo"}'},
        },
    ],
}

# The same answer as PARALLEL_CALLS, streamed: text in two chunks, each call's arguments
# in fragments, usage in a last chunk without choices (stream_options.include_usage).
PARALLEL_CALLS_STREAM = [
    chunk({"role": "assistant", "content": "Looking"}),
    chunk({"content": " up."}),
    chunk(
        {
            "tool_calls": [
                {
                    "index": 0,
                    "id": "call_p",
                    "type": "function",
                    "function": {"name": "get_weather", "arguments": ""},
                }
            ]
        }
    ),
    chunk({"tool_calls": [{"index": 0, "function": {"arguments": '{"city": '}}]}),
    chunk(
        {
            "tool_calls": [
                {
                    "index": 1,
                    "id": "call_o",
                    "type": "function",
                    "function": {"name": "get_weather", "arguments": '{"city"'},
                }
            ]
        }
    ),
    chunk({"tool_calls": [{"index": 0, "function": {"arguments": '"Paris"}'}}]}),
    chunk({"tool_calls": [{"index": 1, "function": {"arguments": ': "Oslo"}'}}]}),
    chunk({}, finish="tool_calls"),
    {
        "id": "chatcmpl-1",
        "object": "chat.completion.chunk",
        "created": 1,
        "model": "gpt-test",
        "choices": [],
        "usage": USAGE,
    },
]


async def test_chat_request_translation_matches_golden(server: FakeProviderServer) -> None:
    """The whole LlmRequest (system, images, thoughts, parallel calls with and without ids,
    their responses, tools, tool choice, schema, settings) becomes this Chat Completions body."""
    server.add(Reply(body=completion({"role": "assistant", "content": '{"summary": "ok"}'})))
    responses = await collect(llm(server).generate_content_async(rich_request()))
    assert server.requests[0].path == "/v1/chat/completions"
    assert server.requests[0].headers["authorization"] == "Bearer sk-test"
    assert_golden("openai_chat_request", server.bodies[0])
    assert compact(responses) == [
        {
            "content": {"role": "model", "parts": [{"text": '{"summary": "ok"}'}]},
            "finish_reason": "STOP",
            "model_version": "gpt-test",
            "turn_complete": True,
            "usage_metadata": {
                "prompt_token_count": 12,
                "candidates_token_count": 5,
                "total_token_count": 17,
                "cached_content_token_count": 2,
                "thoughts_token_count": 1,
            },
        }
    ]


async def test_parallel_function_calls_keep_ids(server: FakeProviderServer) -> None:
    server.add(Reply(body=completion(PARALLEL_CALLS, finish="tool_calls")))
    [response] = await collect(llm(server).generate_content_async(simple_request()))
    assert compact([response])[0]["content"] == {
        "role": "model",
        "parts": [
            {"text": "Looking up."},
            {"function_call": {"id": "call_p", "name": "get_weather", "args": {"city": "Paris"}}},
            {"function_call": {"id": "call_o", "name": "get_weather", "args": {"city": "Oslo"}}},
        ],
    }
    assert response.finish_reason == "STOP"


async def test_stream_assembles_call_arguments_and_ends_like_non_streaming(
    server: FakeProviderServer,
) -> None:
    """Partial text chunks as they arrive, no partial calls, then one final response equal
    to the non-streaming one."""
    server.add(
        Reply(body=completion(PARALLEL_CALLS, finish="tool_calls")),
        Reply(sse=chat_sse(PARALLEL_CALLS_STREAM)),
    )
    model = llm(server)
    [non_streamed] = await collect(model.generate_content_async(simple_request()))
    streamed = await collect(model.generate_content_async(simple_request(), stream=True))
    assert server.bodies[1]["stream"] is True
    assert server.bodies[1]["stream_options"] == {"include_usage": True}
    assert compact(streamed[:-1]) == [
        {"content": {"role": "model", "parts": [{"text": "Looking"}]}, "partial": True},
        {"content": {"role": "model", "parts": [{"text": " up."}]}, "partial": True},
    ]
    assert streamed[-1].partial is None
    assert compact([streamed[-1]]) == compact([non_streamed])


async def test_stream_reasoning_content_becomes_thought_parts(server: FakeProviderServer) -> None:
    """vLLM/DeepSeek stream reasoning as ``reasoning_content``; it maps to thought parts."""
    server.add(
        Reply(
            sse=chat_sse(
                [
                    chunk({"reasoning_content": "Think."}),
                    chunk({"content": "Done."}, finish="stop"),
                ]
            )
        )
    )
    streamed = await collect(llm(server).generate_content_async(simple_request(), stream=True))
    assert compact(streamed) == [
        {
            "content": {"role": "model", "parts": [{"text": "Think.", "thought": True}]},
            "partial": True,
        },
        {"content": {"role": "model", "parts": [{"text": "Done."}]}, "partial": True},
        {
            "content": {
                "role": "model",
                "parts": [{"text": "Think.", "thought": True}, {"text": "Done."}],
            },
            "finish_reason": "STOP",
            "model_version": "gpt-test",
            "turn_complete": True,
        },
    ]


async def test_retries_429_then_succeeds(server: FakeProviderServer) -> None:
    """A rate limit is retried with backoff; the caller only sees the success."""
    rate_limited = Reply(
        status=429,
        body={"error": {"message": "Slow down", "type": "requests", "code": "rate_limit_exceeded"}},
        headers={"retry-after-ms": "1"},
    )
    server.add(rate_limited, Reply(status=503, body={"error": {"message": "busy"}}))
    server.add(Reply(body=completion({"role": "assistant", "content": "Hi!"})))
    [response] = await collect(llm(server).generate_content_async(simple_request()))
    assert (response.error_code, text(response)) == (None, "Hi!")
    assert len(server.requests) == 3


async def test_retries_429_when_opening_a_stream(server: FakeProviderServer) -> None:
    server.add(Reply(status=429, body={"error": {"message": "Slow down"}}))
    server.add(Reply(sse=chat_sse([chunk({"content": "Hi"}, finish="stop")])))
    streamed = await collect(llm(server).generate_content_async(simple_request(), stream=True))
    assert [text(r) for r in streamed] == ["Hi", "Hi"]
    assert len(server.requests) == 2


async def test_gives_up_after_max_retries(server: FakeProviderServer) -> None:
    for _ in range(3):
        server.add(
            Reply(
                status=429, body={"error": {"message": "Slow down", "code": "rate_limit_exceeded"}}
            )
        )
    [response] = await collect(llm(server, max_retries=2).generate_content_async(simple_request()))
    assert response.error_code == "rate_limit_exceeded"
    assert "HTTP 429" in (response.error_message or "")
    assert "after 2 retries" in (response.error_message or "")
    assert len(server.requests) == 3


@pytest.mark.parametrize(
    ("status", "error", "expected_code"),
    [
        (
            400,
            {
                "message": "This model's maximum context length is 128000 tokens",
                "type": "invalid_request_error",
                "code": "context_length_exceeded",
            },
            "context_length_exceeded",
        ),
        (400, {"message": "Invalid value for 'tools'", "type": "invalid_request_error"}, "400"),
        (
            400,
            {
                "message": "Your request was rejected by our safety system",
                "code": "content_policy_violation",
            },
            "SAFETY",
        ),
        (401, {"message": "Incorrect API key", "code": "invalid_api_key"}, "invalid_api_key"),
    ],
)
async def test_provider_errors_become_error_responses(
    server: FakeProviderServer, status: int, error: dict[str, Any], expected_code: str
) -> None:
    server.add(Reply(status=status, body={"error": error}))
    [response] = await collect(llm(server).generate_content_async(simple_request()))
    assert response.error_code == expected_code
    assert error["message"] in (response.error_message or "")
    assert len(server.requests) == 1


async def test_content_filter_finish_is_a_safety_error(server: FakeProviderServer) -> None:
    server.add(Reply(body=completion({"role": "assistant", "content": None}, "content_filter")))
    [response] = await collect(llm(server).generate_content_async(simple_request()))
    assert (response.finish_reason, response.error_code) == ("SAFETY", "SAFETY")


async def test_garbage_in_stream_becomes_error_response(server: FakeProviderServer) -> None:
    sse = chat_sse([chunk({"content": "Hel"})], done=False) + "data: {not json\n\n"
    server.add(Reply(sse=sse))
    streamed = await collect(llm(server).generate_content_async(simple_request(), stream=True))
    assert text(streamed[0]) == "Hel"
    assert streamed[-1].error_code == "MALFORMED_STREAM"
    assert len(streamed) == 2


async def test_cut_stream_becomes_error_response(server: FakeProviderServer) -> None:
    server.add(Reply(sse=chat_sse([chunk({"content": "Hel"})], done=False), cut=True))
    streamed = await collect(llm(server).generate_content_async(simple_request(), stream=True))
    assert [text(r) for r in streamed[:-1]] == ["Hel"]
    assert streamed[-1].error_code == "MALFORMED_STREAM"


async def test_garbage_first_chunk_becomes_error_response(server: FakeProviderServer) -> None:
    server.add(Reply(sse="data: {oops\n\n"))
    streamed = await collect(llm(server).generate_content_async(simple_request(), stream=True))
    assert [r.error_code for r in streamed] == ["MALFORMED_STREAM"]
    assert len(server.requests) == 1


async def test_timeout_is_reported_not_raised(server: FakeProviderServer) -> None:
    release = threading.Event()
    server.add(Reply(body=completion({"role": "assistant", "content": "late"}), hold=release))
    try:
        [response] = await collect(
            llm(server, timeout=0.2).generate_content_async(simple_request())
        )
    finally:
        release.set()
    assert response.error_code == "TIMEOUT"


async def test_missing_key_names_the_variable() -> None:
    """The key is read on first use, not at construction or import."""
    model = OpenAILlm(model="gpt-4.1")
    with pytest.raises(ConfigurationError, match="OPENAI_API_KEY"):
        await collect(model.generate_content_async(simple_request()))


async def test_key_from_environment(
    server: FakeProviderServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-env")
    monkeypatch.setenv("OPENAI_BASE_URL", f"{server.url}/v1")
    server.add(Reply(body=completion({"role": "assistant", "content": "ok"})))
    model = LLMRegistry.new_llm("openai/my-local-model")
    await collect(model.generate_content_async(simple_request()))
    assert server.requests[0].headers["authorization"] == "Bearer sk-env"
    assert server.bodies[0]["model"] == "my-local-model"


async def test_ollama_prefix_uses_the_ollama_server(
    server: FakeProviderServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``ollama/<model>`` needs no key and talks to OLLAMA_BASE_URL's /v1 endpoint."""
    monkeypatch.setenv("OLLAMA_BASE_URL", server.url)
    server.add(Reply(body=completion({"role": "assistant", "content": "ok"})))
    model = LLMRegistry.new_llm("ollama/llama3.2")
    request = simple_request()
    request.config.max_output_tokens = 10
    [response] = await collect(model.generate_content_async(request))
    assert text(response) == "ok"
    assert server.requests[0].path == "/v1/chat/completions"
    assert server.bodies[0]["model"] == "llama3.2"
    assert server.bodies[0]["max_tokens"] == 10


@pytest.mark.parametrize(
    "name", ["gpt-4.1", "o3-mini", "o4-mini", "chatgpt-4o-latest", "openai/x", "ollama/qwen3"]
)
def test_registry_resolves_openai_names(name: str) -> None:
    assert LLMRegistry.resolve(name) is OpenAILlm


# ---- Responses API --------------------------------------------------------------------

RESPONSE_OBJECT = {
    "id": "resp_1",
    "object": "response",
    "created_at": 1,
    "model": "gpt-test",
    "status": "completed",
    "output": [
        {
            "id": "rs_1",
            "type": "reasoning",
            "summary": [{"type": "summary_text", "text": "Need weather."}],
        },
        {
            "id": "msg_1",
            "type": "message",
            "role": "assistant",
            "status": "completed",
            "content": [{"type": "output_text", "text": "Looking up.", "annotations": []}],
        },
        {
            "id": "fc_1",
            "type": "function_call",
            "call_id": "call_p",
            "name": "get_weather",
            "arguments": '{"city": "Paris"}',
            "status": "completed",
        },
        {
            "id": "fc_2",
            "type": "function_call",
            "call_id": "call_o",
            "name": "get_weather",
            "arguments": '{"city": "Oslo"}',
            "status": "completed",
        },
    ],
    "parallel_tool_calls": True,
    "tool_choice": "auto",
    "tools": [],
    "usage": {
        "input_tokens": 12,
        "output_tokens": 5,
        "total_tokens": 17,
        "input_tokens_details": {"cached_tokens": 0},
        "output_tokens_details": {"reasoning_tokens": 3},
    },
}


def responses_events() -> list[dict[str, Any]]:
    return [
        {
            "type": "response.created",
            "sequence_number": 0,
            "response": {**RESPONSE_OBJECT, "status": "in_progress", "output": []},
        },
        {
            "type": "response.reasoning_summary_text.delta",
            "sequence_number": 1,
            "item_id": "rs_1",
            "output_index": 0,
            "summary_index": 0,
            "delta": "Need weather.",
        },
        {
            "type": "response.output_text.delta",
            "sequence_number": 2,
            "item_id": "msg_1",
            "output_index": 1,
            "content_index": 0,
            "delta": "Looking",
            "logprobs": [],
        },
        {
            "type": "response.output_text.delta",
            "sequence_number": 3,
            "item_id": "msg_1",
            "output_index": 1,
            "content_index": 0,
            "delta": " up.",
            "logprobs": [],
        },
        {
            "type": "response.function_call_arguments.delta",
            "sequence_number": 4,
            "item_id": "fc_1",
            "output_index": 2,
            "delta": '{"city": ',
        },
        {
            "type": "response.function_call_arguments.delta",
            "sequence_number": 5,
            "item_id": "fc_1",
            "output_index": 2,
            "delta": '"Paris"}',
        },
        {"type": "response.completed", "sequence_number": 6, "response": RESPONSE_OBJECT},
    ]


async def test_responses_request_translation_matches_golden(server: FakeProviderServer) -> None:
    server.add(Reply(body=RESPONSE_OBJECT))
    [response] = await collect(llm(server, api="responses").generate_content_async(rich_request()))
    assert server.requests[0].path == "/v1/responses"
    assert_golden("openai_responses_request", server.bodies[0])
    assert compact([response]) == [
        {
            "content": {
                "role": "model",
                "parts": [
                    {"text": "Need weather.", "thought": True},
                    {"text": "Looking up."},
                    {
                        "function_call": {
                            "id": "call_p",
                            "name": "get_weather",
                            "args": {"city": "Paris"},
                        }
                    },
                    {
                        "function_call": {
                            "id": "call_o",
                            "name": "get_weather",
                            "args": {"city": "Oslo"},
                        }
                    },
                ],
            },
            "finish_reason": "STOP",
            "model_version": "gpt-test",
            "turn_complete": True,
            "usage_metadata": {
                "prompt_token_count": 12,
                "candidates_token_count": 5,
                "total_token_count": 17,
                "cached_content_token_count": 0,
                "thoughts_token_count": 3,
            },
        }
    ]


async def test_responses_stream_ends_like_non_streaming(server: FakeProviderServer) -> None:
    server.add(Reply(body=RESPONSE_OBJECT), Reply(sse=responses_sse(responses_events())))
    model = llm(server, api="responses")
    [non_streamed] = await collect(model.generate_content_async(simple_request()))
    streamed = await collect(model.generate_content_async(simple_request(), stream=True))
    assert [
        (r.partial, r.content.parts[0].text if r.content and r.content.parts else None)
        for r in streamed[:-1]
    ] == [(True, "Need weather."), (True, "Looking"), (True, " up.")]
    assert compact([streamed[-1]]) == compact([non_streamed])


async def test_responses_stream_without_completion_is_malformed(
    server: FakeProviderServer,
) -> None:
    server.add(Reply(sse=responses_sse(responses_events()[:3])))
    streamed = await collect(
        llm(server, api="responses").generate_content_async(simple_request(), stream=True)
    )
    assert streamed[-1].error_code == "MALFORMED_STREAM"


async def test_responses_failed_status_maps_to_error(server: FakeProviderServer) -> None:
    failed = {
        **RESPONSE_OBJECT,
        "status": "failed",
        "output": [],
        "error": {"code": "server_error", "message": "boom"},
    }
    server.add(Reply(body=failed))
    [response] = await collect(
        llm(server, api="responses").generate_content_async(simple_request())
    )
    assert (response.error_code, response.error_message) == ("server_error", "boom")


async def test_error_event_mid_stream(server: FakeProviderServer) -> None:
    """An ``error`` object inside the SSE stream ends it with that error, not an exception."""
    sse = chat_sse([chunk({"content": "Hel"})], done=False)
    sse += 'data: {"error": {"message": "The server had an error", "code": "server_error"}}\n\n'
    server.add(Reply(sse=sse))
    streamed = await collect(llm(server).generate_content_async(simple_request(), stream=True))
    assert [(r.partial, r.error_code) for r in streamed] == [(True, None), (None, "server_error")]
    assert "The server had an error" in (streamed[-1].error_message or "")


async def test_close_releases_the_client(server: FakeProviderServer) -> None:
    server.add(*(Reply(body=completion({"role": "assistant", "content": "ok"})) for _ in "ab"))
    model = llm(server)
    await collect(model.generate_content_async(simple_request()))
    await model.close()
    # A closed connector opens a new client on next use.
    [response] = await collect(model.generate_content_async(simple_request()))
    assert text(response) == "ok"
    await model.close()


@pytest.mark.parametrize("api", ["chat_completions", "responses"])
async def test_gemini_builtin_tools_are_refused(server: FakeProviderServer, api: str) -> None:
    """Gemini-only built-in tools fail loudly instead of silently disappearing."""
    from eventide import types
    from eventide.errors import UsageError

    request = simple_request()
    request.config.tools = [types.Tool(code_execution={})]
    with pytest.raises(UsageError, match="code_execution"):
        await collect(llm(server, api=api).generate_content_async(request))
    assert server.requests == []


@pytest.mark.parametrize("api", ["chat_completions", "responses"])
@pytest.mark.parametrize("stream", [False, True])
async def test_request_is_posted_as_built_with_extra_fields_on_top(
    server: FakeProviderServer, api: str, stream: bool
) -> None:
    """The body the connector builds is what the server receives (posted through the SDK
    client, not re-transformed by ``create``): ``config.extra`` fields at the top level,
    the key as a bearer token, and the stream fields only when streaming."""
    if api == "responses":
        events: list[dict[str, Any]] = [
            {"type": "response.output_text.delta", "delta": "ok"},
            {
                "type": "response.completed",
                "response": {
                    "id": "r",
                    "status": "completed",
                    "model": "gpt-test",
                    "output": [
                        {
                            "type": "message",
                            "role": "assistant",
                            "content": [{"type": "output_text", "text": "ok"}],
                        }
                    ],
                },
            },
        ]
        reply = Reply(sse=responses_sse(events)) if stream else Reply(body=events[1]["response"])
    else:
        answer = {"role": "assistant", "content": "ok"}
        reply = (
            Reply(sse=chat_sse([chunk(answer, "stop")]))
            if stream
            else Reply(body=completion(answer))
        )
    server.add(reply)
    request = simple_request()
    request.config.extra = {"top_k": 5}
    responses = await collect(llm(server, api=api).generate_content_async(request, stream=stream))
    assert text(responses[-1]) == "ok"
    body = server.bodies[0]
    assert body["top_k"] == 5 and "extra_body" not in body
    assert body.get("stream", False) is stream
    assert ("stream_options" in body) is (stream and api == "chat_completions")
    assert server.requests[0].headers["authorization"] == "Bearer sk-test"


_SINGLE_MODEL_PARTS = [
    types.Part(text="Hi!"),
    types.Part(text=""),
    types.Part(text="thinking", thought=True),
    types.Part(function_call=types.FunctionCall(name="f", args={"a": 1}, id="c1")),
    types.Part(executable_code=types.ExecutableCode(code="print(1)", language="PYTHON")),
    types.Part(code_execution_result=types.CodeExecutionResult(outcome="OUTCOME_OK", output="1")),
]


@pytest.mark.parametrize("part", _SINGLE_MODEL_PARTS, ids=lambda p: repr(p)[:40])
def test_single_part_model_message_is_the_general_translation(part: types.Part) -> None:
    """The shortcut for a model content of one text part gives what the general
    translation (``_assistant_message``) gives, for every kind of single part."""
    request = LlmRequest(model="m", contents=[types.Content(role="model", parts=[part])])
    general = _assistant_message([part], CallIdAssigner())
    assert chat_messages(request) == ([] if general is None else [general])


def test_conversation_messages_are_the_sdk_loops_messages() -> None:
    """A 20-turn text conversation is sent as the SDK's own loop keeps it."""
    contents: list[types.Content] = []
    expected: list[dict[str, Any]] = [{"role": "system", "content": "Answer briefly."}]
    for turn in range(20):
        contents.append(types.Content(role="user", parts=[types.Part(text=f"Say hi {turn}.")]))
        contents.append(types.Content(role="model", parts=[types.Part(text=f"Hi {turn}!")]))
        expected.append({"role": "user", "content": f"Say hi {turn}."})
        expected.append({"role": "assistant", "content": f"Hi {turn}!"})
    request = LlmRequest(
        model="m",
        contents=contents,
        config=types.GenerateContentConfig(system_instruction="Answer briefly."),
    )
    assert chat_messages(request) == expected


_WHOLE_ANSWERS = [
    ({"role": "assistant", "content": "Hi!"}, "stop"),
    ({"role": "assistant", "content": "Hi!"}, "length"),
    ({"role": "assistant", "content": "Hi!"}, "weird"),
    ({"role": "assistant", "content": "Hi!"}, None),
    ({"role": "assistant", "content": "Hi!"}, "content_filter"),
    ({"role": "assistant", "content": "Hi!", "refusal": None, "tool_calls": []}, "stop"),
    ({"role": "assistant", "content": "Hi!", "reasoning_content": "hmm"}, "stop"),
    ({"role": "assistant", "content": "", "refusal": "no"}, "stop"),
]


@pytest.mark.parametrize(("message", "finish"), _WHOLE_ANSWERS, ids=repr)
def test_a_plain_text_answer_reads_as_the_general_reading(
    message: dict[str, Any], finish: str | None
) -> None:
    """The shortcut for a whole answer of text alone gives the response that feeding the
    assembler part by part gives."""
    data = completion(message, finish) if finish else completion(message)
    if finish is None:
        del data["choices"][0]["finish_reason"]
    read = StreamAssembler(calls_before=0, partials=False)
    read_chat_completion(data, read)
    general = StreamAssembler(calls_before=0, partials=False)
    _read_common(data, general)
    _read_choice(message, finish, general)
    assert read.final() == general.final()
