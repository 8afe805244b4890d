"""Which agent answers a new turn."""

from __future__ import annotations

from eventide.agents.base_agent import BaseAgent
from eventide.contexts import InvocationContext

__all__ = ["agent_for_turn"]


def agent_for_turn(root: BaseAgent, ctx: InvocationContext) -> BaseAgent:
    """The agent to run for this turn (see ``Runner._agent_for_turn``)."""
    events = ctx.session.events
    user_content = ctx.user_content
    # A function response from the user goes to the agent that issued the matching call.
    if user_content is not None and user_content.parts:
        response_ids = {
            p.function_response.id
            for p in user_content.parts
            if p.function_response is not None and p.function_response.id
        }
        if response_ids:
            for event in reversed(events):
                for call in event.get_function_calls():
                    if call.id in response_ids:
                        found = root.find_agent(event.author)
                        if found is not None:
                            return found
    # Otherwise the last agent that answered keeps the conversation, if it is transferable.
    for event in reversed(events):
        if event.author == "user":
            continue
        agent = root.find_agent(event.author)
        if agent is None:
            continue
        if agent is root or _can_return_to_root(agent):
            return agent
        break
    return root


def _can_return_to_root(agent: BaseAgent) -> bool:
    """True when every agent from ``agent`` up to the root is an LLM agent that may transfer
    to its parent, so a conversation continued there can find its way back."""
    current: BaseAgent | None = agent
    while current is not None and current.parent_agent is not None:
        if not getattr(current, "allows_transfer_to_parent", False):
            return False
        current = current.parent_agent
    return True
