"""Eventide: an event-loop runtime for LLM agents.

A ``Runner`` drives a tree of agents; agents, tools and callbacks yield ``Event``s; the
Runner commits each event's actions through the session, artifact and memory services
before the producer resumes.
"""

from eventide import types
from eventide.agents.base_agent import BaseAgent
from eventide.artifacts.base_artifact_service import BaseArtifactService
from eventide.artifacts.in_memory_artifact_service import InMemoryArtifactService
from eventide.contexts import CallbackContext, InvocationContext, ReadonlyContext, ToolContext
from eventide.events import Event, EventActions, ToolConfirmation
from eventide.memory.base_memory_service import BaseMemoryService
from eventide.memory.in_memory_memory_service import InMemoryMemoryService
from eventide.models.base_llm import BaseLlm
from eventide.models.llm_request import LlmRequest
from eventide.models.llm_response import LlmResponse
from eventide.plugins.base_plugin import BasePlugin
from eventide.run_config import RunConfig, StreamingMode
from eventide.runner import InMemoryRunner, Runner
from eventide.sessions.base_session_service import BaseSessionService
from eventide.sessions.in_memory_session_service import InMemorySessionService
from eventide.sessions.session import GetSessionConfig, Session
from eventide.state import State

__version__ = "0.1.0"

__all__ = [
    "BaseAgent",
    "BaseArtifactService",
    "BaseLlm",
    "BaseMemoryService",
    "BasePlugin",
    "BaseSessionService",
    "CallbackContext",
    "Event",
    "EventActions",
    "GetSessionConfig",
    "InMemoryArtifactService",
    "InMemoryMemoryService",
    "InMemoryRunner",
    "InMemorySessionService",
    "InvocationContext",
    "LlmRequest",
    "LlmResponse",
    "ReadonlyContext",
    "RunConfig",
    "Runner",
    "Session",
    "State",
    "StreamingMode",
    "ToolConfirmation",
    "ToolContext",
    "types",
]
