"""Model interface: requests, responses, connectors and the name registry."""

from eventide.models.base_llm import BaseLlm
from eventide.models.llm_request import LlmRequest
from eventide.models.llm_response import LlmResponse
from eventide.models.registry import LLMRegistry

__all__ = ["BaseLlm", "LLMRegistry", "LlmRequest", "LlmResponse"]
