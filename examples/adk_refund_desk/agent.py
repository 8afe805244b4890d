"""A refund desk written for google-adk, unchanged: a long-running approval tool whose
pending result the model answers at once, and which resumes when the manager's decision
arrives. Run `eventide migrate` on this folder, then `eventide run` it (see README.md)."""

from typing import Any

from google.adk.agents import Agent
from google.adk.tools import LongRunningFunctionTool, ToolContext


def request_refund_approval(
    order_id: str, amount: int, tool_context: ToolContext
) -> dict[str, Any]:
    """Ask a manager to approve a refund; the decision comes later.

    Args:
        order_id: the order, e.g. abc.
        amount: the refund in euros.
    """
    tool_context.state["pending_refund"] = {"order_id": order_id, "amount": amount}
    return {"status": "pending", "ticket": f"refund-{order_id}"}


root_agent = Agent(
    name="refund_desk",
    model="gemini-2.5-flash",
    description="Handles refund requests.",
    instruction="Request refund approval for the order, then tell the customer the outcome.",
    tools=[LongRunningFunctionTool(func=request_refund_approval)],
)
