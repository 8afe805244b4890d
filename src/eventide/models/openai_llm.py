"""OpenAI connector (the ``openai`` SDK): Chat Completions, the Responses API, and any
OpenAI-compatible server.

Install with ``pip install 'eventide[openai]'``. Model names ``gpt-*``, ``o1``..``o9*``,
``chatgpt-*`` and ``openai/<model>`` resolve here; the key comes from ``OPENAI_API_KEY``.
``OpenAILlm(model="gpt-4.1", api="responses")`` uses the Responses API instead of Chat
Completions.

Local models through an OpenAI-compatible server (no key needed):

* **Ollama**: ``ollama pull llama3.2`` and ``ollama serve``; then use the model string
  ``"ollama/llama3.2"``. The server is ``OLLAMA_BASE_URL`` (with or without ``/v1``),
  default ``http://localhost:11434/v1``.
* **vLLM**: ``vllm serve Qwen/Qwen2.5-7B-Instruct --enable-auto-tool-choice
  --tool-call-parser hermes`` (tool calls need both flags); then
  ``OpenAILlm(model="Qwen/Qwen2.5-7B-Instruct", base_url="http://localhost:8000/v1")``, or
  set ``OPENAI_BASE_URL=http://localhost:8000/v1`` and use ``"openai/Qwen/Qwen2.5-7B-Instruct"``.
* llama.cpp's ``llama-server --jinja`` and LM Studio work the same way through ``base_url``.

With a custom ``base_url`` the request sends ``max_tokens`` rather than
``max_completion_tokens`` (older servers know only the former), and ``config.extra`` is sent
as extra body fields (e.g. vLLM's ``top_k``). Reasoning text that such servers stream as
``reasoning_content`` (DeepSeek, Qwen, vLLM) or ``reasoning`` (Ollama) becomes thought parts.
"""

from __future__ import annotations

import os
from collections.abc import AsyncGenerator, AsyncIterator
from typing import Any, Literal

from eventide.models._connector_support import (
    OpenedStream,
    ProviderFailure,
    RemoteLlm,
    api_key_from_env,
    call_with_retries,
    close_stream,
    count_function_calls,
    fit_to_signature,
    guarded_stream,
    open_stream_with_retries,
    partial_text_response,
    response_dict,
    retry_after_seconds,
    status_code_failure,
)
from eventide.models._openai_chat_format import (
    chat_request,
    parse_chat_completion,
    stream_chat_completion,
)
from eventide.models._openai_responses_format import (
    parse_responses_response,
    responses_request,
)
from eventide.models.llm_request import LlmRequest
from eventide.models.llm_response import LlmResponse

__all__ = ["OpenAILlm"]

_DEFAULT_OLLAMA_URL = "http://localhost:11434/v1"


