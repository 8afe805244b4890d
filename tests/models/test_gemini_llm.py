"""The Gemini connector, with the real google-genai SDK against a local fake Gemini API."""

from __future__ import annotations

from typing import Any

import pytest

from eventide import types
from eventide.errors import ConfigurationError
from eventide.events import Event
from eventide.models.gemini_llm import GeminiLlm
from eventide.models.registry import LLMRegistry
from tests.models.conftest import (
    assert_golden,
    collect,
    compact,
    rich_request,
    simple_request,
    text,
)
from tests.models.fake_provider_servers import FakeProviderServer, Reply, gemini_sse

# google-genai subclasses aiohttp's ClientSession when aiohttp is installed (litellm brings
# it), and aiohttp deprecates that; the SDK's business, not a connector failure.
pytestmark = pytest.mark.filterwarnings(
    "ignore:Inheritance class AiohttpClientSession:DeprecationWarning"
)

USAGE = {
    "promptTokenCount": 9,
    "candidatesTokenCount": 4,
    "totalTokenCount": 15,
    "thoughtsTokenCount": 2,
}


def llm(server: FakeProviderServer, **kwargs: Any) -> GeminiLlm:
    return GeminiLlm(
        model="gemini-test", api_key="g-key", base_url=server.url, retry_base_delay=0.001, **kwargs
    )


def answer(
    parts: list[dict[str, Any]],
    finish: str | None = "STOP",
    usage: dict[str, Any] | None = USAGE,
    **candidate: Any,
) -> dict[str, Any]:
    cand: dict[str, Any] = {"content": {"role": "model", "parts": parts}, "index": 0, **candidate}
    if finish:
        cand["finishReason"] = finish
    data: dict[str, Any] = {"candidates": [cand], "modelVersion": "gemini-test"}
    if usage:
        data["usageMetadata"] = usage
    return data


# Gemini sends function calls without ids here, as it may.
PARALLEL: list[dict[str, Any]] = [
    {"text": "Need both.", "thought": True, "thoughtSignature": "c2ln"},
    {"text": "Looking up."},
    {"functionCall": {"name": "get_weather", "args": {"city": "Paris"}}},
    {"functionCall": {"name": "get_weather", "args": {"city": "Oslo"}}},
]

PARALLEL_CHUNKS: list[dict[str, Any]] = [
    answer([{"text": "Need ", "thought": True}], finish=None, usage=None),
    answer(
        [{"text": "both.", "thought": True, "thoughtSignature": "c2ln"}], finish=None, usage=None
    ),
    answer([{"text": "Looking"}], finish=None, usage=None),
    answer([{"text": " up."}], finish=None, usage=None),
    answer(PARALLEL[2:], finish="STOP", usage=USAGE),
]


async def test_request_translation_matches_golden(server: FakeProviderServer) -> None:
    """The whole LlmRequest becomes this generateContent body; the generated id of the
    second call is not sent (Gemini never issued it)."""
    request = rich_request()
    request.contents[1].parts[3].function_call.id = "call_2"  # type: ignore[index,union-attr]
    request.contents[2].parts[1].function_response.id = "call_2"  # type: ignore[index,union-attr]
    request.config.thinking_budget = 1024
    request.config.tools.append(  # type: ignore[union-attr]
        types.Tool(code_execution={}, google_search={})
    )
    server.add(Reply(body=answer([{"text": "{}"}])))
    [response] = await collect(llm(server).generate_content_async(request))
    assert server.requests[0].path == "/v1beta/models/gemini-test:generateContent"
    assert server.requests[0].headers["x-goog-api-key"] == "g-key"
    assert_golden("gemini_request", server.bodies[0])
    assert compact([response]) == [
        {
            "content": {"role": "model", "parts": [{"text": "{}"}]},
            "finish_reason": "STOP",
            "model_version": "gemini-test",
            "turn_complete": True,
            "usage_metadata": {
                "prompt_token_count": 9,
                "candidates_token_count": 4,
                "total_token_count": 15,
                "thoughts_token_count": 2,
            },
        }
    ]


