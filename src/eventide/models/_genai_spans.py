"""The OpenTelemetry GenAI attributes of a model call's span, shared by ``TracingPlugin``
and ``TracingLlm`` so both record a call the same way (``chat {model}``, request model,
temperature and max tokens; usage, response model, finish reason and error)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from eventide.models.llm_request import LlmRequest
    from eventide.models.llm_response import LlmResponse

__all__ = ["mark_failed", "record_model_response", "request_attributes"]


def request_attributes(llm_request: LlmRequest, model: str) -> dict[str, Any]:
    """The attributes a model call's span starts with (the agent's own go on top)."""
    config = llm_request.config
    attributes: dict[str, Any] = {
        "gen_ai.operation.name": "chat",
        "gen_ai.request.model": model,
    }
    if config.temperature is not None:
        attributes["gen_ai.request.temperature"] = config.temperature
    if config.max_output_tokens is not None:
        attributes["gen_ai.request.max_tokens"] = config.max_output_tokens
    return attributes


def record_model_response(span: Any, llm_response: LlmResponse) -> None:
    """Put a complete response's usage, model, finish reason and error on ``span``."""
    usage = llm_response.usage_metadata
    if usage is not None:
        if usage.prompt_token_count is not None:
            span.set_attribute("gen_ai.usage.input_tokens", usage.prompt_token_count)
        if usage.candidates_token_count is not None:
            span.set_attribute("gen_ai.usage.output_tokens", usage.candidates_token_count)
    if llm_response.model_version:
        span.set_attribute("gen_ai.response.model", llm_response.model_version)
    if llm_response.finish_reason:
        span.set_attribute("gen_ai.response.finish_reasons", [llm_response.finish_reason])
    if llm_response.error_code:
        mark_failed(span, "model_error", llm_response.error_message or llm_response.error_code)
        span.set_attribute("eventide.error_code", llm_response.error_code)


def mark_failed(span: Any, error_type: str, message: str) -> None:
    """Mark ``span`` as failed with an ``error.type`` and a status message."""
    from opentelemetry.trace import Status, StatusCode

    span.set_attribute("error.type", error_type)
    span.set_status(Status(StatusCode.ERROR, message))
