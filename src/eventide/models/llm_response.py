"""``LlmResponse``: one response (or streamed chunk) from a model."""

from __future__ import annotations

from typing import Any

from eventide import types
from eventide._fastpath import hidden_value, set_hidden
from eventide._model import EventideModel
from eventide.errors import ModelBehaviorError, ModelError

__all__ = ["LlmResponse"]


class LlmResponse(EventideModel):
    """What a model connector yields.

    When streaming, connectors yield ``partial=True`` chunks and then one complete response
    (``partial`` unset) aggregating them. A provider failure is reported through
    ``error_code`` and ``error_message`` rather than an exception, so it becomes an event;
    :attr:`error` holds the exception behind it (not serialized), which says whether the
    call may be retried.
    """

    content: types.Content | None = None
    partial: bool | None = None
    turn_complete: bool | None = None
    finish_reason: str | None = None
    error_code: str | None = None
    error_message: str | None = None
    interrupted: bool | None = None
    usage_metadata: types.UsageMetadata | None = None
    grounding_metadata: types.GroundingMetadata | None = None
    model_version: str | None = None
    custom_metadata: dict[str, Any] | None = None

    @classmethod
    def from_error(cls, error: ModelError | ModelBehaviorError) -> LlmResponse:
        """The error response for ``error`` (code and message copied, ``error`` kept)."""
        response = cls(turn_complete=True)
        response.set_error(error)
        return response

    def set_error(self, error: ModelError | ModelBehaviorError) -> None:
        """Report ``error`` on this response (its content, if any, stays)."""
        if isinstance(error, ModelError):
            self.error_code = error.error_code or "MODEL_ERROR"
        else:
            self.error_code = "MALFORMED_FUNCTION_CALL"
        self.error_message = str(error)
        set_hidden(self, _ERROR, error)  # not a private attribute: see set_hidden

    @property
    def error(self) -> ModelError | ModelBehaviorError | None:
        """The failure behind ``error_code``, when a connector reported one."""
        error: ModelError | ModelBehaviorError | None = hidden_value(self, _ERROR)
        return error


_ERROR = "_error"
