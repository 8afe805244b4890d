"""``BaseLlm``: the interface every model connector implements."""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import AsyncGenerator

from pydantic import BaseModel, ConfigDict

from eventide.models.llm_request import LlmRequest
from eventide.models.llm_response import LlmResponse

__all__ = ["BaseLlm", "build_turn_schemas"]


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
        default builds the validation schemas of the records a turn makes (requests,
        responses, contents, events), which pydantic otherwise builds on first use, about
        15 ms into the first turn; a connector adds its own set-up and calls this too.
        """
        build_turn_schemas()

    async def close(self) -> None:
        """Release connections held by the connector."""


def build_turn_schemas() -> None:
    """Build now the pydantic schemas every turn needs (they are deferred so that
    ``import eventide`` stays fast). Idempotent and safe in another thread: a model whose
    schema is built already is skipped."""
    from eventide import types
    from eventide.events import Event, EventActions

    for record in (
        LlmRequest,
        LlmResponse,
        types.Content,
        types.Part,
        types.UsageMetadata,
        Event,
        EventActions,
    ):
        if not record.__pydantic_complete__:
            record.model_rebuild()
