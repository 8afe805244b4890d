"""One contract every connector keeps, run over each connector against the fake server of
its provider (the real SDK speaking the provider's wire protocol).

Rules (connectors): a provider error becomes an error response, never an exception; a
stream that breaks is MALFORMED_STREAM; a 429 is retried after the provider's Retry-After;
a request slower than the timeout is TIMEOUT; a missing key is a ConfigurationError naming
the variable to set; close() releases the client, and the next call makes a new one.
"""

from __future__ import annotations

import importlib.util
import os
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest

from eventide.errors import ConfigurationError
from eventide.models import retrying_llm
from eventide.models.anthropic_llm import AnthropicLlm
from eventide.models.gemini_llm import GeminiLlm
from eventide.models.openai_llm import OpenAILlm
from eventide.models.remote_llm import RemoteLlm
from tests.models.conftest import collect, simple_request, text
from tests.models.fake_provider_servers import (
    FakeProviderServer,
    Reply,
    anthropic_sse,
    chat_sse,
    gemini_sse,
    responses_sse,
)

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
pytestmark = [
    # LiteLLM caches HTTP sessions per event loop: one loop for the module.
    pytest.mark.asyncio(loop_scope="module"),
    pytest.mark.filterwarnings("ignore::DeprecationWarning"),
    pytest.mark.filterwarnings("ignore::ResourceWarning"),
    pytest.mark.filterwarnings("ignore:Item .* is using the .ReadOnly. qualifier:UserWarning"),
]


@dataclass(frozen=True)
class Connector:
    """How one connector meets its fake server."""

    make: Callable[..., RemoteLlm]
    ok: Reply
    ok_stream: Reply
    garbage_stream: str
    error_body: dict[str, Any]
    key_variable: str | None


def _chat_ok() -> dict[str, Any]:
    return {
        "id": "c",
        "object": "chat.completion",
        "created": 1,
        "model": "m",
        "choices": [
            {"index": 0, "message": {"role": "assistant", "content": "ok"}, "finish_reason": "stop"}
        ],
    }


def _chat_chunk() -> dict[str, Any]:
    return {
        "id": "c",
        "object": "chat.completion.chunk",
        "created": 1,
        "model": "m",
        "choices": [{"index": 0, "delta": {"content": "ok"}, "finish_reason": "stop"}],
    }


_RESPONSE = {
    "id": "r",
    "object": "response",
    "created_at": 1,
    "model": "m",
    "status": "completed",
    "output": [
        {
            "id": "m1",
            "type": "message",
            "role": "assistant",
            "status": "completed",
            "content": [{"type": "output_text", "text": "ok", "annotations": []}],
        }
    ],
}
_MESSAGE = {
    "id": "msg",
    "type": "message",
    "role": "assistant",
    "model": "claude-test",
    "content": [{"type": "text", "text": "ok"}],
    "stop_reason": "end_turn",
    "stop_sequence": None,
    "usage": {"input_tokens": 1, "output_tokens": 1},
}
_GEMINI = {
    "candidates": [
        {"content": {"role": "model", "parts": [{"text": "ok"}]}, "finishReason": "STOP"}
    ]
}
_OPENAI_ERROR = {"error": {"message": "bad request", "type": "invalid_request_error"}}


def _anthropic_stream() -> str:
    start = {**_MESSAGE, "content": [], "stop_reason": None}
    return anthropic_sse(
        [
            {"type": "message_start", "message": start},
            {
                "type": "content_block_start",
                "index": 0,
                "content_block": {"type": "text", "text": ""},
            },
            {
                "type": "content_block_delta",
                "index": 0,
                "delta": {"type": "text_delta", "text": "ok"},
            },
            {"type": "content_block_stop", "index": 0},
            {
                "type": "message_delta",
                "delta": {"stop_reason": "end_turn"},
                "usage": {"output_tokens": 1},
            },
            {"type": "message_stop"},
        ]
    )


def _responses_stream() -> str:
    return responses_sse(
        [
            {
                "type": "response.output_text.delta",
                "delta": "ok",
                "item_id": "m1",
                "output_index": 0,
                "content_index": 0,
                "sequence_number": 1,
                "logprobs": [],
            },
            {"type": "response.completed", "response": _RESPONSE, "sequence_number": 2},
        ]
    )


CONNECTORS: dict[str, Connector] = {
    "openai_chat": Connector(
        make=lambda url, **kw: OpenAILlm(model="gpt-test", base_url=f"{url}/v1", **kw),
        ok=Reply(body=_chat_ok()),
        ok_stream=Reply(sse=chat_sse([_chat_chunk()])),
        garbage_stream="data: {nope\n\n",
        error_body=_OPENAI_ERROR,
        key_variable="OPENAI_API_KEY",
    ),
    "openai_responses": Connector(
        make=lambda url, **kw: OpenAILlm(
            model="gpt-test", api="responses", base_url=f"{url}/v1", **kw
        ),
        ok=Reply(body=_RESPONSE),
        ok_stream=Reply(sse=_responses_stream()),
        garbage_stream="event: response.created\ndata: {nope\n\n",
        error_body=_OPENAI_ERROR,
        key_variable="OPENAI_API_KEY",
    ),
    "anthropic": Connector(
        make=lambda url, **kw: AnthropicLlm(model="claude-test", base_url=url, **kw),
        ok=Reply(body=_MESSAGE),
        ok_stream=Reply(sse=_anthropic_stream()),
        garbage_stream="event: message_start\ndata: {nope\n\n",
        error_body={
            "type": "error",
            "error": {"type": "invalid_request_error", "message": "bad request"},
        },
        key_variable="ANTHROPIC_API_KEY",
    ),
    "gemini": Connector(
        make=lambda url, **kw: GeminiLlm(model="gemini-test", base_url=url, **kw),
        ok=Reply(body=_GEMINI),
        ok_stream=Reply(sse=gemini_sse([_GEMINI])),
        garbage_stream="data: {nope\n\n",
        error_body={"error": {"code": 400, "message": "bad request", "status": "INVALID_ARGUMENT"}},
        key_variable="GOOGLE_API_KEY",
    ),
}
if importlib.util.find_spec("litellm") is not None:
    from eventide.models.litellm_llm import LiteLlm

    CONNECTORS["litellm"] = Connector(
        make=lambda url, **kw: LiteLlm(model="litellm/openai/gpt-test", api_base=f"{url}/v1", **kw),
        ok=Reply(body=_chat_ok()),
        ok_stream=Reply(sse=chat_sse([_chat_chunk()])),
        garbage_stream="data: {nope\n\n",
        error_body=_OPENAI_ERROR,
        # LiteLLM reads each provider's own variable; it has no key check of its own.
        key_variable=None,
    )
