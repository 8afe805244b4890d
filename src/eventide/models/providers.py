"""Providers: where a model is served and how to reach it.

A :class:`Provider` owns the authenticated SDK client (made on first use, closed by
:meth:`Provider.aclose`), the base URL, the key and the timeout, and knows its SDK's
exceptions. The connector classes (``OpenAILlm``, ``AnthropicLlm``, ``GeminiLlm``) only
translate requests and responses, and take a provider::

    OpenAILlm(model="qwen2.5", provider=OpenAIProvider.ollama())
    OpenAILlm(model="my-deployment", provider=OpenAIProvider.azure(endpoint="https://x.openai.azure.com"))
    OpenAILlm(model="Qwen/Qwen2.5-7B-Instruct", provider=OpenAIProvider.vllm("http://localhost:8000/v1"))
    GeminiLlm(model="gemini-2.5-flash", provider=GeminiProvider(vertexai=True, project="p"))

Without one, a connector makes its provider from its own fields (``api_key``,
``base_url``, ``timeout``), as before. SDKs are imported only when a client is made.
"""

from __future__ import annotations

import os
import threading
from abc import ABC, abstractmethod
from collections.abc import Callable
from typing import Any

from eventide.errors import ConfigurationError, ModelError
from eventide.models._failures import (
    connection_error,
    status_error,
    timeout_error,
)
from eventide.models._json import obj, string
from eventide.models._sdk_calls import header_map

__all__ = [
    "AnthropicProvider",
    "GeminiProvider",
    "OpenAIProvider",
    "Provider",
    "api_key_from_env",
]

_DEFAULT_OLLAMA_URL = "http://localhost:11434/v1"


def api_key_from_env(explicit: str | None, variables: list[str], *, provider: str) -> str:
    """The API key given explicitly, else from the first set variable of ``variables``.

    Raises:
        ConfigurationError: no key anywhere; the message names the variables.
    """
    if explicit:
        return explicit
    for name in variables:
        value = os.environ.get(name)
        if value:
            return value
    raise ConfigurationError(
        f"No {provider} API key: set the environment variable {' or '.join(variables)}, or "
        "pass api_key=... to the connector (or its provider)."
    )


class Provider(ABC):
    """A model provider's endpoint and client; see the module docstring.

    Attributes:
        name: how error messages name the provider (``"OpenAI"``, ``"Ollama"``, ...).
        timeout: seconds one HTTP request may take (None: the SDK's default).
    """

    def __init__(self, *, name: str, timeout: float | None) -> None:
        self.name = name
        self.timeout = timeout
        self._client: Any = None
        self._making = threading.Lock()

    def client(self) -> Any:
        """The SDK client, made on first use (keys are checked then)."""
        client = self._client
        if client is None:
            with self._making:
                client = self._client
                if client is None:
                    client = self._client = self._make_client()
        return client

    def prepare(self) -> None:
        """Make the client now, and do what its first request would do once (imports,
        cached headers). Safe in another thread; a missing key is left for the first call
        to report."""
        try:
            client = self.client()
        except ConfigurationError:
            return
        self._prepare_client(client)

    def _prepare_client(self, client: Any) -> None:
        """Provider-specific one-time work of the first request (none by default)."""
        del client

    async def aclose(self) -> None:
        """Close the client's connections; a new client is made on next use."""
        client, self._client = self._client, None
        if client is not None:
            await self._close_client(client)

    @abstractmethod
    def _make_client(self) -> Any: ...

    async def _close_client(self, client: Any) -> None:
        await client.close()

    @abstractmethod
    def classify(self, exc: Exception) -> ModelError | None:
        """The :class:`ModelError` for an exception of this provider's SDK (None: not one)."""


