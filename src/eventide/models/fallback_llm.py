"""``FallbackLlm``: the next model when one fails before answering.

``FallbackLlm(llms=[GeminiLlm(model="gemini-2.5-flash"), OpenAILlm(model="gpt-4.1-mini")])``
calls the first model; when its call fails with a provider error (after that connector's
own retries) before any output reached the caller, the same request goes to the next. A
refusal (SAFETY) is an answer, not a failure: it is not sent elsewhere. The last model's
failure is reported as it is.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncGenerator
from contextlib import aclosing
from typing import Any, cast

from pydantic import model_validator

from eventide.errors import ModelError, UsageError
from eventide.models.base_llm import BaseLlm
from eventide.models.llm_request import LlmRequest
from eventide.models.llm_response import LlmResponse

__all__ = ["FallbackLlm"]

_LOG = logging.getLogger("eventide.models")


class FallbackLlm(BaseLlm):
    """Models tried in order; see the module docstring.

    Attributes:
        llms: the models, first choice first.
    """

    model: str = ""
    llms: list[BaseLlm]

    @model_validator(mode="before")
    @classmethod
    def _model_name(cls, raw: Any) -> Any:
        if not isinstance(raw, dict):
            return raw
        data = cast(dict[str, Any], raw)
        llms: Any = data.get("llms")
        if not llms:
            raise UsageError("FallbackLlm needs at least one model: FallbackLlm(llms=[...]).")
        first: Any = llms[0]
        if not data.get("model") and isinstance(first, BaseLlm):
            return {**data, "model": first.model}
        return data

    async def generate_content_async(
        self, llm_request: LlmRequest, stream: bool = False
    ) -> AsyncGenerator[LlmResponse, None]:
        """Call each model in turn until one answers (see the module docstring)."""
        for number, llm in enumerate(self.llms):
            last = number == len(self.llms) - 1
            failed: ModelError | None = None
            async with aclosing(llm.generate_content_async(llm_request, stream)) as responses:
                answered = False
                async for response in responses:
                    error = response.error
                    if (
                        not last
                        and not answered
                        and isinstance(error, ModelError)
                        and error.error_code != "SAFETY"
                        and response.content is None
                    ):
                        failed = error
                        break
                    answered = True
                    yield response
            if failed is None:
                return
            _LOG.warning(
                "Model %s failed (%s); falling back to %s.",
                llm.model,
                failed.error_code,
                self.llms[number + 1].model,
            )

    def prepare(self) -> None:
        """Prepare every model (see :meth:`BaseLlm.prepare`)."""
        for llm in self.llms:
            llm.prepare()

    async def close(self) -> None:
        """Close every model."""
        for llm in self.llms:
            await llm.close()
