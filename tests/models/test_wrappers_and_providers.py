"""RetryingLlm and FallbackLlm around any model, and the providers that own clients."""

from __future__ import annotations

import subprocess
import sys
import threading
import time
from collections.abc import AsyncGenerator
from typing import Any

import pytest
from pydantic import PrivateAttr

from eventide import types
from eventide.errors import ConfigurationError, ModelError
from eventide.models import FallbackLlm, OpenAIProvider, RetryingLlm
from eventide.models.base_llm import BaseLlm
from eventide.models.llm_request import LlmRequest
from eventide.models.llm_response import LlmResponse
from eventide.models.openai_llm import OpenAILlm
from tests.models.conftest import collect, text
from tests.models.fake_provider_servers import FakeProviderServer, Reply


def answer(value: str, *, partial: bool = False) -> LlmResponse:
    return LlmResponse(
        content=types.Content(role="model", parts=[types.Part(text=value)]),
        partial=partial or None,
    )


class Flaky(BaseLlm):
    """Answers from a script: each call yields the next list of responses."""

    model: str = "flaky"
    _script: list[list[LlmResponse]] = PrivateAttr(default_factory=lambda: [])
    _calls: int = PrivateAttr(default=0)

    def then(self, *responses: LlmResponse) -> Flaky:
        self._script.append(list(responses))
        return self

    @property
    def calls(self) -> int:
        return self._calls

    async def generate_content_async(
        self, llm_request: LlmRequest, stream: bool = False
    ) -> AsyncGenerator[LlmResponse, None]:
        responses = self._script[self._calls]
        self._calls += 1
        for response in responses:
            yield response


def failure(code: str, *, retryable: bool, retry_after: float | None = None) -> LlmResponse:
    return LlmResponse.from_error(
        ModelError(f"failed: {code}", error_code=code, retryable=retryable, retry_after=retry_after)
    )


async def test_retrying_llm_retries_retryable_failures_of_any_model() -> None:
    """Rule (connectors, retries): RetryingLlm retries a retryable failure that came before
    any output, honouring Retry-After, and names the retries when it gives up."""
    inner = Flaky().then(failure("429", retryable=True, retry_after=0)).then(answer("ok"))
    responses = await collect(RetryingLlm(llm=inner).generate_content_async(LlmRequest()))
    assert [text(r) for r in responses] == ["ok"]
    assert inner.calls == 2

    failing = Flaky()
    for _ in range(3):
        failing.then(failure("503", retryable=True, retry_after=0))
    [final] = await collect(
        RetryingLlm(llm=failing, max_retries=2).generate_content_async(LlmRequest())
    )
    assert final.error_code == "503"
    assert "(after 2 retries)" in (final.error_message or "")
    assert failing.calls == 3


@pytest.mark.parametrize(
    "responses",
    [
        pytest.param([failure("400", retryable=False)], id="not-retryable"),
        pytest.param(
            [answer("Hel", partial=True), failure("503", retryable=True)], id="after-output"
        ),
    ],
)
async def test_retrying_llm_leaves_what_cannot_be_retried(responses: list[LlmResponse]) -> None:
    """Rule (connectors, retries): a failure that cannot succeed, or that comes after output
    reached the caller, is passed on without a retry."""
    inner = Flaky().then(*responses).then(answer("never"))
    got = await collect(RetryingLlm(llm=inner).generate_content_async(LlmRequest(), stream=True))
    assert got == responses
    assert inner.calls == 1


def test_wrappers_take_the_model_name_of_what_they_wrap() -> None:
    inner = Flaky()
    assert RetryingLlm(llm=inner).model == "flaky"
    assert FallbackLlm(llms=[inner, Flaky(model="other")]).model == "flaky"
    with pytest.raises(ValueError, match="at least one model"):
        FallbackLlm(llms=[])


async def test_fallback_llm_moves_to_the_next_model_when_one_fails(
    server: FakeProviderServer,
) -> None:
    """Rule (connectors, fallback): a provider failure before any output sends the same
    request to the next model; the answer comes from the first model that answers."""
    unreachable = OpenAILlm(model="down", base_url="http://127.0.0.1:9/v1", max_retries=0)
    server.add(Reply(body=_completion("from the second")))
    working = OpenAILlm(model="up", base_url=f"{server.url}/v1", max_retries=0)
    [response] = await collect(
        FallbackLlm(llms=[unreachable, working]).generate_content_async(LlmRequest())
    )
    assert (response.error_code, text(response)) == (None, "from the second")
    assert server.bodies[0]["model"] == "up"


async def test_fallback_llm_keeps_a_refusal_and_reports_the_last_failure() -> None:
    """Rule (connectors, fallback): a SAFETY refusal is an answer (no fallback); when every
    model fails, the last failure is reported."""
    refusing = Flaky().then(failure("SAFETY", retryable=False))
    spare = Flaky().then(answer("unused"))
    [refusal] = await collect(
        FallbackLlm(llms=[refusing, spare]).generate_content_async(LlmRequest())
    )
    assert refusal.error_code == "SAFETY" and spare.calls == 0

    first = Flaky().then(failure("500", retryable=True))
    last = Flaky().then(failure("CONNECTION_ERROR", retryable=True))
    [final] = await collect(FallbackLlm(llms=[first, last]).generate_content_async(LlmRequest()))
    assert final.error_code == "CONNECTION_ERROR"


def _completion(content: str) -> dict[str, Any]:
    return {
        "id": "c",
        "object": "chat.completion",
        "created": 1,
        "model": "m",
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": content},
                "finish_reason": "stop",
            }
        ],
    }


