"""Eventide: an event-loop runtime for LLM agents.

A ``Runner`` drives a tree of agents; agents, tools and callbacks yield ``Event``s; the
Runner commits each event's actions through the session, artifact and memory services
before the producer resumes.

Everything in ``__all__`` imports from here. Names backed by optional dependencies (SQL,
file and object-store backends, the server) are loaded on first access, so ``import
eventide`` imports only pydantic and the standard library.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from eventide import types
from eventide.agents.base_agent import BaseAgent
from eventide.agents.llm_agent import Agent, LlmAgent
from eventide.agents.loop_agent import LoopAgent
from eventide.agents.parallel_agent import ParallelAgent
from eventide.agents.sequential_agent import SequentialAgent
from eventide.apps.app import App, ResumabilityConfig
from eventide.artifacts.base_artifact_service import BaseArtifactService
from eventide.artifacts.in_memory_artifact_service import InMemoryArtifactService
from eventide.contexts import (
    CallbackContext,
    InvocationContext,
    ReadonlyContext,
    ToolContext,
)
from eventide.events import Event, EventActions, ToolConfirmation
from eventide.memory.base_memory_service import BaseMemoryService
from eventide.memory.in_memory_memory_service import InMemoryMemoryService
from eventide.models.base_llm import BaseLlm
from eventide.models.llm_request import LlmRequest
from eventide.models.llm_response import LlmResponse
from eventide.models.registry import LLMRegistry
from eventide.node_context import Context
from eventide.plugins.base_plugin import BasePlugin
from eventide.run_config import RunConfig, StreamingMode
from eventide.runner import InMemoryRunner, Runner
from eventide.sessions.base_session_service import BaseSessionService
from eventide.sessions.in_memory_session_service import InMemorySessionService
from eventide.sessions.session import GetSessionConfig, Session
from eventide.state import State
from eventide.tools.agent_tool import AgentTool
from eventide.tools.base_tool import BaseTool
from eventide.tools.base_toolset import BaseToolset
from eventide.tools.builtin_tools import exit_loop, load_artifacts, load_memory, preload_memory
from eventide.tools.function_tool import FunctionTool
from eventide.tools.long_running_tool import LongRunningFunctionTool

if TYPE_CHECKING:  # the lazy names below, for type checkers (imported on first access)
    from eventide.artifacts.file_artifact_service import FileArtifactService
    from eventide.artifacts.fsspec_artifact_service import FsspecArtifactService
    from eventide.auth import (
        AuthConfig,
        AuthCredential,
        BaseCredentialService,
        InMemoryCredentialService,
    )
    from eventide.code_executors import BaseCodeExecutor, BuiltInCodeExecutor
    from eventide.history.compaction import (
        BaseEventsSummarizer,
        EventsCompactionConfig,
        LlmEventSummarizer,
    )
    from eventide.history.context_limits import ContextLimit
    from eventide.memory.sql_memory_service import SqlMemoryService
    from eventide.models.anthropic_llm import AnthropicLlm, Claude
    from eventide.models.gemini_llm import Gemini, GeminiLlm
    from eventide.models.litellm_llm import LiteLlm
    from eventide.models.openai_llm import OpenAILlm
    from eventide.planners import BasePlanner, BuiltInPlanner, PlanReActPlanner
    from eventide.plugins.logging_plugin import LoggingPlugin
    from eventide.plugins.memory_plugin import AddToMemoryPlugin
    from eventide.plugins.plugin_manager import PluginManager
    from eventide.plugins.tracing_plugin import TracingPlugin
    from eventide.sessions.sql_session_service import (
        DatabaseSessionService,
        SqliteSessionService,
        SqlSessionService,
    )
    from eventide.tools.gemini_tools import (
        GoogleSearchTool,
        UrlContextTool,
        VertexAiSearchTool,
        google_search,
        url_context,
    )
    from eventide.tools.mcp_toolset import (
        McpToolset,
        StdioConnectionParams,
        StreamableHTTPConnectionParams,
    )
    from eventide.tools.third_party_tools import CrewaiTool, LangchainTool
    from eventide.workflow import Workflow

__version__ = "0.1.0"

# Public names whose modules need optional dependencies (or are simply not needed by most
# programs): imported on first access, so `import eventide` stays small and fast.
_LAZY: dict[str, str] = {
    "AddToMemoryPlugin": "eventide.plugins.memory_plugin",
    "AnthropicLlm": "eventide.models.anthropic_llm",
    "AuthConfig": "eventide.auth",
    "BaseEventsSummarizer": "eventide.history.compaction",
    "AuthCredential": "eventide.auth",
    "BaseCodeExecutor": "eventide.code_executors",
    "BaseCredentialService": "eventide.auth",
    "BasePlanner": "eventide.planners",
    "BuiltInCodeExecutor": "eventide.code_executors",
    "BuiltInPlanner": "eventide.planners",
    "Claude": "eventide.models.anthropic_llm",
    "ContextLimit": "eventide.history.context_limits",
    "CrewaiTool": "eventide.tools.third_party_tools",
    "DatabaseSessionService": "eventide.sessions.sql_session_service",
    "EventsCompactionConfig": "eventide.history.compaction",
    "FileArtifactService": "eventide.artifacts.file_artifact_service",
    "FsspecArtifactService": "eventide.artifacts.fsspec_artifact_service",
    "Gemini": "eventide.models.gemini_llm",
    "GeminiLlm": "eventide.models.gemini_llm",
    "GoogleSearchTool": "eventide.tools.gemini_tools",
    "InMemoryCredentialService": "eventide.auth",
    "LangchainTool": "eventide.tools.third_party_tools",
    "LiteLlm": "eventide.models.litellm_llm",
    "LlmEventSummarizer": "eventide.history.compaction",
    "LoggingPlugin": "eventide.plugins.logging_plugin",
    "McpToolset": "eventide.tools.mcp_toolset",
    "OpenAILlm": "eventide.models.openai_llm",
    "PlanReActPlanner": "eventide.planners",
    "PluginManager": "eventide.plugins.plugin_manager",
    "SqlMemoryService": "eventide.memory.sql_memory_service",
    "SqlSessionService": "eventide.sessions.sql_session_service",
    "SqliteSessionService": "eventide.sessions.sql_session_service",
    "StdioConnectionParams": "eventide.tools.mcp_toolset",
    "StreamableHTTPConnectionParams": "eventide.tools.mcp_toolset",
    "TracingPlugin": "eventide.plugins.tracing_plugin",
    "UrlContextTool": "eventide.tools.gemini_tools",
    "VertexAiSearchTool": "eventide.tools.gemini_tools",
    "Workflow": "eventide.workflow",
    "google_search": "eventide.tools.gemini_tools",
    "url_context": "eventide.tools.gemini_tools",
}

__all__ = [
    "AddToMemoryPlugin",
    "Agent",
    "AgentTool",
    "AnthropicLlm",
    "App",
    "AuthConfig",
    "AuthCredential",
    "BaseAgent",
    "BaseArtifactService",
    "BaseCodeExecutor",
    "BaseCredentialService",
    "BaseEventsSummarizer",
    "BaseLlm",
    "BaseMemoryService",
    "BasePlanner",
    "BasePlugin",
    "BaseSessionService",
    "BaseTool",
    "BaseToolset",
    "BuiltInCodeExecutor",
    "BuiltInPlanner",
    "CallbackContext",
    "Claude",
    "Context",
    "ContextLimit",
    "CrewaiTool",
    "DatabaseSessionService",
    "Event",
    "EventActions",
    "EventsCompactionConfig",
    "FileArtifactService",
    "FsspecArtifactService",
    "FunctionTool",
    "Gemini",
    "GeminiLlm",
    "GetSessionConfig",
    "GoogleSearchTool",
    "InMemoryArtifactService",
    "InMemoryCredentialService",
    "InMemoryMemoryService",
    "InMemoryRunner",
    "InMemorySessionService",
    "InvocationContext",
    "LLMRegistry",
    "LangchainTool",
    "LiteLlm",
    "LlmAgent",
    "LlmEventSummarizer",
    "LlmRequest",
    "LlmResponse",
    "LoggingPlugin",
    "LongRunningFunctionTool",
    "LoopAgent",
    "McpToolset",
    "OpenAILlm",
    "ParallelAgent",
    "PlanReActPlanner",
    "PluginManager",
    "ReadonlyContext",
    "ResumabilityConfig",
    "RunConfig",
    "Runner",
    "SequentialAgent",
    "Session",
    "SqlMemoryService",
    "SqlSessionService",
    "SqliteSessionService",
    "State",
    "StdioConnectionParams",
    "StreamableHTTPConnectionParams",
    "StreamingMode",
    "ToolConfirmation",
    "ToolContext",
    "TracingPlugin",
    "UrlContextTool",
    "VertexAiSearchTool",
    "Workflow",
    "exit_loop",
    "google_search",
    "load_artifacts",
    "load_memory",
    "preload_memory",
    "types",
    "url_context",
]


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'eventide' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value
