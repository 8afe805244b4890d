"""Test doubles that ship with Eventide, for your own tests.

``ScriptedModel`` plays back canned responses and records every request; ``FunctionModel``
lets a Python function decide each response. Both are real ``BaseLlm``s: they go through the
whole flow (callbacks, tools, streaming) exactly like a provider connector.
"""

from eventide.testing.scripted_model import (
    FunctionModel,
    ScriptedModel,
    ScriptExhaustedError,
    text_response,
    tool_call_response,
)

__all__ = [
    "FunctionModel",
    "ScriptExhaustedError",
    "ScriptedModel",
    "text_response",
    "tool_call_response",
]
