"""The A2A agent card of an Eventide agent, generated from the agent tree.

- name and description: the root agent's (``"An Eventide agent"`` when it has none);
- skills: one per agent of the tree (its description, tagged ``llm`` for an LLM agent or
  with its class name), one per tool an LLM agent can call (its name and description; a
  toolset is one skill, since listing its tools may mean connecting to a server), and each
  sub-agent's skills tagged ``sub_agent:<name>``, as google-adk's card builder does;
- capabilities it really has: streaming (``message/stream``, ``tasks/resubscribe``); no push
  notifications and no extended card, which are not built;
- one JSON-RPC endpoint, declared for protocol versions 1.0 and 0.3 (so the card also has
  0.3's top-level ``url``, ``preferredTransport`` and ``protocolVersion`` for 0.3 clients);
- with a bearer token, an HTTP bearer security scheme required on every call.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

from a2a.types import a2a_pb2

from eventide.agents.base_agent import BaseAgent
from eventide.agents.llm_agent import LlmAgent
from eventide.tools.base_tool import BaseTool
from eventide.tools.base_toolset import BaseToolset

__all__ = ["BEARER_SCHEME", "build_agent_card"]

BEARER_SCHEME = "bearer"
_TEXT = ["text/plain"]


def _tool_skill(owner: str, tool: Any) -> a2a_pb2.AgentSkill | None:
    if isinstance(tool, BaseTool):
        name, description = tool.name, tool.description
    elif isinstance(tool, BaseToolset):
        name = type(tool).__name__
        description = f"The tools of {name}."
    elif callable(tool):
        function: Callable[..., Any] = tool
        name = getattr(function, "__name__", type(function).__name__)
        description = inspect.getdoc(function) or ""
        description = description.split("\n\n", 1)[0]
    else:
        return None
    return a2a_pb2.AgentSkill(
        id=f"{owner}-{name}",
        name=name,
        description=description or f"The {name} tool.",
        tags=["tool"],
    )


def _skills(agent: BaseAgent) -> list[a2a_pb2.AgentSkill]:
    own = a2a_pb2.AgentSkill(
        id=agent.name,
        name=agent.name,
        description=agent.description or f"The {agent.name} agent.",
        tags=["llm"] if isinstance(agent, LlmAgent) else [type(agent).__name__],
    )
    skills = [own]
    if isinstance(agent, LlmAgent):
        for tool in agent.tools:
            skill = _tool_skill(agent.name, tool)
            if skill is not None:
                skills.append(skill)
    for sub in agent.sub_agents:
        # Ids stay as they are (agent names are unique in a tree); tags say the path.
        for skill in _skills(sub):
            skill.tags.insert(0, f"sub_agent:{sub.name}")
            skills.append(skill)
    return skills


def build_agent_card(
    agent: BaseAgent,
    *,
    url: str,
    version: str = "0.0.1",
    streaming: bool = True,
    bearer_auth: bool = False,
    description: str | None = None,
) -> a2a_pb2.AgentCard:
    """The agent card of ``agent`` served at ``url`` (see the module docstring).

    Args:
        agent: the root agent.
        url: the JSON-RPC endpoint's URL.
        version: the agent's version.
        streaming: whether the server answers ``message/stream``.
        bearer_auth: whether calls need ``Authorization: Bearer <token>``.
        description: the card's description (default: the agent's).
    """
    card = a2a_pb2.AgentCard(
        name=agent.name,
        description=description or agent.description or "An Eventide agent.",
        version=version,
        supported_interfaces=[
            a2a_pb2.AgentInterface(url=url, protocol_binding="JSONRPC", protocol_version=protocol)
            for protocol in ("1.0", "0.3")
        ],
        capabilities=a2a_pb2.AgentCapabilities(
            streaming=streaming, push_notifications=False, extended_agent_card=False
        ),
        default_input_modes=_TEXT,
        default_output_modes=_TEXT,
        skills=_skills(agent),
    )
    if bearer_auth:
        card.security_schemes[BEARER_SCHEME].CopyFrom(
            a2a_pb2.SecurityScheme(
                http_auth_security_scheme=a2a_pb2.HTTPAuthSecurityScheme(
                    scheme="bearer",
                    description="The token the server was started with (--auth-token).",
                )
            )
        )
        requirement = a2a_pb2.SecurityRequirement()
        requirement.schemes[BEARER_SCHEME].SetInParent()
        card.security_requirements.append(requirement)
    return card