class OpenAILlm(RemoteLlm):
    """A model served by OpenAI or by any OpenAI-compatible server.

    Attributes:
        model: ``gpt-4.1``, ``openai/<model>`` or ``ollama/<model>`` (prefix stripped).
        api: ``"chat_completions"`` (default, what compatible servers speak) or
            ``"responses"`` (OpenAI's Responses API).
        api_key: the key; default ``OPENAI_API_KEY`` (not needed with a custom base URL).
        base_url: the server; default ``OPENAI_BASE_URL`` or OpenAI's own.
    """

    model: str = "gpt-4.1-mini"
    api: Literal["chat_completions", "responses"] = "chat_completions"
    api_key: str | None = None
    base_url: str | None = None

    @classmethod
    def supported_models(cls) -> list[str]:
        """``gpt-*``, ``o<digit>*``, ``chatgpt-*``, ``openai/*``, ``ollama/*``."""
        return [r"gpt-.*", r"o[1-9].*", r"chatgpt-.*", r"openai/.*", r"ollama/.*"]

    @property
    def _wire_model(self) -> str:
        for prefix in ("openai/", "ollama/"):
            if self.model.startswith(prefix):
                return self.model[len(prefix) :]
        return self.model

    def _resolved_base_url(self) -> str | None:
        if self.base_url:
            return self.base_url
        if self.model.startswith("ollama/"):
            url = os.environ.get("OLLAMA_BASE_URL") or os.environ.get("OLLAMA_HOST")
            if not url:
                return _DEFAULT_OLLAMA_URL
            url = url if "://" in url else f"http://{url}"
            return url.rstrip("/") if url.rstrip("/").endswith("/v1") else f"{url}/v1"
        return os.environ.get("OPENAI_BASE_URL") or None

    def _get_client(self) -> Any:
        if self._client is None:
            import openai

            base_url = self._resolved_base_url()
            if base_url is not None:
                # Local servers ignore the key, but the SDK insists on having one.
                key = self.api_key or os.environ.get("OPENAI_API_KEY") or "not-needed"
            else:
                key = api_key_from_env(self.api_key, ["OPENAI_API_KEY"], provider="OpenAI")
            self._client = openai.AsyncOpenAI(
                api_key=key,
                base_url=base_url,
                timeout=self.timeout,
                # Retries happen in Eventide, with its own policy, for every connector alike.
                max_retries=0,
            )
        return self._client

    def _body(self, llm_request: LlmRequest) -> dict[str, Any]:
        custom_server = self._resolved_base_url() is not None
        if self.api == "responses":
            body = responses_request(llm_request, model=self._wire_model)
        else:
            body = chat_request(
                llm_request,
                model=self._wire_model,
                max_tokens_field="max_tokens" if custom_server else "max_completion_tokens",
            )
        if llm_request.config.extra:
            body["extra_body"] = dict(llm_request.config.extra)
        return body

    async def generate_content_async(
        self, llm_request: LlmRequest, stream: bool = False
    ) -> AsyncGenerator[LlmResponse, None]:
        """Call the model; see :class:`~eventide.models.base_llm.BaseLlm`."""
        client = self._get_client()
        endpoint = client.responses if self.api == "responses" else client.chat.completions
        body = fit_to_signature(endpoint.create, self._body(llm_request))
        calls_before = count_function_calls(llm_request)
        policy = self._retry_policy()
        if not stream:
            result = await call_with_retries(
                lambda: endpoint.create(**body), policy=policy, classify=_classify
            )
            if isinstance(result, ProviderFailure):
                yield result.to_response()
                return
            data = response_dict(result)
            if self.api == "responses":
                yield parse_responses_response(data, calls_before=calls_before)
            else:
                yield parse_chat_completion(data, calls_before=calls_before)
            return

        async def open_stream() -> AsyncIterator[Any]:
            if self.api == "responses":
                created = await endpoint.create(**body, stream=True)
            else:
                created = await endpoint.create(
                    **body, stream=True, stream_options={"include_usage": True}
                )
            return aiter(created)

        opened = await open_stream_with_retries(open_stream, policy=policy, classify=_classify)
        if isinstance(opened, ProviderFailure):
            yield opened.to_response()
            return
        try:
            if self.api == "responses":
                async for response in _responses_stream(opened, calls_before):
                    yield response
            else:
                async for response in stream_chat_completion(opened, calls_before, _classify):
                    yield response
        finally:
            await close_stream(opened.rest)


async def _responses_stream(
    opened: OpenedStream[Any], calls_before: int
) -> AsyncGenerator[LlmResponse, None]:
    async for event in guarded_stream(opened, classify=_classify):
        if isinstance(event, ProviderFailure):
            yield event.to_response()
            return
        data = response_dict(event)
        kind = data.get("type")
        if kind == "response.output_text.delta" and data.get("delta"):
            yield partial_text_response(data["delta"])
        elif kind in {
            "response.reasoning_summary_text.delta",
            "response.reasoning_text.delta",
        } and data.get("delta"):
            yield partial_text_response(data["delta"], thought=True)
        elif kind in {"response.completed", "response.incomplete", "response.failed"}:
            # The closing event carries the whole response: the same object a
            # non-streaming call returns, so both paths end in the same LlmResponse.
            yield parse_responses_response(data.get("response") or {}, calls_before=calls_before)
            return
        elif kind == "error":
            yield LlmResponse(
                error_code=str(data.get("code") or "STREAM_ERROR"),
                error_message=data.get("message") or "The provider reported a stream error.",
                turn_complete=True,
            )
            return
    yield ProviderFailure(
        code="MALFORMED_STREAM",
        message="The Responses API stream ended without a response.completed event; retry.",
    ).to_response()


def _classify(exc: Exception) -> ProviderFailure | None:
    import openai

    if isinstance(exc, openai.APITimeoutError):
        return ProviderFailure(
            code="TIMEOUT",
            message=f"OpenAI did not answer in time ({exc}). Raise the connector's timeout.",
        )
    if isinstance(exc, openai.APIConnectionError):
        return ProviderFailure(
            code="CONNECTION_ERROR", message=f"Cannot reach the server: {exc}", retryable=True
        )
    if isinstance(exc, openai.APIStatusError):
        failure = status_code_failure(
            exc.status_code,
            str(exc.code) if getattr(exc, "code", None) else None,
            _status_message(exc),
            provider="OpenAI",
        )
        failure.retry_after = retry_after_seconds(exc.response.headers)
        return failure
    if isinstance(exc, openai.APIError):
        # Raised for an error event inside an SSE stream.
        code = getattr(exc, "code", None)
        return ProviderFailure(code=str(code or "STREAM_ERROR"), message=exc.message)
    return None


def _status_message(exc: Any) -> str:
    body = getattr(exc, "body", None)
    if isinstance(body, dict):
        message = body.get("message") or (body.get("error") or {}).get("message")
        if message:
            return str(message)
    return str(getattr(exc, "message", exc))
