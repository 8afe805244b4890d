"""The tools of google-adk 2.x's Task API (``LlmAgent(mode=...)``).

A chat agent offers each sub-agent whose ``mode`` is ``"single_turn"`` or ``"task"`` as a
tool named after it, instead of as a transfer target:

- :class:`SingleTurnAgentTool` runs a single-turn agent on the model's request, without
  the user, and returns its answer (as ``AgentTool`` does);
- :class:`TaskAgentTool` *delegates* to a task agent: the LLM flow runs the agent in the
  session on a branch of its own, where it may talk with the user over several turns, until
  it calls ``finish_task``; its output is then the call's result (see
  :mod:`eventide.flows.task_delegation`).

:class:`FinishTaskTool` is the tool a task agent ends its task with: its arguments are the
task's output, checked against the agent's ``output_schema`` (a ``result`` string without
one); a call that does not match is answered with the errors, so the model can try again.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pydantic

from eventide import types
from eventide.protocol import FINISH_TASK, FINISH_TASK_DONE
from eventide.tools.agent_tool import AgentTool
from eventide.tools.base_tool import BaseTool
from eventide.tools.function_tool import strip_titles

if TYPE_CHECKING:
    from eventide.agents.base_agent import BaseAgent
    from eventide.contexts import ToolContext
    from eventide.models.llm_request import LlmRequest

__all__ = [
    "FinishTaskTool",
    "SingleTurnAgentTool",
    "TaskAgentTool",
]

_FINISH_INSTRUCTION = (
    "When, and only when, the whole task is done, call `finish_task` with its outcome, "
    "and with no other text in that reply. Until then use your tools, and ask the user "
    "whatever you need to know to do the task."
)

_DELEGATION_NOTE = (
    "\nThis hands the task to a specialised agent that may talk with the user until it is "
    "done; call it on its own, not together with other tools."
)


class _DefaultTaskOutput(pydantic.BaseModel):
    """The outcome of a task agent without an ``output_schema``."""

    model_config = pydantic.ConfigDict(extra="forbid")

    result: str = pydantic.Field(description="A short account of what was done.")


class FinishTaskTool(BaseTool):
    """``finish_task``: ends a task agent's task with its output (see the module docstring).

    Args:
        agent: the task agent; its ``output_schema`` is the output's shape.
    """

    def __init__(self, agent: BaseAgent) -> None:
        description = "Report that the task is finished, with its outcome."
        super().__init__(name=FINISH_TASK, description=description)
        schema: type[pydantic.BaseModel] = getattr(agent, "output_schema", None) or (
            _DefaultTaskOutput
        )
        self.output_schema = schema

    def get_declaration(self) -> types.FunctionDeclaration:
        schema = self.output_schema.model_json_schema()
        strip_titles(schema)
        return types.FunctionDeclaration(
            name=self.name, description=self.description, parameters_json_schema=schema
        )

    async def process_llm_request(
        self, *, tool_context: ToolContext, llm_request: LlmRequest
    ) -> None:
        await super().process_llm_request(tool_context=tool_context, llm_request=llm_request)
        llm_request.append_instructions([_FINISH_INSTRUCTION])

    async def run_async(self, *, args: dict[str, Any], tool_context: ToolContext) -> Any:
        try:
            self.output_schema.model_validate(args)
        except pydantic.ValidationError as exc:
            return {
                "error": f"`{self.name}` was called with arguments that do not match its "
                f"parameters: {exc.errors(include_url=False)}. Call it again with every "
                "required parameter, of the declared types."
            }
        return FINISH_TASK_DONE


class SingleTurnAgentTool(AgentTool):
    """A ``mode="single_turn"`` sub-agent, offered to its chat parent as a tool: it answers
    the model's request on its own, without the user."""


class TaskAgentTool(AgentTool):
    """A ``mode="task"`` sub-agent, offered to its chat parent as a tool. Calling it
    delegates the task: the LLM flow runs the agent (it is never run as a function)."""

    delegates_task = True

    def get_declaration(self) -> types.FunctionDeclaration:
        declaration = super().get_declaration()
        description = (self.description or "") + _DELEGATION_NOTE
        return declaration.model_copy(update={"description": description.strip()})

    async def run_async(self, *, args: dict[str, Any], tool_context: ToolContext) -> Any:
        raise RuntimeError(
            f"Tool {self.name!r} delegates to a task agent: the LLM flow runs it. It cannot "
            "be called as a function; give the agent to an LlmAgent's sub_agents."
        )
