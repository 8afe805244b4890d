"""OpenAI-compatible local servers (llama.cpp, Ollama, vLLM): what each accepts and sends,
and the faults a real llama.cpp server showed, against the fake server speaking each dialect.
"""

from __future__ import annotations

import email.utils
import logging
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from eventide import types
from eventide.models._failures import retry_after_seconds
from eventide.models.llm_request import LlmRequest
from eventide.models.openai_llm import OpenAILlm
from eventide.models.retrying_llm import RetryPolicy
from tests.models.conftest import WEATHER_SCHEMA, collect, text
from tests.models.fake_provider_servers import FakeProviderServer, Reply, chat_sse
from tests.models.openai_dialects import DIALECTS, llama_cpp_check


def llm(server: FakeProviderServer, **kwargs: Any) -> OpenAILlm:
    return OpenAILlm(
        model="local-model", base_url=f"{server.url}/v1", retry_base_delay=0.001, **kwargs
    )


def after_tool_call() -> LlmRequest:
    """A history whose model turn is a tool call with no text, then the tool's result."""
    call = types.FunctionCall(id="call_1", name="get_weather", args={"city": "Oslo"})
    result = types.FunctionResponse(id="call_1", name="get_weather", response={"temp_c": 4})
    return LlmRequest(
        contents=[
            types.Content(role="user", parts=[types.Part(text="Weather in Oslo?")]),
            types.Content(role="model", parts=[types.Part(function_call=call)]),
            types.Content(role="user", parts=[types.Part(function_response=result)]),
        ],
        config=types.GenerateContentConfig(
            tools=[
                types.Tool(
                    function_declarations=[
                        types.FunctionDeclaration(
                            name="get_weather", parameters_json_schema=WEATHER_SCHEMA
                        )
                    ]
                )
            ]
        ),
    )


def completion(content: str) -> dict[str, Any]:
    return {
        "id": "c1",
        "object": "chat.completion",
        "created": 1,
        "model": "local-model",
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": content},
                "finish_reason": "stop",
            }
        ],
    }


def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
    return {
        "id": "c1",
        "object": "chat.completion.chunk",
        "created": 1,
        "model": "local-model",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    }


@pytest.mark.parametrize("dialect", sorted(DIALECTS))
async def test_assistant_tool_call_turn_is_sent_with_empty_string_content(
    server: FakeProviderServer, dialect: str
) -> None:
    """Rule (connectors, OpenAI-compatible dialects): an assistant message that holds only
    tool calls is sent with ``"content": ""``, which llama.cpp, Ollama, vLLM and OpenAI all
    accept (llama.cpp and Ollama refuse ``null``), so the turn after a tool call succeeds."""
    server.check = DIALECTS[dialect]
    server.add(Reply(body=completion("It is 4 degrees.")))
    [response] = await collect(llm(server).generate_content_async(after_tool_call()))
    assert (response.error_code, text(response)) == (None, "It is 4 degrees.")
    [assistant] = [m for m in server.bodies[0]["messages"] if m["role"] == "assistant"]
    assert assistant["content"] == ""
    assert assistant["tool_calls"][0]["id"] == "call_1"


async def test_validation_error_500_is_not_retried(server: FakeProviderServer) -> None:
    """Rule (connectors, retries): a 5xx whose body is a request-validation error can never
    succeed, so it is reported at once, not retried."""
    refusal = llama_cpp_check_reply()
    server.add(refusal, refusal, refusal)
    [response] = await collect(llm(server).generate_content_async(LlmRequest()))
    assert response.error_code == "500"
    assert "literal_error" in (response.error_message or "")
    assert len(server.requests) == 1


def llama_cpp_check_reply() -> Reply:
    """The 500 llama.cpp's server sends for an assistant message with ``content: null``."""
    from tests.models.fake_provider_servers import RecordedRequest

    reply = llama_cpp_check(
        RecordedRequest(
            method="POST",
            path="/v1/chat/completions",
            headers={},
            body={"messages": [{"role": "assistant", "content": None}]},
        )
    )
    assert reply is not None
    return reply


@pytest.mark.parametrize(
    ("status", "retried"),
    [(400, False), (401, False), (409, False), (422, False), (408, True), (429, True)]
    + [(500, True), (502, True), (503, True), (504, True), (529, True)],
)
async def test_only_statuses_that_can_succeed_are_retried(
    server: FakeProviderServer, status: int, retried: bool
) -> None:
    """Rule (connectors, retries): only 429, 408, a 5xx without a validation body and
    connection errors are retried; every other status is reported at once."""
    server.add(Reply(status=status, body={"error": {"message": "try later?"}}))
    server.add(Reply(body=completion("ok")))
    [response] = await collect(llm(server).generate_content_async(LlmRequest()))
    if retried:
        assert (response.error_code, text(response), len(server.requests)) == (None, "ok", 2)
    else:
        assert (response.error_code, len(server.requests)) == (str(status), 1)