async def test_parallel_calls_get_stable_ids(server: FakeProviderServer) -> None:
    """Calls without ids get call_<n>, numbered after the calls already in the history."""
    server.add(Reply(body=answer(PARALLEL)), Reply(body=answer(PARALLEL)))
    [first] = await collect(llm(server).generate_content_async(simple_request()))
    [again] = await collect(llm(server).generate_content_async(simple_request()))
    assert compact([first])[0]["content"]["parts"] == [
        {"text": "Need both.", "thought": True, "thought_signature": "c2ln"},
        {"text": "Looking up."},
        {"function_call": {"id": "call_1", "name": "get_weather", "args": {"city": "Paris"}}},
        {"function_call": {"id": "call_2", "name": "get_weather", "args": {"city": "Oslo"}}},
    ]
    assert compact([again]) == compact([first])


async def test_stream_ends_like_non_streaming(server: FakeProviderServer) -> None:
    server.add(Reply(body=answer(PARALLEL)), Reply(sse=gemini_sse(PARALLEL_CHUNKS)))
    model = llm(server)
    [non_streamed] = await collect(model.generate_content_async(simple_request()))
    streamed = await collect(model.generate_content_async(simple_request(), stream=True))
    assert server.requests[1].path == "/v1beta/models/gemini-test:streamGenerateContent?alt=sse"
    assert compact(streamed[:-1]) == [
        {
            "content": {"role": "model", "parts": [{"text": "Need ", "thought": True}]},
            "partial": True,
        },
        {
            "content": {"role": "model", "parts": [{"text": "both.", "thought": True}]},
            "partial": True,
        },
        {"content": {"role": "model", "parts": [{"text": "Looking"}]}, "partial": True},
        {"content": {"role": "model", "parts": [{"text": " up."}]}, "partial": True},
    ]
    assert compact([streamed[-1]]) == compact([non_streamed])


async def test_code_execution_and_grounding_map_onto_the_response(
    server: FakeProviderServer,
) -> None:
    """Built-in tool output arrives as executable_code / code_execution_result parts and
    grounding metadata. Spec rule: an event ending with a code-execution result is not a
    final response (is_final_response)."""
    grounding = {
        "webSearchQueries": ["weather paris"],
        "groundingChunks": [{"web": {"uri": "https://example.invalid", "title": "x"}}],
    }
    parts = [
        {"executableCode": {"language": "PYTHON", "code": "print(6*7)"}},
        {"codeExecutionResult": {"outcome": "OUTCOME_OK", "output": "42\n"}},
    ]
    server.add(Reply(body=answer(parts, groundingMetadata=grounding)))
    [response] = await collect(llm(server).generate_content_async(simple_request()))
    assert compact([response])[0]["content"]["parts"] == [
        {"executable_code": {"language": "PYTHON", "code": "print(6*7)"}},
        {"code_execution_result": {"outcome": "OUTCOME_OK", "output": "42\n"}},
    ]
    assert response.grounding_metadata is not None
    assert response.grounding_metadata.web_search_queries == ["weather paris"]
    event = Event(author="agent", invocation_id="e-1", **response.model_dump(exclude_none=True))
    assert not event.is_final_response()


async def test_retries_resource_exhausted(server: FakeProviderServer) -> None:
    server.add(
        Reply(
            status=429,
            body={
                "error": {
                    "code": 429,
                    "message": "Resource exhausted",
                    "status": "RESOURCE_EXHAUSTED",
                }
            },
        ),
        Reply(
            status=503,
            body={"error": {"code": 503, "message": "overloaded", "status": "UNAVAILABLE"}},
        ),
        Reply(body=answer([{"text": "Hi"}])),
    )
    [response] = await collect(llm(server).generate_content_async(simple_request()))
    assert (response.error_code, text(response)) == (None, "Hi")
    assert len(server.requests) == 3


async def test_retries_429_when_opening_a_stream(server: FakeProviderServer) -> None:
    server.add(
        Reply(
            status=429,
            body={
                "error": {
                    "code": 429,
                    "message": "Resource exhausted",
                    "status": "RESOURCE_EXHAUSTED",
                }
            },
        ),
        Reply(sse=gemini_sse([answer([{"text": "Hi"}])])),
    )
    streamed = await collect(llm(server).generate_content_async(simple_request(), stream=True))
    assert [text(r) for r in streamed] == ["Hi", "Hi"]
    assert len(server.requests) == 2


