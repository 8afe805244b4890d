"""The A2A protocol: serve Eventide agents to other runtimes, and call theirs.

- :func:`to_a2a` serves an agent (or ``App``) as an ASGI app; ``eventide api-server
  APPS_DIR --a2a`` serves every app at ``/a2a/{app_name}``.
- :class:`RemoteA2aAgent` is a remote A2A agent used as a sub-agent or through
  ``AgentTool``.

Needs the ``a2a`` extra (``pip install 'eventide[a2a]'``: the official ``a2a-sdk``).
"""

from __future__ import annotations

from eventide.a2a.agent_card import build_agent_card
from eventide.a2a.remote_agent import RemoteA2aAgent
from eventide.a2a.request_handler import EventideRequestHandler
from eventide.a2a.server_app import A2aEndpoint, to_a2a

__all__ = ["A2aEndpoint", "EventideRequestHandler", "RemoteA2aAgent", "build_agent_card", "to_a2a"]