elif os.environ.get("CI") == "true":
    raise RuntimeError("litellm is not installed; CI must install eventide[litellm]")

NAMES = sorted(CONNECTORS)


def connector_llm(name: str, server: FakeProviderServer, **kwargs: Any) -> RemoteLlm:
    connector = CONNECTORS[name]
    settings: dict[str, Any] = {"api_key": "k", "retry_base_delay": 0.001, **kwargs}
    return connector.make(server.url, **settings)


@pytest.fixture
def sleeps(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    """The waits between retries, recorded instead of slept."""
    recorded: list[float] = []

    async def record(seconds: float) -> None:
        recorded.append(seconds)

    monkeypatch.setattr(retrying_llm, "sleep", record)
    return recorded


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("stream", [False, True], ids=["whole", "stream"])
async def test_answer_and_provider_error(
    server: FakeProviderServer, name: str, stream: bool
) -> None:
    """An answer comes back as text; a 400 becomes an error response, sent once."""
    connector = CONNECTORS[name]
    llm = connector_llm(name, server)
    server.add(connector.ok_stream if stream else connector.ok)
    responses = await collect(llm.generate_content_async(simple_request(), stream=stream))
    assert (responses[-1].error_code, text(responses[-1])) == (None, "ok")
    server.add(Reply(status=400, body=connector.error_body))
    [failed] = await collect(llm.generate_content_async(simple_request(), stream=stream))
    assert failed.error_code is not None and "bad request" in (failed.error_message or "")
    assert failed.turn_complete and len(server.requests) == 2
    await llm.close()


@pytest.mark.parametrize("name", NAMES)
async def test_malformed_stream(server: FakeProviderServer, name: str) -> None:
    """A stream that cannot be parsed is MALFORMED_STREAM, not an exception."""
    server.add(Reply(sse=CONNECTORS[name].garbage_stream))
    llm = connector_llm(name, server)
    responses = await collect(llm.generate_content_async(simple_request(), stream=True))
    assert responses[-1].error_code == "MALFORMED_STREAM"
    await llm.close()


@pytest.mark.parametrize("name", NAMES)
async def test_429_is_retried_after_retry_after(
    server: FakeProviderServer, name: str, sleeps: list[float]
) -> None:
    """A 429 is retried, waiting what Retry-After says (not the backoff's guess)."""
    connector = CONNECTORS[name]
    server.add(Reply(status=429, body=connector.error_body, headers={"retry-after": "7"}))
    server.add(connector.ok)
    llm = connector_llm(name, server, retry_base_delay=0.5)
    [response] = await collect(llm.generate_content_async(simple_request()))
    assert (response.error_code, text(response)) == (None, "ok")
    assert sleeps == [7.0] and len(server.requests) == 2
    await llm.close()


@pytest.mark.parametrize("name", NAMES)
async def test_timeout(server: FakeProviderServer, name: str) -> None:
    """A request slower than the connector's timeout is TIMEOUT (not retried)."""
    release = threading.Event()
    server.add(Reply(body=CONNECTORS[name].ok.body, hold=release))
    llm = connector_llm(name, server, timeout=0.3)
    try:
        [response] = await collect(llm.generate_content_async(simple_request()))
    finally:
        release.set()
    assert response.error_code == "TIMEOUT"
    await llm.close()


@pytest.mark.parametrize("name", [n for n in NAMES if CONNECTORS[n].key_variable])
async def test_missing_key_names_the_variable(server: FakeProviderServer, name: str) -> None:
    """No key anywhere: a ConfigurationError that names the variable, before any request."""
    connector = CONNECTORS[name]
    llm = connector.make("https://provider.invalid")
    if name.startswith("openai"):
        llm = OpenAILlm(model="gpt-test", api=getattr(llm, "api", "chat_completions"))
    with pytest.raises(ConfigurationError, match=str(connector.key_variable)):
        await collect(llm.generate_content_async(simple_request()))
    assert server.requests == []


@pytest.mark.parametrize("name", NAMES)
async def test_close_releases_the_client(server: FakeProviderServer, name: str) -> None:
    """close() closes the provider's client (checked where the SDK says so: openai and
    anthropic clients report ``is_closed()``); the next call makes a new provider and
    client, and works."""
    connector = CONNECTORS[name]
    server.add(connector.ok, connector.ok)
    llm = connector_llm(name, server)
    await collect(llm.generate_content_async(simple_request()))
    provider = llm.get_provider()
    client: Any = provider.client()
    await llm.close()
    if name.startswith(("openai", "anthropic")):
        assert client.is_closed()
    assert llm.get_provider() is not provider
    [response] = await collect(llm.generate_content_async(simple_request()))
    assert text(response) == "ok"
    await llm.close()