@pytest.mark.parametrize(
    ("status", "error_status", "message"),
    [
        (
            400,
            "INVALID_ARGUMENT",
            "The input token count (1200000) exceeds the maximum number of tokens allowed",
        ),
        (403, "PERMISSION_DENIED", "API key not valid."),
    ],
)
async def test_errors_become_error_responses(
    server: FakeProviderServer, status: int, error_status: str, message: str
) -> None:
    server.add(
        Reply(
            status=status,
            body={"error": {"code": status, "message": message, "status": error_status}},
        )
    )
    [response] = await collect(llm(server).generate_content_async(simple_request()))
    assert response.error_code == error_status
    assert message in (response.error_message or "")
    assert len(server.requests) == 1


async def test_safety_finish_and_blocked_prompt(server: FakeProviderServer) -> None:
    server.add(
        Reply(body=answer([{"text": "partial"}], finish="SAFETY")),
        Reply(body={"promptFeedback": {"blockReason": "SAFETY"}, "usageMetadata": USAGE}),
    )
    model = llm(server)
    [stopped] = await collect(model.generate_content_async(simple_request()))
    [blocked] = await collect(model.generate_content_async(simple_request()))
    assert (stopped.finish_reason, stopped.error_code) == ("SAFETY", "SAFETY")
    assert blocked.error_code == "SAFETY"


@pytest.mark.parametrize("how", ["cut", "garbage"])
async def test_malformed_stream_becomes_error_response(
    server: FakeProviderServer, how: str
) -> None:
    sse = gemini_sse(PARALLEL_CHUNKS[:3])
    if how == "garbage":
        sse += "data: {nope\n\n"
    server.add(Reply(sse=sse, cut=how == "cut"))
    streamed = await collect(llm(server).generate_content_async(simple_request(), stream=True))
    assert all(r.partial for r in streamed[:-1])
    assert streamed[-1].error_code == "MALFORMED_STREAM"


async def test_missing_key_names_the_variables() -> None:
    with pytest.raises(ConfigurationError, match="GOOGLE_API_KEY or GEMINI_API_KEY"):
        await collect(GeminiLlm(model="gemini-x").generate_content_async(simple_request()))


async def test_key_from_gemini_api_key(
    server: FakeProviderServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GEMINI_API_KEY", "from-env")
    server.add(Reply(body=answer([{"text": "ok"}])))
    model = GeminiLlm(model="gemini-test", base_url=server.url)
    await collect(model.generate_content_async(simple_request()))
    assert server.requests[0].headers["x-goog-api-key"] == "from-env"


@pytest.mark.parametrize("name", ["gemini-2.5-flash", "models/gemini-2.5-pro"])
def test_registry_resolves_gemini_names(name: str) -> None:
    assert LLMRegistry.resolve(name) is GeminiLlm


async def test_vertex_ai_path_and_credentials(server: FakeProviderServer) -> None:
    """Vertex AI: the project/location model path and a bearer token instead of a key."""
    import datetime

    from google.oauth2.credentials import Credentials

    expiry = datetime.datetime.now(datetime.UTC).replace(tzinfo=None) + datetime.timedelta(hours=1)
    server.add(Reply(body=answer([{"text": "ok"}])))
    model = GeminiLlm(
        model="gemini-test",
        vertexai=True,
        project="proj",
        location="europe-west4",
        credentials=Credentials(token="vertex-token", expiry=expiry),  # type: ignore[no-untyped-call]
        base_url=server.url,
    )
    [response] = await collect(model.generate_content_async(simple_request()))
    assert text(response) == "ok"
    assert server.requests[0].path == (
        "/v1beta1/projects/proj/locations/europe-west4/publishers/google/models/"
        "gemini-test:generateContent"
    )
    assert server.requests[0].headers["authorization"] == "Bearer vertex-token"


async def test_timeout_is_reported_not_raised(server: FakeProviderServer) -> None:
    import threading

    release = threading.Event()
    server.add(Reply(body=answer([{"text": "late"}]), hold=release))
    model = llm(server, timeout=0.2)
    try:
        [response] = await collect(model.generate_content_async(simple_request()))
    finally:
        release.set()
    await model.close()
    assert response.error_code == "TIMEOUT"
