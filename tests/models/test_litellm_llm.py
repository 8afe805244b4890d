"""The LiteLLM connector, with the real litellm package against the local fake OpenAI server.

LiteLLM is driven through its ``openai/`` provider pointed at the fake server, so the
whole path (LiteLLM's translation, its OpenAI client, our mapping) runs for real.
"""

from __future__ import annotations

import importlib.util
import os
from typing import Any

import pytest

from eventide.models.litellm_llm import LiteLlm
from eventide.models.registry import LLMRegistry
from tests.models.conftest import collect, compact, rich_request, simple_request, text
from tests.models.fake_provider_servers import FakeProviderServer, Reply, chat_sse
from tests.models.test_openai_llm import (
    PARALLEL_CALLS,
    PARALLEL_CALLS_STREAM,
    chunk,
    completion,
)

if importlib.util.find_spec("litellm") is None:
    if os.environ.get("CI") == "true":
        raise RuntimeError("litellm is not installed; CI must install eventide[litellm]")
    pytest.skip(
        "litellm is not installed (pip install 'eventide[litellm]')", allow_module_level=True
    )

# Importing litellm takes seconds; and without this it downloads a price list at import.
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
# LiteLLM keeps HTTP sessions in module-level caches bound to the event loop that made them;
# one loop for the whole module keeps them valid between tests.
pytestmark = [
    pytest.mark.slow,
    pytest.mark.asyncio(loop_scope="module"),
    pytest.mark.filterwarnings("ignore::DeprecationWarning"),
    pytest.mark.filterwarnings("ignore::ResourceWarning"),
    # Pydantic's note on LiteLLM's own TypedDicts, raised when LiteLLM first builds a schema.
    pytest.mark.filterwarnings("ignore:Item .* is using the .ReadOnly. qualifier:UserWarning"),
]


def llm(server: FakeProviderServer, **kwargs: Any) -> LiteLlm:
    return LiteLlm(
        model="litellm/openai/gpt-test",
        api_base=f"{server.url}/v1",
        api_key="sk-test",
        retry_base_delay=0.001,
        **kwargs,
    )


async def test_request_reaches_the_provider_translated(server: FakeProviderServer) -> None:
    """The Chat Completions body LiteLLM forwards carries the whole request."""
    server.add(Reply(body=completion({"role": "assistant", "content": "ok"})))
    [response] = await collect(llm(server).generate_content_async(rich_request()))
    assert text(response) == "ok"
    body = server.bodies[0]
    assert body["model"] == "gpt-test"
    assert [m["role"] for m in body["messages"]] == [
        "system",
        "user",
        "assistant",
        "tool",
        "tool",
        "user",
    ]
    assert [c["id"] for c in body["messages"][2]["tool_calls"]] == ["call_a", "call_2"]
    assert [m.get("tool_call_id") for m in body["messages"][3:5]] == ["call_a", "call_2"]
    assert body["tool_choice"] == {"type": "function", "function": {"name": "get_weather"}}
    assert body["response_format"]["type"] == "json_schema"
    assert (body["temperature"], body["top_p"], body["seed"], body["stop"]) == (
        0.2,
        0.9,
        7,
        ["END"],
    )


async def test_parallel_calls_and_stream_equal_non_streaming(server: FakeProviderServer) -> None:
    server.add(
        Reply(body=completion(PARALLEL_CALLS, finish="tool_calls")),
        Reply(sse=chat_sse(PARALLEL_CALLS_STREAM)),
    )
    model = llm(server)
    [non_streamed] = await collect(model.generate_content_async(simple_request()))
    streamed = await collect(model.generate_content_async(simple_request(), stream=True))
    calls = [p.function_call for p in non_streamed.content.parts if p.function_call]
    assert [(c.id, c.args) for c in calls] == [
        ("call_p", {"city": "Paris"}),
        ("call_o", {"city": "Oslo"}),
    ]
    assert "".join(text(r) or "" for r in streamed[:-1]) == "Looking up."
    assert all(r.partial for r in streamed[:-1])
    final = compact([streamed[-1]])[0]
    expected = compact([non_streamed])[0]
    # LiteLLM rebuilds usage for streams without the prompt-cache details.
    final.pop("usage_metadata"), expected.pop("usage_metadata")
    assert final == expected


async def test_retries_429(server: FakeProviderServer) -> None:
    server.add(
        Reply(status=429, body={"error": {"message": "Slow down", "code": "rate_limit_exceeded"}}),
        Reply(body=completion({"role": "assistant", "content": "Hi"})),
    )
    [response] = await collect(llm(server).generate_content_async(simple_request()))
    assert (response.error_code, text(response)) == (None, "Hi")
    assert len(server.requests) == 2


async def test_context_window_error(server: FakeProviderServer) -> None:
    server.add(
        Reply(
            status=400,
            body={
                "error": {
                    "message": "This model's maximum context length is 128000 tokens",
                    "type": "invalid_request_error",
                    "code": "context_length_exceeded",
                }
            },
        )
    )
    [response] = await collect(llm(server).generate_content_async(simple_request()))
    assert response.error_code == "context_length_exceeded"
    assert len(server.requests) == 1


async def test_malformed_stream(server: FakeProviderServer) -> None:
    sse = chat_sse([chunk({"content": "Hel"})], done=False) + "data: {not json\n\n"
    server.add(Reply(sse=sse))
    streamed = await collect(llm(server).generate_content_async(simple_request(), stream=True))
    assert streamed[-1].error_code == "MALFORMED_STREAM"


async def test_registry_resolves_litellm_names() -> None:
    assert LLMRegistry.resolve("litellm/mistral/mistral-large-latest") is LiteLlm
