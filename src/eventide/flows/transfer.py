"""Agent transfer: which agents an LLM agent may hand the conversation to, and the tool."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from eventide import types
from eventide.tools.base_tool import BaseTool

if TYPE_CHECKING:
    from eventide.agents.base_agent import BaseAgent
    from eventide.agents.llm_agent import LlmAgent
    from eventide.contexts import ToolContext

__all__ = ["TRANSFER_TOOL_NAME", "TransferToAgentTool", "transfer_instruction", "transfer_targets"]

TRANSFER_TOOL_NAME = "transfer_to_agent"


def transfer_targets(agent: LlmAgent) -> list[BaseAgent]:
    """The agents ``agent`` may transfer to: its sub-agents; its parent unless
    ``disallow_transfer_to_parent``; its siblings unless ``disallow_transfer_to_peers``.

    Transfers up and sideways are only offered under an ``LlmAgent`` parent: a workflow
    parent (sequential, parallel, loop) decides the order itself.
    """
    from eventide.agents.llm_agent import LlmAgent

    targets: list[BaseAgent] = list(agent.sub_agents)
    parent = agent.parent_agent
    if isinstance(parent, LlmAgent):
        if not agent.disallow_transfer_to_parent:
            targets.append(parent)
        if not agent.disallow_transfer_to_peers:
            targets.extend(peer for peer in parent.sub_agents if peer is not agent)
    return targets


def transfer_instruction(agent: LlmAgent, targets: list[BaseAgent]) -> str:
    """The instruction paragraph that tells the model whom it can hand over to."""
    lines = [
        f"You are the agent named `{agent.name}`."
        + (f" Your role: {agent.description}" if agent.description else ""),
        "",
        "You can hand the conversation to one of these agents:",
    ]
    for target in targets:
        lines.append(f"- `{target.name}`: {target.description or '(no description)'}")
    lines += [
        "",
        "Answer yourself when your role covers the request. When another agent's role fits "
        f"it better, call `{TRANSFER_TOOL_NAME}` with that agent's name and write nothing "
        "else in that turn.",
    ]
    parent = agent.parent_agent
    if parent is not None and parent in targets:
        lines.append(
            f"When neither you nor the agents above fit the request, transfer back to your "
            f"parent agent `{parent.name}`."
        )
    return "\n".join(lines)


class TransferToAgentTool(BaseTool):
    """Hands the conversation to another agent (offered to agents with transfer targets)."""

    def __init__(self, target_names: list[str]) -> None:
        super().__init__(
            name=TRANSFER_TOOL_NAME,
            description="Transfer the conversation to another agent, named by `agent_name`.",
        )
        self.target_names = target_names

    def get_declaration(self) -> types.FunctionDeclaration:
        return types.FunctionDeclaration(
            name=self.name,
            description=self.description,
            parameters_json_schema={
                "type": "object",
                "properties": {
                    "agent_name": {
                        "type": "string",
                        "enum": list(self.target_names),
                        "description": "The agent to transfer to.",
                    }
                },
                "required": ["agent_name"],
            },
        )

    async def run_async(self, *, args: dict[str, Any], tool_context: ToolContext) -> Any:
        name = args.get("agent_name")
        if name not in self.target_names:
            root = tool_context.invocation_context.agent.root_agent
            exists = isinstance(name, str) and root.find_agent(name) is not None
            why = "you may not hand over to it" if exists else "there is no agent by that name"
            return {
                "error": f"Cannot transfer to {name!r}: {why}. The agents you may transfer "
                f"to are: {', '.join(self.target_names)}. Pick one of those or answer "
                "yourself."
            }
        tool_context.actions.transfer_to_agent = name
        return {"result": f"Transferred to {name}."}
