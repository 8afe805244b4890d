"""``RunConfig``: per-invocation settings."""

from __future__ import annotations

from enum import StrEnum
from typing import Any

from pydantic import Field

from eventide._model import EventideModel
from eventide.types import FunctionDeclaration

__all__ = ["RunConfig", "StreamingMode"]


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
