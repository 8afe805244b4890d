"""``BaseLlm``: the interface every model connector implements."""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import AsyncGenerator

from pydantic import BaseModel, ConfigDict

from eventide.models.llm_request import LlmRequest
from eventide.models.llm_response import LlmResponse

__all__ = ["BaseLlm"]


class BaseLlm(BaseModel):
    """A model. Subclass it and implement :meth:`generate_content_async`.

    A subclass may declare pydantic fields or keep plain attributes of its own.

    Attributes:
        model: the model's name, e.g. ``"gemini-2.5-flash"``.
    """

    model_config = ConfigDict(arbitrary_types_allowed=True, extra="allow", defer_build=True)

    model: str

    @classmethod
    def supported_models(cls) -> list[str]:
        """Regular expressions of the model names this connector serves (for the registry)."""
        return []

    @abstractmethod
    def generate_content_async(
        self, llm_request: LlmRequest, stream: bool = False
    ) -> AsyncGenerator[LlmResponse, None]:
        """Call the model.

        Without ``stream``, yield one complete response. With ``stream``, yield
        ``partial=True`` chunks as they arrive, then one complete response aggregating them.
        Report provider failures as a response with ``error_code``/``error_message``.
        """

    def prepare(self) -> None:
        """Do ahead of time the one-time work of the first call (import the provider's SDK,
        make its client), so the first call costs what later ones do.

        Safe to call from another thread while the event loop runs (``eventide run`` calls
        it in the background while the user types); calling it again does nothing. The
        default does nothing: a model without set-up work needs none.
        """

    async def close(self) -> None:
        """Release connections held by the connector."""
