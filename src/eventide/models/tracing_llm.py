"""``TracingLlm``: an OpenTelemetry span around each call of any model.

``TracingLlm(llm=OpenAILlm(model="gpt-4.1-mini"))`` records every call as a ``chat {model}``
span with the attributes :class:`~eventide.plugins.tracing_plugin.TracingPlugin` gives its
model spans (request model, temperature and max tokens; token usage, response model,
finish reason; an error status with ``eventide.error_code`` when the call failed), plus
``eventide.stream`` and a ``first_chunk`` event when streaming (the time to the first
token). It traces the model wherever it is called, also outside a Runner (an evaluation, a
tool that calls a model, a script); under a Runner with ``TracingPlugin`` use one or the
other, or both on purpose (this span then sits beside the plugin's, under whatever span is
current where the model is called).

The span's parent is the current OpenTelemetry context at the call. A call that raises is
recorded with the exception; a call whose caller stops reading before the complete
response (a cancelled turn) ends as ``error.type=incomplete``. ``opentelemetry-api`` is
imported on the first call (the ``tracing`` extra).
"""

from __future__ import annotations

import json
from collections.abc import AsyncGenerator
from contextlib import aclosing
from typing import Any, cast

from pydantic import PrivateAttr, model_validator

from eventide.models._genai_spans import mark_failed, record_model_response, request_attributes
from eventide.models.base_llm import BaseLlm
from eventide.models.llm_request import LlmRequest
from eventide.models.llm_response import LlmResponse

__all__ = ["TracingLlm"]

_INSTRUMENTATION = "eventide"


class TracingLlm(BaseLlm):
    """Any model, with each call recorded as a span (see the module docstring).

    Attributes:
        llm: the model called.
        tracer_provider: where spans go; the global provider by default (set up by
            :func:`~eventide.plugins.tracing_plugin.configure_tracing` or your own
            OpenTelemetry setup).
        capture_content: also record the request's messages, system instruction and the
            answer (``gen_ai.input.messages``, ``gen_ai.system_instructions``,
            ``gen_ai.output.messages`` as JSON); off by default, as they may hold personal
            data.
    """

    model: str = ""
    llm: BaseLlm
    tracer_provider: Any | None = None
    capture_content: bool = False
    _tracer: Any = PrivateAttr(default=None)

    @model_validator(mode="before")
    @classmethod
    def _model_name(cls, raw: Any) -> Any:
        if not isinstance(raw, dict):
            return raw
        data = cast(dict[str, Any], raw)
        if not data.get("model") and "llm" in data:
            inner: Any = data["llm"]
            if isinstance(inner, BaseLlm):
                return {**data, "model": inner.model}
        return data

    async def generate_content_async(
        self, llm_request: LlmRequest, stream: bool = False
    ) -> AsyncGenerator[LlmResponse, None]:
        """Call :attr:`llm` inside a ``chat {model}`` span."""
        model = llm_request.model or self.llm.model
        attributes = request_attributes(llm_request, model)
        attributes["eventide.stream"] = stream
        if self.capture_content:
            attributes.update(_request_content(llm_request))
        span = self._get_tracer().start_span(f"chat {model}", attributes=attributes)
        finished = False
        try:
            async with aclosing(self.llm.generate_content_async(llm_request, stream)) as calls:
                first = True
                async for response in calls:
                    if response.partial:
                        if first:
                            span.add_event("first_chunk")
                            first = False
                    else:
                        record_model_response(span, response)
                        if self.capture_content and response.content is not None:
                            span.set_attribute(
                                "gen_ai.output.messages", _json([_message(response.content)])
                            )
                        finished = True
                    yield response
        except Exception as exc:
            span.record_exception(exc)
            mark_failed(span, type(exc).__qualname__, str(exc))
            finished = True
            raise
        finally:
            if not finished:
                mark_failed(span, "incomplete", "the caller stopped before the complete response")
            span.end()

    def _get_tracer(self) -> Any:
        # Read through __pydantic_private__: the attribute syntax goes through
        # BaseModel.__getattr__, which costs several microseconds a read.
        private = self.__pydantic_private__
        assert private is not None
        tracer: Any = private["_tracer"]
        if tracer is None:
            from opentelemetry import trace

            tracer = private["_tracer"] = trace.get_tracer(
                _INSTRUMENTATION, tracer_provider=self.tracer_provider
            )
        return tracer

    def prepare(self) -> None:
        """Prepare the wrapped model (see :meth:`BaseLlm.prepare`) and make the tracer."""
        self._get_tracer()
        self.llm.prepare()

    async def close(self) -> None:
        """Close the wrapped model."""
        await self.llm.close()


def _request_content(llm_request: LlmRequest) -> dict[str, str]:
    content = {
        "gen_ai.input.messages": _json([_message(c) for c in llm_request.contents]),
    }
    instruction = llm_request.config.system_instruction
    if instruction:
        content["gen_ai.system_instructions"] = instruction
    return content


def _message(content: Any) -> Any:
    return content.model_dump(mode="json", exclude_none=True)


def _json(value: Any) -> str:
    return json.dumps(value, default=str, ensure_ascii=False)
