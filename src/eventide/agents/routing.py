"""Which agent answers a new turn: the routing rule of the Runner.

When a user message starts an invocation, the Runner picks the agent to run, in this order:

1. **A function response from the user** (the result of a long-running tool, the answer to a
   confirmation or credential request) goes to the agent that made the matching call, found
   by the call's id in the session's events.
2. **A task waiting for the user** (google-adk 2.x's Task API): when the latest agent event
   is a delegated task agent's question, the agent that delegated the task answers; its
   flow continues the task (see :mod:`eventide.flows.task_delegation`).
3. **Sticky routing.** Otherwise the agent that answered last (the author of the latest event
   not written by the user, a resumable invocation's markers aside) keeps the conversation,
   *if it can find its way back*: it is the root itself, or every agent on the path from it
   up to the root is an ``LlmAgent`` that may transfer to its parent
   (``disallow_transfer_to_parent`` is False and the parent is an ``LlmAgent``). So after
   triage hands the user to ``billing``, the user's next message goes straight to
   ``billing``, which can still transfer back to triage or to a peer.
   An author that cannot find its way back (a step of a workflow, a branch of a fan-out, an
   agent with ``disallow_transfer_to_parent``) does not keep it: the search goes on to
   older events, so the transferable agent that handed the user to it (its events come
   before) answers, as in google-adk 2.13: after ``billing`` transferred to a ``refunds``
   agent that may not transfer back, the next message goes to ``billing``. An author no
   longer in the tree is skipped the same way. The target of a transfer that has not
   answered since (it failed before its first event) answers if it can find its way back.
4. **The root agent** answers in every other case: nothing answered yet, or no agent on the
   way back qualifies (the root's own events qualify). Events of turns taken back by a
   rewind, markers and content-less error events are not considered.
"""

from __future__ import annotations

from eventide.agents.base_agent import BaseAgent
from eventide.agents.llm_agent import LlmAgent
from eventide.contexts import InvocationContext
from eventide.events import Event
from eventide.flows.task_delegation import delegating_agent
from eventide.protocol import USER_AUTHOR
from eventide.runtime.markers import invocation_mark

__all__ = ["agent_for_turn"]


def agent_for_turn(root: BaseAgent, ctx: InvocationContext) -> BaseAgent:
    """The agent that answers the turn ``ctx`` starts, by the rule in the module docstring.

    Args:
        root: the Runner's root agent.
        ctx: the invocation's context; its session already holds the user's new event.
    """
    if not root.sub_agents:
        return root  # the only agent answers every turn (what the rules below come to)
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
    # A task agent asked the user something: the agent that delegated the task continues it.
    delegating = delegating_agent(events)
    if delegating is not None:
        found = root.find_agent(delegating)
        if found is not None:
            return found
    # Otherwise the last agent that answered keeps the conversation, if it is transferable.
    # Turns a rewind took back do not count (see eventide.history.rewind).
    rewound: set[int] = set()
    for index in range(len(events) - 1, -1, -1):
        event = events[index]
        if event.author == USER_AUTHOR:
            if event.actions.rewind_before_invocation_id is not None and not rewound:
                from eventide.history.model_view import rewound_positions

                rewound = rewound_positions(events)
            continue
        if index in rewound or _is_marker(event) or _is_failure(event):
            continue
        target = _transfer_target(root, event)
        if target is not None:
            return target
        agent = root.find_agent(event.author)
        if agent is None:
            continue
        if agent is root or _can_return_to_root(agent):
            return agent
    return root


def _is_failure(event: Event) -> bool:
    """An error event without content (a failed node or call): not an answer."""
    return bool(event.error_code) and not (event.content and event.content.parts)


def _transfer_target(root: BaseAgent, event: Event) -> BaseAgent | None:
    """The agent ``event`` transferred to, if it is one of its author's transfer targets and
    can find its way back to the root (a target that answered since was found first)."""
    name = event.actions.transfer_to_agent
    if not name:
        return None
    source = root.find_agent(event.author)
    if not isinstance(source, LlmAgent):
        return None
    target = next((a for a in source.transfer_targets() if a.name == name), None)
    if target is not None and (target is root or _can_return_to_root(target)):
        return target
    return None


def _is_marker(event: Event) -> bool:
    """A resumable invocation's bookkeeping (an agent's state or end marker, the
    invocation's ``finished``), not an answer: a workflow's or a transferring agent's end
    marker must not take the conversation back from the agent that answered."""
    if event.content is not None:
        return False
    actions = event.actions
    return bool(actions.end_of_agent or actions.agent_state is not None) or (
        invocation_mark(event) is not None
    )


def _can_return_to_root(agent: BaseAgent) -> bool:
    """True when every agent from ``agent`` up to the root is an LLM agent that may transfer
    to its parent, so a conversation continued there can find its way back."""
    current = agent
    while current.parent_agent is not None:
        if not (isinstance(current, LlmAgent) and current.allows_transfer_to_parent):
            return False
        current = current.parent_agent
    return True
