"""Model interface: requests, responses, connectors' providers, wrappers and the registry."""

from eventide.models.base_llm import BaseLlm
from eventide.models.fallback_llm import FallbackLlm
from eventide.models.llm_request import LlmRequest
from eventide.models.llm_response import LlmResponse
from eventide.models.providers import AnthropicProvider, GeminiProvider, OpenAIProvider, Provider
from eventide.models.registry import LLMRegistry
from eventide.models.retrying_llm import RetryingLlm, RetryPolicy
from eventide.models.tracing_llm import TracingLlm

__all__ = [
    "AnthropicProvider",
    "BaseLlm",
    "FallbackLlm",
    "GeminiProvider",
    "LLMRegistry",
    "LlmRequest",
    "LlmResponse",
    "OpenAIProvider",
    "Provider",
    "RetryPolicy",
    "RetryingLlm",
    "TracingLlm",
]
