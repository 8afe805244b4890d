"""Checks of the ``LlmAgent`` options that only some providers support."""

from __future__ import annotations

from typing import TYPE_CHECKING

from eventide.errors import UsageError

if TYPE_CHECKING:
    from eventide.agents.llm_agent import LlmAgent

__all__ = ["check_gemini_features"]


def check_gemini_features(agent: LlmAgent) -> None:
    """Refuse Gemini's built-in tools and code execution on an agent whose model is named
    and is not a Gemini model, when the agent is built rather than at its first model call.

    An agent without a model of its own inherits one at run time; the connectors of the
    other providers refuse the built-in tools there.
    """
    from eventide.models.base_llm import BaseLlm
    from eventide.tools.gemini_tools import GeminiBuiltInTool, is_gemini_model_name

    model = agent.model
    name = model.model if isinstance(model, BaseLlm) else model
    if not name or is_gemini_model_name(name):
        return
    wanted = [t.name for t in agent.tools if isinstance(t, GeminiBuiltInTool)]
    executor = agent.code_executor
    if executor is not None and executor.needs_gemini:
        wanted.append(type(executor).__name__)
    if wanted:
        raise UsageError(
            f"Agent {agent.name!r}: {', '.join(wanted)} "
            f"{'is a Gemini built-in tool' if len(wanted) == 1 else 'are Gemini built-in tools'}"
            f", and its model {name!r} is not a Gemini model. Use a Gemini model "
            "(e.g. model='gemini-2.5-flash') for this agent, or give it a FunctionTool that "
            "does the same job."
        )