class OpenAIProvider(Provider):
    """OpenAI, Azure OpenAI, or any server speaking OpenAI's API (Ollama, vLLM, llama.cpp,
    LM Studio). Use the class methods for the usual set-ups.

    Attributes:
        base_url: the server (None: OpenAI's own, or ``OPENAI_BASE_URL``).
        custom_server: a server other than OpenAI's: no key needed, and requests send
            ``max_tokens`` rather than ``max_completion_tokens`` (older servers know only
            the former).
    """

    def __init__(
        self,
        *,
        api_key: str | None = None,
        base_url: str | None = None,
        timeout: float | None = 120.0,
        name: str | None = None,
        default_headers: dict[str, str] | None = None,
        azure_api_version: str | None = None,
        azure_ad_token_provider: Callable[[], str] | None = None,
    ) -> None:
        base_url = base_url or os.environ.get("OPENAI_BASE_URL") or None
        azure = azure_api_version is not None
        super().__init__(name=name or ("Azure OpenAI" if azure else "OpenAI"), timeout=timeout)
        self.api_key = api_key
        self.base_url = base_url
        self.custom_server = base_url is not None and not azure
        self._headers = default_headers
        self._azure_api_version = azure_api_version
        self._azure_token = azure_ad_token_provider

    @classmethod
    def azure(
        cls,
        *,
        endpoint: str | None = None,
        api_version: str | None = None,
        api_key: str | None = None,
        azure_ad_token_provider: Callable[[], str] | None = None,
        timeout: float | None = 120.0,
    ) -> OpenAIProvider:
        """Azure OpenAI: ``endpoint`` (``AZURE_OPENAI_ENDPOINT``), ``api_version``
        (``OPENAI_API_VERSION``), and a key (``AZURE_OPENAI_API_KEY``) or an Entra ID token
        provider. The connector's ``model`` is the deployment name."""
        endpoint = endpoint or os.environ.get("AZURE_OPENAI_ENDPOINT")
        if not endpoint:
            raise ConfigurationError(
                "No Azure OpenAI endpoint: set AZURE_OPENAI_ENDPOINT or pass "
                "OpenAIProvider.azure(endpoint='https://<resource>.openai.azure.com')."
            )
        version = api_version or os.environ.get("OPENAI_API_VERSION") or "2024-10-21"
        return cls(
            api_key=api_key,
            base_url=endpoint,
            timeout=timeout,
            azure_api_version=version,
            azure_ad_token_provider=azure_ad_token_provider,
        )

    @classmethod
    def ollama(
        cls, base_url: str | None = None, *, timeout: float | None = 120.0
    ) -> OpenAIProvider:
        """A local Ollama server: ``base_url``, else ``OLLAMA_BASE_URL``/``OLLAMA_HOST``
        (with or without ``/v1``), else ``http://localhost:11434/v1``."""
        url = base_url or os.environ.get("OLLAMA_BASE_URL") or os.environ.get("OLLAMA_HOST")
        if not url:
            url = _DEFAULT_OLLAMA_URL
        url = url if "://" in url else f"http://{url}"
        url = url.rstrip("/")
        url = url if url.endswith("/v1") else f"{url}/v1"
        return cls(base_url=url, timeout=timeout, name="Ollama")

    @classmethod
    def vllm(
        cls, base_url: str, *, api_key: str | None = None, timeout: float | None = 120.0
    ) -> OpenAIProvider:
        """A vLLM server (``vllm serve ... --enable-auto-tool-choice --tool-call-parser
        hermes`` for tool calls); ``api_key`` when it was started with ``--api-key``."""
        return cls(base_url=base_url, api_key=api_key, timeout=timeout, name="vLLM")

    @classmethod
    def compatible(
        cls,
        base_url: str,
        *,
        api_key: str | None = None,
        name: str = "the OpenAI-compatible server",
        timeout: float | None = 120.0,
    ) -> OpenAIProvider:
        """Any other OpenAI-compatible server (llama.cpp's, LM Studio, a proxy)."""
        return cls(base_url=base_url, api_key=api_key, timeout=timeout, name=name)

    def _make_client(self) -> Any:
        import openai

        if self._azure_api_version is not None:
            key = self.api_key or os.environ.get("AZURE_OPENAI_API_KEY")
            if key is None and self._azure_token is None:
                raise ConfigurationError(
                    "No Azure OpenAI credentials: set AZURE_OPENAI_API_KEY, or pass api_key= "
                    "or azure_ad_token_provider= to OpenAIProvider.azure()."
                )
            return openai.AsyncAzureOpenAI(
                azure_endpoint=self.base_url or "",
                api_version=self._azure_api_version,
                api_key=key,
                azure_ad_token_provider=self._azure_token,
                timeout=self.timeout,
                max_retries=0,
                default_headers=self._headers,
            )
        if self.custom_server:
            # Local servers ignore the key, but the SDK insists on having one.
            key = self.api_key or os.environ.get("OPENAI_API_KEY") or "not-needed"
        else:
            key = api_key_from_env(self.api_key, ["OPENAI_API_KEY"], provider="OpenAI")
        return openai.AsyncOpenAI(
            api_key=key,
            base_url=self.base_url,
            timeout=self.timeout,
            # Retries happen in Eventide, with its own policy, for every connector alike.
            max_retries=0,
            default_headers=self._headers,
        )

    def _prepare_client(self, client: Any) -> None:
        # The client's first request works out the platform (OS, architecture) in a worker
        # thread, starting the event loop's thread pool (about 5 ms); done here instead, as
        # the client would. The default headers then hold (and cache) the platform headers.
        if getattr(client, "_platform", False) is None:
            from openai._base_client import get_platform

            client._platform = get_platform()
        _ = client.default_headers
        self.stream_class()

    def stream_class(self) -> Any:
        """The SDK's SSE stream class, yielding each event as JSON data."""
        import openai

        return openai.AsyncStream[object]

    def classify(self, exc: Exception) -> ModelError | None:
        """Errors of the ``openai`` SDK."""
        import openai

        if isinstance(exc, openai.APITimeoutError):
            return timeout_error(self.name, exc)
        if isinstance(exc, openai.APIConnectionError):
            return connection_error(self.name, exc, self.base_url or "https://api.openai.com/v1")
        if isinstance(exc, openai.APIStatusError):
            code: object = getattr(exc, "code", None)
            return status_error(
                exc.status_code,
                str(code) if code else None,
                _openai_message(exc.body, exc.message),
                provider=self.name,
                headers=header_map(exc.response),
            )
        if isinstance(exc, openai.APIError):
            # Raised for an error event inside an SSE stream.
            code = getattr(exc, "code", None)
            return ModelError(exc.message, error_code=str(code or "STREAM_ERROR"))
        return None


