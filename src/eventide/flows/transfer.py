"""Agent transfer: the instruction that offers it and the tool the model calls.

Which agents are offered is decided by the agent layer (``LlmAgent``'s transfer targets,
in the resolved record); this module only words the offer and carries out the call.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from eventide import types
from eventide.protocol import TRANSFER_TO_AGENT
from eventide.tools.base_tool import BaseTool

if TYPE_CHECKING:
    from eventide.contexts import ToolContext
    from eventide.flows.resolved_agent import ResolvedAgent

__all__ = ["TransferToAgentTool", "transfer_instruction"]


def transfer_instruction(agent: ResolvedAgent) -> str:
    """The instruction paragraph that tells the model whom it can hand over to."""
    lines = [
        f"You are the agent named `{agent.name}`."
        + (f" Your role: {agent.description}" if agent.description else ""),
        "",
        "You can hand the conversation to one of these agents:",
    ]
    for target in agent.transfer_targets:
        lines.append(f"- `{target.name}`: {target.description or '(no description)'}")
    lines += [
        "",
        "Answer yourself when your role covers the request. When another agent's role fits "
        f"it better, call `{TRANSFER_TO_AGENT}` with that agent's name and write nothing "
        "else in that turn.",
    ]
    if agent.parent_name is not None:
        lines.append(
            f"When neither you nor the agents above fit the request, transfer back to your "
            f"parent agent `{agent.parent_name}`."
        )
    return "\n".join(lines)


class TransferToAgentTool(BaseTool):
    """Hands the conversation to another agent (offered to agents with transfer targets)."""

    def __init__(self, target_names: list[str]) -> None:
        super().__init__(
            name=TRANSFER_TO_AGENT,
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
        # The response the model sees is {"result": None}, as in google-adk.
        return None
