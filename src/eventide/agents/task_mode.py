"""``LlmAgent(mode=...)``: google-adk 2.x's Task API, on the agent side.

- ``"chat"`` (a sub-agent's default): the agent talks with the user and is reached by
  transfer, as before.
- ``"single_turn"``: the agent does one job from its input, without the user; its chat
  parent offers it to its model as a tool (:class:`~eventide.tools.task_tools.SingleTurnAgentTool`).
- ``"task"``: the agent works on a task with the user, over as many turns as it needs, and
  ends it with ``finish_task`` and its output; its chat parent offers it as a tool that
  delegates the task (:class:`~eventide.tools.task_tools.TaskAgentTool`, run by
  :mod:`eventide.flows.task_delegation`). A task agent at the root ends the turn with it.

Sub-agents offered as tools are not transfer targets.
"""

from __future__ import annotations

import enum
from typing import TYPE_CHECKING, Literal

from eventide.tools.base_tool import BaseTool
from eventide.tools.task_tools import FinishTaskTool, SingleTurnAgentTool, TaskAgentTool

if TYPE_CHECKING:
    from eventide.agents.base_agent import BaseAgent

__all__ = ["AgentMode", "LlmAgentMode", "is_delegated", "mode_tools"]


class AgentMode(enum.StrEnum):
    """How an ``LlmAgent`` is reached and how it ends (the values are google-adk's)."""

    CHAT = "chat"
    TASK = "task"
    SINGLE_TURN = "single_turn"


LlmAgentMode = Literal["chat", "task", "single_turn"] | AgentMode

_DELEGATED = frozenset({AgentMode.TASK, AgentMode.SINGLE_TURN})


def is_delegated(agent: BaseAgent) -> bool:
    """Whether ``agent`` is offered to its parent as a tool (task or single-turn mode)."""
    return getattr(agent, "mode", None) in _DELEGATED


def mode_tools(agent: BaseAgent, cache: dict[int, BaseTool]) -> list[BaseTool]:
    """The tools ``agent``'s mode adds: ``finish_task`` for a task agent, and a tool per
    task or single-turn sub-agent (kept in ``cache``, by the object they stand for)."""
    tools: list[BaseTool] = []
    if getattr(agent, "mode", None) == AgentMode.TASK:
        finish = cache.get(id(agent))
        if finish is None:
            finish = cache[id(agent)] = FinishTaskTool(agent)
        tools.append(finish)
    for sub in agent.sub_agents:
        mode = getattr(sub, "mode", None)
        if mode not in _DELEGATED:
            continue
        tool = cache.get(id(sub))
        if tool is None:
            kind = TaskAgentTool if mode == AgentMode.TASK else SingleTurnAgentTool
            tool = cache[id(sub)] = kind(sub)
        tools.append(tool)
    return tools