async def test_stream_without_finish_reason_but_complete_tool_call_is_accepted(
    server: FakeProviderServer, caplog: pytest.LogCaptureFixture
) -> None:
    """Rule (connectors, streams): a stream that ends cleanly without a finish reason but
    with complete content (llama.cpp does this with ``tool_choice``) is used and logged,
    not reported as MALFORMED_STREAM."""
    call = {
        "index": 0,
        "id": "call__0_get_weather_cmpl-1",
        "type": "function",
        "function": {"name": "get_weather", "arguments": '{"city": '},
    }
    rest = {"index": 0, "function": {"arguments": '"Oslo"}'}}
    server.add(Reply(sse=chat_sse([chunk({"tool_calls": [call]}), chunk({"tool_calls": [rest]})])))
    with caplog.at_level(logging.WARNING, logger="eventide.models"):
        streamed = await collect(llm(server).generate_content_async(after_tool_call(), stream=True))
    final = streamed[-1]
    assert final.error_code is None
    assert final.content is not None and final.content.parts is not None
    [part] = final.content.parts
    assert part.function_call is not None
    assert (part.function_call.name, part.function_call.args) == ("get_weather", {"city": "Oslo"})
    assert "without a finish reason" in caplog.text


async def test_stream_without_finish_reason_and_text_is_accepted(
    server: FakeProviderServer,
) -> None:
    """Rule (connectors, streams): complete text without a finish reason is used."""
    server.add(Reply(sse=chat_sse([chunk({"content": "Hel"}), chunk({"content": "lo"})])))
    streamed = await collect(llm(server).generate_content_async(LlmRequest(), stream=True))
    assert [text(r) for r in streamed] == ["Hel", "lo", "Hello"]
    assert streamed[-1].error_code is None


@pytest.mark.parametrize(
    "chunks",
    [
        pytest.param(
            [
                chunk(
                    {
                        "tool_calls": [
                            {
                                "index": 0,
                                "id": "c",
                                "function": {"name": "get_weather", "arguments": '{"ci'},
                            }
                        ]
                    }
                )
            ],
            id="half-a-tool-call",
        ),
    ],
)
async def test_stream_without_finish_reason_and_incomplete_content_is_malformed(
    server: FakeProviderServer, chunks: list[dict[str, Any]]
) -> None:
    """Rule (connectors, streams): a stream that ends without a finish reason and without
    usable content (tool-call arguments that are not whole JSON) is MALFORMED_STREAM."""
    server.add(Reply(sse=chat_sse(chunks)))
    streamed = await collect(llm(server).generate_content_async(LlmRequest(), stream=True))
    assert streamed[-1].error_code == "MALFORMED_STREAM"


async def test_an_empty_stream_is_reported_as_empty_not_as_a_retryable_break(
    server: FakeProviderServer,
) -> None:
    """Rule (connectors, streams): a stream that carries nothing at all (a server that
    cannot stream this request, e.g. with tools) is EMPTY_STREAM, whose message says that
    retrying will not help and what will (issue 33; it was MALFORMED_STREAM, "retry the
    turn")."""
    server.add(Reply(sse=chat_sse([])))
    streamed = await collect(llm(server).generate_content_async(LlmRequest(), stream=True))
    assert [r.error_code for r in streamed] == ["EMPTY_STREAM"]
    message = streamed[-1].error_message or ""
    assert "Retrying will not help" in message and "--no-stream" in message
    assert "retry the turn" not in message


def test_retry_after_header_in_seconds_or_as_http_date() -> None:
    """Rule (connectors, retries): ``Retry-After`` is honoured in both of its forms (delay
    seconds and HTTP date), and ``retry-after-ms`` wins when both are sent."""
    in_two_minutes = email.utils.format_datetime(datetime.now(UTC) + timedelta(minutes=2))
    from_date = retry_after_seconds({"retry-after": in_two_minutes})
    assert from_date is not None and 110 < from_date <= 120
    assert retry_after_seconds({"retry-after": "7"}) == 7.0
    assert retry_after_seconds({"retry-after": "7", "retry-after-ms": "250"}) == 0.25
    assert retry_after_seconds({"retry-after": "soon"}) is None
    policy = RetryPolicy(max_retries=3, base_delay=0.5, max_delay=30.0)
    assert policy.delay(0, 7.0) == 7.0


def test_any_mode_with_one_declared_function_names_it() -> None:
    """Rule (connectors, tool_choice): ``ANY`` with a single declared function is sent as
    that named function (the same constraint), which servers without ``"required"``
    (llama.cpp's) can enforce; with several it stays ``"required"``."""
    from eventide.models._openai_chat_format import chat_request

    request = after_tool_call()
    request.config.tool_config = types.ToolConfig(mode="ANY")
    assert chat_request(request, model="m")["tool_choice"] == {
        "type": "function",
        "function": {"name": "get_weather"},
    }


async def test_streamed_tool_call_whose_name_repeats_in_every_fragment(
    server: FakeProviderServer,
) -> None:
    """Rule (connectors, llama.cpp dialect): llama.cpp's server repeats the function name
    and id in every streamed tool-call fragment; the call keeps one name."""
    fragments = ['{"city"', ': "Oslo"}']
    call_id = "call__0_get_weather_cmpl-1"
    chunks = [
        chunk(
            {
                "tool_calls": [
                    {
                        "index": 0,
                        "id": call_id,
                        "type": "function",
                        "function": {"name": "get_weather", "arguments": piece},
                    }
                ]
            }
        )
        for piece in fragments
    ]
    server.add(Reply(sse=chat_sse([*chunks, chunk({}, finish="tool_calls")])))
    [final] = await collect(llm(server).generate_content_async(after_tool_call(), stream=True))
    assert final.content is not None and final.content.parts is not None
    [part] = final.content.parts
    assert part.function_call is not None
    call = part.function_call
    assert (call.name, call.id, call.args) == ("get_weather", call_id, {"city": "Oslo"})
