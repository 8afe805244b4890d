"""A draft-and-review pipeline written for google-adk, unchanged: a writer drafts, then a
reviewer loops until it approves (its approval tool escalates; the reviewer still gives its
verdict, stored under output_key). Run `eventide migrate` on this folder, then `eventide run`
it (see README.md)."""

from typing import Any

from google.adk.agents import LlmAgent, LoopAgent, SequentialAgent
from google.adk.tools.tool_context import ToolContext


def write_draft(topic: str, tool_context: ToolContext) -> dict[str, Any]:
    """Write a short draft about a topic.

    Args:
        topic: what the draft is about.
    """
    draft = f"A short note about {topic}."
    tool_context.state["draft"] = draft
    return {"draft": draft}


def approve_draft(reason: str, tool_context: ToolContext) -> dict[str, Any]:
    """Approve the draft and stop reviewing.

    Args:
        reason: why the draft is good enough.
    """
    tool_context.state["approved"] = True
    tool_context.actions.escalate = True
    return {"approved": True, "reason": reason}


writer = LlmAgent(
    name="writer",
    model="gemini-2.5-flash",
    instruction="Write a draft about the user's topic with write_draft.",
    tools=[write_draft],
)
reviewer = LlmAgent(
    name="reviewer",
    model="gemini-2.5-flash",
    instruction="Review the draft in {draft?}; approve the draft when it is fine.",
    tools=[approve_draft],
    output_key="verdict",
)
root_agent = SequentialAgent(
    name="review_pipeline",
    sub_agents=[writer, LoopAgent(name="review_loop", sub_agents=[reviewer], max_iterations=3)],
)
