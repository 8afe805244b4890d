"""OpenAI connector (the ``openai`` SDK): Chat Completions, the Responses API, Azure
OpenAI, and any OpenAI-compatible server.

Install with ``pip install 'eventide[openai]'``. Model names ``gpt-*``, ``o1``..``o9*``,
``chatgpt-*`` and ``openai/<model>`` resolve here; the key comes from ``OPENAI_API_KEY``.
``OpenAILlm(model="gpt-4.1", api="responses")`` uses the Responses API instead of Chat
Completions. Where the model is served is the :class:`~eventide.models.providers.OpenAIProvider`
(``provider=OpenAIProvider.azure(...)``, ``.ollama()``, ``.vllm(url)``, ``.compatible(url)``);
without one it is made from ``api_key``/``base_url``.

Local models through an OpenAI-compatible server (no key needed):

* **Ollama**: ``ollama pull llama3.2`` and ``ollama serve``; then use the model string
  ``"ollama/llama3.2"``. The server is ``OLLAMA_BASE_URL`` (with or without ``/v1``),
  default ``http://localhost:11434/v1``.
* **vLLM**: ``vllm serve Qwen/Qwen2.5-7B-Instruct --enable-auto-tool-choice
  --tool-call-parser hermes`` (tool calls need both flags); then
  ``OpenAILlm(model="Qwen/Qwen2.5-7B-Instruct", base_url="http://localhost:8000/v1")``, or
  set ``OPENAI_BASE_URL=http://localhost:8000/v1`` and use ``"openai/Qwen/Qwen2.5-7B-Instruct"``.
* **llama.cpp**: ``python -m llama_cpp.server --model model.gguf`` (from
  ``llama-cpp-python[server]``) or ``llama-server --jinja``; LM Studio works the same way
  through ``base_url``.

What these servers accept differs (tests/models/openai_dialects.py checks each): an
assistant message holding only tool calls is sent with ``"content": ""``, which all of them
take (llama.cpp and Ollama refuse ``null``). With a custom server the request sends
``max_tokens`` rather than ``max_completion_tokens``, and ``config.extra`` is sent as extra
body fields (e.g. vLLM's ``top_k``). Reasoning text that such servers stream as
``reasoning_content`` (DeepSeek, Qwen, vLLM) or ``reasoning`` (Ollama) becomes thought parts.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from typing import Any, Literal

from eventide.models._openai_chat_format import (
    chat_request,
    feed_chat_chunk,
    read_chat_completion,
)
from eventide.models._openai_responses_format import (
    feed_responses_event,
    read_responses_response,
    responses_request,
)
from eventide.models._sdk_calls import response_dict
from eventide.models._stream_assembler import StreamAssembler
from eventide.models.llm_request import LlmRequest
from eventide.models.llm_response import LlmResponse
from eventide.models.providers import OpenAIProvider, Provider
from eventide.models.remote_llm import RemoteLlm, WireCall

__all__ = ["OpenAILlm"]


class OpenAILlm(RemoteLlm):
    """A model served by OpenAI or by any OpenAI-compatible server.

    Attributes:
        model: ``gpt-4.1``, ``openai/<model>`` or ``ollama/<model>`` (prefix stripped).
        api: ``"chat_completions"`` (default, what compatible servers speak) or
            ``"responses"`` (OpenAI's Responses API).
        api_key: the key; default ``OPENAI_API_KEY`` (not needed with a custom base URL).
        base_url: the server; default ``OPENAI_BASE_URL`` or OpenAI's own.
        provider: where the model is served (overrides ``api_key``, ``base_url`` and
            ``timeout``).
    """

    model: str = "gpt-4.1-mini"
    api: Literal["chat_completions", "responses"] = "chat_completions"
    api_key: str | None = None
    base_url: str | None = None
    provider: OpenAIProvider | None = None

    @classmethod
    def supported_models(cls) -> list[str]:
        """``gpt-*``, ``o<digit>*``, ``chatgpt-*``, ``openai/*``, ``ollama/*``."""
        return [r"gpt-.*", r"o[1-9].*", r"chatgpt-.*", r"openai/.*", r"ollama/.*"]

    @property
    def _wire_model(self) -> str:
        model = self.model
        return model.partition("/")[2] if model.startswith(("openai/", "ollama/")) else model

    def _make_provider(self) -> OpenAIProvider:
        if self.provider is not None:
            return self.provider
        if self.model.startswith("ollama/") and not self.base_url:
            return OpenAIProvider.ollama(timeout=self.timeout)
        return OpenAIProvider(api_key=self.api_key, base_url=self.base_url, timeout=self.timeout)

    def _wire_call(self, llm_request: LlmRequest, provider: Provider) -> WireCall:
        assert isinstance(provider, OpenAIProvider)
        if self.api == "responses":
            body = responses_request(llm_request, model=self._wire_model)
            path, read, feed = "/responses", _read_responses, _feed_responses
            stream_fields: dict[str, Any] = {"stream": True}
        else:
            body = chat_request(
                llm_request,
                model=self._wire_model,
                max_tokens_field="max_tokens"
                if provider.custom_server
                else "max_completion_tokens",
                reuse_history=True,
            )
            path, read, feed = "/chat/completions", _read_chat, _feed_chat
            stream_fields = {"stream": True, "stream_options": {"include_usage": True}}
        # Extra body fields (vLLM's top_k, ...) travel at the top level, as the SDK's
        # extra_body sends them.
        body.update(llm_request.config.extra)
        return _posted_call(provider, path, body, stream_fields, read=read, feed=feed)


def _posted_call(
    provider: OpenAIProvider,
    path: str,
    body: dict[str, Any],
    stream_fields: dict[str, Any],
    *,
    read: Callable[[object, StreamAssembler], None],
    feed: Callable[[object, StreamAssembler], list[LlmResponse]],
) -> WireCall:
    """The request posted through the SDK client's ``post`` with the body as built.

    ``client.chat.completions.create(**body)`` would walk the whole body again to
    transform it (the history grows every turn, so that costs more each turn: 1-3 ms per
    turn after 20 turns) and build typed response objects that are dumped back to JSON
    data here. The body is already wire JSON, so it is posted as it is and the response is
    read as JSON data (``cast_to=object``). The client still does everything else as in
    ``create``: base URL (Azure's deployment path), auth headers, timeout, SSE parsing,
    error statuses raised as the SDK's exceptions.
    """
    client: Any = provider.client()

    async def send() -> object:
        result: object = await client.post(
            path, cast_to=object, body=body, options=_REQUEST_OPTIONS
        )
        return result

    async def open_stream() -> AsyncIterator[object]:
        created: AsyncIterator[object] = await client.post(
            path,
            cast_to=object,
            body={**body, **stream_fields},
            options=_REQUEST_OPTIONS,
            stream=True,
            stream_cls=provider.stream_class(),
        )
        return aiter(created)

    return WireCall(send=send, open_stream=open_stream, read=read, feed=feed)


_REQUEST_OPTIONS: dict[str, Any] = {"security": {"bearer_auth": True}}
"""What the SDK's ``create`` methods pass: authenticate with the API key as a bearer token."""


def _read_chat(result: object, assembler: StreamAssembler) -> None:
    read_chat_completion(response_dict(result), assembler)


def _feed_chat(item: object, assembler: StreamAssembler) -> list[LlmResponse]:
    return feed_chat_chunk(response_dict(item), assembler)


def _read_responses(result: object, assembler: StreamAssembler) -> None:
    read_responses_response(response_dict(result), assembler)


def _feed_responses(item: object, assembler: StreamAssembler) -> list[LlmResponse]:
    return feed_responses_event(response_dict(item), assembler)
