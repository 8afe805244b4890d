"""``RunConfig``: per-invocation settings."""

from __future__ import annotations

import logging
import sys
from enum import StrEnum
from typing import Any

from pydantic import Field, field_validator

from eventide._model import EventideModel
from eventide.types import FunctionDeclaration

__all__ = ["RunConfig", "StreamingMode"]

_log = logging.getLogger("eventide.run_config")


class StreamingMode(StrEnum):
    """How model output reaches the caller.

    NONE: one event per model response. SSE: partial events as text arrives, then the
    complete one. BIDI: live bidirectional streaming (not supported yet).
    """

    NONE = "none"
    SSE = "sse"
    BIDI = "bidi"


class RunConfig(EventideModel):
    """Settings of one invocation.

    Attributes:
        streaming_mode: see :class:`StreamingMode`.
        max_llm_calls: the most model calls one invocation may make; past it the invocation
            stops with ``LlmCallsLimitExceededError``. Zero or less means no limit.
        custom_metadata: free-form data for plugins and callbacks; it is also added to the
            ``custom_metadata`` of every event of the invocation (an event's own entries
            win on a clash), as google-adk does.
        client_tools: tools the caller declares for this invocation and runs itself (a
            front end's tools, given with an AG-UI or OpenAI-style request). Every LLM agent
            of the invocation offers them to its model after its own tools (an agent's own
            tool of the same name wins). A call to one is long-running: the invocation ends
            there, and the caller answers it with a ``FunctionResponse`` of the call's id in
            its next message (see :class:`eventide.tools.client_tool.ClientTool`).
    """

    streaming_mode: StreamingMode = StreamingMode.NONE
    max_llm_calls: int = 500
    custom_metadata: dict[str, Any] = Field(default_factory=dict)
    client_tools: list[FunctionDeclaration] = Field(default_factory=list)

    @field_validator("max_llm_calls")
    @classmethod
    def validate_max_llm_calls(cls, value: int) -> int:
        """google-adk's check of ``max_llm_calls`` (run on a value given, not the default):
        ``sys.maxsize`` or more is refused; zero or less (no limit) is logged as a warning.

        Raises:
            ValueError: ``value`` is ``sys.maxsize`` or more.
        """
        if value >= sys.maxsize:
            raise ValueError(
                f"max_llm_calls should be less than {sys.maxsize}. Pass 0 (or less) for no "
                "limit, or a number of model calls."
            )
        if value <= 0:
            _log.warning(
                "max_llm_calls is %d: no limit on the model calls of an invocation, so an "
                "agent and its model could go on for ever; set a limit unless that is meant.",
                value,
            )
        return value