def _openai_message(body: object, fallback: str) -> str:
    data = obj(body)
    return string(data.get("message")) or string(obj(data.get("error")).get("message")) or fallback


class AnthropicProvider(Provider):
    """Anthropic's Messages API (key ``ANTHROPIC_API_KEY``, server ``ANTHROPIC_BASE_URL``)."""

    def __init__(
        self,
        *,
        api_key: str | None = None,
        base_url: str | None = None,
        timeout: float | None = 120.0,
    ) -> None:
        super().__init__(name="Anthropic", timeout=timeout)
        self.api_key = api_key
        self.base_url = base_url

    def _make_client(self) -> Any:
        import anthropic

        key = api_key_from_env(self.api_key, ["ANTHROPIC_API_KEY"], provider="Anthropic")
        return anthropic.AsyncAnthropic(
            api_key=key,
            base_url=self.base_url,
            timeout=self.timeout,
            # Retries happen in Eventide, with its own policy, for every connector alike.
            max_retries=0,
        )

    def classify(self, exc: Exception) -> ModelError | None:
        """Errors of the ``anthropic`` SDK."""
        import anthropic

        if isinstance(exc, anthropic.APITimeoutError):
            return timeout_error(self.name, exc)
        if isinstance(exc, anthropic.APIConnectionError):
            return connection_error(self.name, exc, self.base_url or "https://api.anthropic.com")
        if isinstance(exc, anthropic.APIStatusError):
            body = obj(exc.body)
            error = obj(body.get("error")) or body
            error_type = string(error.get("type"))
            failure = status_error(
                exc.status_code,
                error_type,
                string(error.get("message")) or exc.message,
                provider=self.name,
                headers=header_map(exc.response),
            )
            if error_type == "overloaded_error" and exc.status_code < 400:
                # An overload reported inside a stream that had not started yet is transient.
                failure.retryable = True
            return failure
        if isinstance(exc, anthropic.APIError):
            return ModelError(exc.message, error_code="STREAM_ERROR")
        return None


