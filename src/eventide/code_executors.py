"""Code executors for ``LlmAgent(code_executor=...)``.

:class:`BuiltInCodeExecutor` switches on Gemini's own code execution: the model writes and
runs Python on Google's side, and the event's parts carry the ``executable_code`` and its
``code_execution_result``. Other providers refuse it when the agent is built.
"""

from __future__ import annotations

from eventide import types
from eventide.models.llm_request import LlmRequest

__all__ = ["BaseCodeExecutor", "BuiltInCodeExecutor"]


class BaseCodeExecutor:
    """Base of code executors: each changes the agent's model requests."""

    #: Whether the executor is a Gemini built-in tool (refused by other providers).
    needs_gemini: bool = False

    def process_llm_request(self, llm_request: LlmRequest) -> None:
        """Change ``llm_request`` before it is sent (default: nothing)."""


class BuiltInCodeExecutor(BaseCodeExecutor):
    """Gemini's built-in code execution (``types.Tool(code_execution={})``)."""

    needs_gemini = True

    def process_llm_request(self, llm_request: LlmRequest) -> None:
        tools = llm_request.config.tools if llm_request.config.tools is not None else []
        tools.append(types.Tool(code_execution={}))
        llm_request.config.tools = tools