async def test_azure_provider_calls_the_deployment_with_its_api_version(
    server: FakeProviderServer,
) -> None:
    """Rule (providers): Azure OpenAI is a provider of the same connector: the model is the
    deployment, the key travels as ``api-key`` and the API version as a query parameter."""
    server.add(Reply(body=_completion("hi from azure")))
    provider = OpenAIProvider.azure(endpoint=server.url, api_version="2024-10-21", api_key="az")
    llm = OpenAILlm(model="my-deployment", provider=provider)
    [response] = await collect(llm.generate_content_async(LlmRequest()))
    await llm.close()
    assert text(response) == "hi from azure"
    request = server.requests[0]
    assert (
        request.path == "/openai/deployments/my-deployment/chat/completions?api-version=2024-10-21"
    )
    assert request.headers["api-key"] == "az"
    assert "max_completion_tokens" not in request.body


def test_azure_provider_without_endpoint_or_key_says_what_to_set() -> None:
    with pytest.raises(ConfigurationError, match="AZURE_OPENAI_ENDPOINT"):
        OpenAIProvider.azure()
    provider = OpenAIProvider.azure(endpoint="http://127.0.0.1:9")
    with pytest.raises(ConfigurationError, match="AZURE_OPENAI_API_KEY"):
        provider.client()


@pytest.mark.parametrize(
    ("setting", "url"),
    [
        (None, "http://localhost:11434/v1"),
        ("127.0.0.1:9999", "http://127.0.0.1:9999/v1"),
        ("http://gpu-box:11434/v1/", "http://gpu-box:11434/v1"),
    ],
)
def test_ollama_provider_url(
    monkeypatch: pytest.MonkeyPatch, setting: str | None, url: str
) -> None:
    """Rule (providers): Ollama's URL comes from OLLAMA_BASE_URL/OLLAMA_HOST, with or
    without scheme and ``/v1``."""
    if setting is not None:
        monkeypatch.setenv("OLLAMA_HOST", setting)
    provider = OpenAIProvider.ollama()
    assert (provider.base_url, provider.name, provider.custom_server) == (url, "Ollama", True)
    made = OpenAILlm(model="ollama/llama3.2").get_provider()
    assert isinstance(made, OpenAIProvider) and made.base_url == url


async def test_provider_names_the_server_in_errors(server: FakeProviderServer) -> None:
    """Errors name the provider that failed (not "OpenAI" for a local vLLM)."""
    server.add(Reply(status=400, body={"error": {"message": "bad model"}}))
    llm = OpenAILlm(model="m", provider=OpenAIProvider.vllm(f"{server.url}/v1"))
    [response] = await collect(llm.generate_content_async(LlmRequest()))
    assert (response.error_message or "").startswith("vLLM returned HTTP 400: bad model")
    assert isinstance(response.error, ModelError) and response.error.status_code == 400


class _CountingProvider(OpenAIProvider):
    made = 0

    def _make_client(self) -> Any:
        type(self).made += 1
        time.sleep(0.01)  # widens the window in which two threads could both make one
        return super()._make_client()


async def test_prepare_makes_the_client_once_ahead_of_the_first_call(
    server: FakeProviderServer,
) -> None:
    """Rule (first call): ``prepare()`` does the first call's one-time work (the SDK
    import, the client) ahead of time, once even when called from several threads at once,
    and the call then uses that client."""
    server.add(Reply(body=_completion("hi")))
    provider = _CountingProvider.compatible(f"{server.url}/v1")
    model = OpenAILlm(model="m", provider=provider)
    threads = [threading.Thread(target=model.prepare) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert _CountingProvider.made == 1
    client = provider.client()
    [response] = await collect(model.generate_content_async(LlmRequest()))
    assert text(response) == "hi"
    assert provider.client() is client and _CountingProvider.made == 1
    await model.close()


def test_prepare_leaves_a_missing_key_to_the_first_call() -> None:
    """``prepare()`` in the background never fails; the call reports the missing key."""
    model = OpenAILlm(model="gpt-4.1")
    model.prepare()
    with pytest.raises(ConfigurationError, match="OPENAI_API_KEY"):
        model.get_provider().client()


class _Preparable(Flaky):
    _prepared: int = PrivateAttr(default=0)

    def prepare(self) -> None:
        self._prepared += 1


def test_wrappers_prepare_what_they_wrap() -> None:
    first, second = _Preparable(), _Preparable()
    RetryingLlm(llm=FallbackLlm(llms=[first, second])).prepare()
    assert (first._prepared, second._prepared) == (1, 1)  # pyright: ignore[reportPrivateUsage]


_FRESH_PROCESS_PREPARE = """
import sys
from eventide.models import OpenAIProvider
from eventide.models.openai_llm import OpenAILlm
from eventide.events import Event, EventActions
from eventide.models.llm_request import LlmRequest
from eventide import types

records = [Event, EventActions, LlmRequest, types.Content, types.Part]
before = [r.__pydantic_complete__ for r in records]
model = OpenAILlm(model="m", provider=OpenAIProvider.compatible("http://127.0.0.1:9/v1"))
model.prepare()
client = model.get_provider().client()
print(before, [r.__pydantic_complete__ for r in records], "openai" in sys.modules,
      client._platform is not None)
"""


def test_prepare_does_the_first_turns_one_time_work_in_a_fresh_process() -> None:
    """Rule (first call): in a fresh process, ``prepare()`` builds the schemas of the records
    a turn makes (deferred at import), imports the SDK and works out the client's platform
    headers, so none of it is left to the first turn."""
    done = subprocess.run(
        [sys.executable, "-c", _FRESH_PROCESS_PREPARE],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    assert done.stdout.split("] ", 1)[0] + "]" == "[False, False, False, False, False]"
    assert done.stdout.strip().endswith("[True, True, True, True, True] True True")
