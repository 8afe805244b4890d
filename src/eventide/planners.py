"""Planners for ``LlmAgent(planner=...)``: how the model plans before it answers.

- :class:`BuiltInPlanner` uses the model's own thinking: its ``thinking_config`` (a
  ``types.ThinkingConfig`` or google-genai's) goes into every request of the agent.
- :class:`PlanReActPlanner` asks any model to write a plan, reason between tool calls and
  mark its final answer; the planning and reasoning come back as thought parts, and the
  final answer as the visible text.
"""

from __future__ import annotations

from typing import Any

from eventide import types
from eventide.models.llm_request import LlmRequest

__all__ = ["BasePlanner", "BuiltInPlanner", "PlanReActPlanner"]


class BasePlanner:
    """Base of planners: each may change the agent's requests and the model's parts."""

    def process_llm_request(self, llm_request: LlmRequest) -> None:
        """Change ``llm_request`` before it is sent (default: nothing)."""

    def process_response_parts(self, parts: list[types.Part]) -> list[types.Part]:
        """The parts of a complete model response as the agent keeps them (default: as is)."""
        return parts


class BuiltInPlanner(BasePlanner):
    """The model's built-in thinking, with ``thinking_config`` set on every request.

    Args:
        thinking_config: ``types.ThinkingConfig(thinking_budget=..., include_thoughts=...)``
            (google-genai's ``ThinkingConfig`` is accepted too).
    """

    def __init__(self, *, thinking_config: Any) -> None:
        self.thinking_config = types.ThinkingConfig.model_validate(thinking_config)

    def process_llm_request(self, llm_request: LlmRequest) -> None:
        budget = self.thinking_config.thinking_budget
        if budget is None:
            # Thinking on, with the model choosing how much (Gemini's -1).
            budget = -1 if self.thinking_config.include_thoughts is not False else 0
        llm_request.config.thinking_budget = budget


PLANNING = "/*PLANNING*/"
REPLANNING = "/*REPLANNING*/"
REASONING = "/*REASONING*/"
ACTION = "/*ACTION*/"
FINAL_ANSWER = "/*FINAL_ANSWER*/"

_INSTRUCTION = f"""\
Work in steps, and label each step's text with its tag:
- {PLANNING} first: a numbered plan that answers the request, each step naming the tools it \
uses. Only plan with the tools you have.
- {ACTION} before you call tools to carry out a step.
- {REASONING} after tool results: what you learned and what to do next.
- {REPLANNING} if the plan fails: a revised numbered plan, then carry it out.
- {FINAL_ANSWER} last: the answer itself, precise and in the format the user asked for. If \
the tools cannot answer the request, say why and what you need from the user.
Ask the user when the request is unclear rather than guess."""


class PlanReActPlanner(BasePlanner):
    """Plan, act, reason, answer: structured planning for models without built-in thinking.

    The instruction asks the model to tag its text; in the response, planning, reasoning
    and action text becomes ``thought=True`` parts (kept in the log, hidden from the final
    answer), the text after ``/*FINAL_ANSWER*/`` stays visible, and text after the first
    function calls is dropped (the model must not answer before it sees their results).
    """

    def process_llm_request(self, llm_request: LlmRequest) -> None:
        llm_request.append_instructions([_INSTRUCTION])

    def process_response_parts(self, parts: list[types.Part]) -> list[types.Part]:
        kept: list[types.Part] = []
        seen_call = False
        for part in parts:
            if part.function_call is not None:
                seen_call = True
                kept.append(part)
                continue
            if seen_call:
                if part.text is None or part.thought:
                    kept.append(part)
                continue
            text = part.text
            if text is None or part.thought:
                kept.append(part)
                continue
            before, marker, after = text.partition(FINAL_ANSWER)
            if marker:
                if before.strip():
                    kept.append(types.Part(text=_untagged(before), thought=True))
                kept.append(types.Part(text=after))
            elif text.lstrip().startswith(_TAGS):
                kept.append(types.Part(text=_untagged(text), thought=True))
            else:
                kept.append(part)
        return kept


_TAGS = (PLANNING, REPLANNING, REASONING, ACTION)


def _untagged(text: str) -> str:
    """``text`` without its leading step tag."""
    stripped = text.lstrip()
    for tag in _TAGS:
        if stripped.startswith(tag):
            return stripped[len(tag) :]
    return text