class GeminiProvider(Provider):
    """The Gemini API (key ``GOOGLE_API_KEY``/``GEMINI_API_KEY``) or Vertex AI
    (``vertexai=True`` or ``GOOGLE_GENAI_USE_VERTEXAI``, with ``project``/``location`` or
    ``GOOGLE_CLOUD_PROJECT``/``GOOGLE_CLOUD_LOCATION`` and Application Default Credentials
    or ``credentials``)."""

    def __init__(
        self,
        *,
        api_key: str | None = None,
        vertexai: bool | None = None,
        project: str | None = None,
        location: str | None = None,
        credentials: Any = None,
        base_url: str | None = None,
        api_version: str | None = None,
        timeout: float | None = 120.0,
    ) -> None:
        if vertexai is None:
            vertexai = os.environ.get("GOOGLE_GENAI_USE_VERTEXAI", "").lower() in {"1", "true"}
        super().__init__(name="Vertex AI" if vertexai else "Gemini", timeout=timeout)
        self.api_key = api_key
        self.vertexai = vertexai
        self.project = project
        self.location = location
        self.credentials = credentials
        self.base_url = base_url
        self.api_version = api_version

    def _make_client(self) -> Any:
        from google import genai
        from google.genai import types as genai_types

        http_options = genai_types.HttpOptions(
            base_url=self.base_url,
            # Pinned rather than left to the SDK's default, which moved between releases
            # (v1beta in 2.x, v1 in 3.x): the features mapped here (JSON-schema function
            # parameters, code execution, thinking) are served on v1beta, and on Vertex AI
            # on v1beta1.
            api_version=self.api_version or ("v1beta1" if self.vertexai else "v1beta"),
            timeout=int(self.timeout * 1000) if self.timeout is not None else None,
            # Retries happen in Eventide, with its own policy, for every connector alike.
            retry_options=genai_types.HttpRetryOptions(attempts=1),
        )
        if self.vertexai:
            return genai.Client(
                vertexai=True,
                project=self.project,
                location=self.location,
                credentials=self.credentials,
                http_options=http_options,
            )
        key = api_key_from_env(
            self.api_key, ["GOOGLE_API_KEY", "GEMINI_API_KEY"], provider="Gemini"
        )
        return genai.Client(api_key=key, http_options=http_options)

    async def _close_client(self, client: Any) -> None:
        await client.aio.aclose()

    def classify(self, exc: Exception) -> ModelError | None:
        """Errors of the ``google-genai`` SDK and of its HTTP client."""
        from google.genai import errors

        if isinstance(exc, errors.APIError):
            status: object = exc.status
            return status_error(
                exc.code,
                str(status) if status else None,
                str(exc.message or exc),
                provider=self.name,
                headers=header_map(getattr(exc, "response", None)),
            )
        if isinstance(exc, TimeoutError) or "Timeout" in type(exc).__name__:
            return timeout_error(self.name, exc)
        module = type(exc).__module__
        if module.startswith(("httpx", "aiohttp")) or isinstance(exc, ConnectionError):
            return connection_error(self.name, exc)
        return None
