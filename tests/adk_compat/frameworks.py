"""The two frameworks the compatibility scenarios run on, under google-adk's names.

A scenario takes a :class:`Framework` and uses only google-adk's public names on it, so the
same code runs on Eventide (``eventide_framework()``, the normal test run) and on google-adk
itself (``adk_framework()``, the opt-in job ``run_on_adk.py`` in a separate virtualenv that
has google-adk installed). This module imports neither framework at import time.

The few places where the two differ by design (how a request spells its thinking budget, how
credentials are configured) are small accessors here, each documented.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any


@dataclasses.dataclass
class Framework:
    """One framework's public names (google-adk's spelling) plus a few accessors."""

    name: str
    ns: dict[str, Any]
    thinking_budget: Callable[[Any], int | None]

    def __getattr__(self, item: str) -> Any:
        try:
            return self.ns[item]
        except KeyError:
            raise AttributeError(item) from None


_NAMES = [
    "AgentTool", "App", "BaseAgent", "BaseLlm", "BasePlugin", "BaseTool", "BaseToolset",
    "BuiltInCodeExecutor", "BuiltInPlanner", "CallbackContext", "Event", "EventActions",
    "FileArtifactService", "FunctionTool", "GoogleSearchTool", "InMemoryArtifactService",
    "InMemoryMemoryService", "InMemoryRunner", "InMemorySessionService", "InvocationContext",
    "LlmAgent", "LlmRequest", "LlmResponse", "LongRunningFunctionTool", "LoopAgent",
    "PlanReActPlanner", "PluginManager", "ReadonlyContext", "ResumabilityConfig", "RunConfig",
    "Runner", "SequentialAgent", "SetModelResponseTool", "ToolContext", "exit_loop",
    "google_search", "types",
    "url_context",
]  # fmt: skip


# The names Eventide keeps outside its top-level package.
_EVENTIDE_HOMES = {"SetModelResponseTool": "eventide.tools.set_model_response_tool"}


def eventide_framework() -> Framework:
    """Eventide, through its top-level package (and the homes of the few names it keeps
    elsewhere)."""

    import importlib

    ns = {
        name: getattr(importlib.import_module(_EVENTIDE_HOMES.get(name, "eventide")), name)
        for name in _NAMES
    }
    return Framework(
        name="eventide",
        ns=ns,
        thinking_budget=lambda request: request.config.thinking_budget,
    )


# Where google-adk's documentation imports each name from.
_ADK_MODULES = {
    "google.adk.agents": [
        "BaseAgent", "InvocationContext", "LlmAgent", "LoopAgent", "RunConfig", "SequentialAgent",
    ],
    "google.adk.agents.callback_context": ["CallbackContext"],
    "google.adk.agents.readonly_context": ["ReadonlyContext"],
    "google.adk.apps": ["App", "ResumabilityConfig"],
    "google.adk.artifacts": ["FileArtifactService", "InMemoryArtifactService"],
    "google.adk.code_executors": ["BuiltInCodeExecutor"],
    "google.adk.events": ["Event", "EventActions"],
    "google.adk.memory": ["InMemoryMemoryService"],
    "google.adk.models": ["BaseLlm", "LlmRequest", "LlmResponse"],
    "google.adk.planners": ["BuiltInPlanner", "PlanReActPlanner"],
    "google.adk.plugins": ["BasePlugin", "PluginManager"],
    "google.adk.runners": ["InMemoryRunner", "Runner"],
    "google.adk.sessions": ["InMemorySessionService"],
    "google.adk.tools": [
        "AgentTool", "BaseTool", "FunctionTool", "LongRunningFunctionTool", "ToolContext",
        "exit_loop", "google_search", "url_context",
    ],
    "google.adk.tools.base_toolset": ["BaseToolset"],
    "google.adk.tools.google_search_tool": ["GoogleSearchTool"],
    "google.adk.tools.set_model_response_tool": ["SetModelResponseTool"],
    "google.genai": ["types"],
}  # fmt: skip


def adk_framework() -> Framework:
    """google-adk 2.13, through the modules its documentation imports from."""
    import importlib

    ns = {
        name: getattr(importlib.import_module(module), name)
        for module, names in _ADK_MODULES.items()
        for name in names
    }
    return Framework(
        name="google-adk",
        ns=ns,
        thinking_budget=lambda request: (
            request.config.thinking_config.thinking_budget
            if request.config.thinking_config is not None
            else None
        ),
    )


def scripted_model(fw: Framework, replies: list[Any], model: str = "gemini-2.5-flash") -> Any:
    """A model of ``fw`` that answers with ``replies`` in order and records its requests.

    A reply is a string (a text answer), ``{"call": name, "args": {...}}`` (one function
    call), a list of such dicts (parallel calls), or an ``LlmResponse``. After the last
    reply it answers "done".
    """

    def to_response(reply: Any) -> Any:
        types = fw.types
        if isinstance(reply, str):
            return fw.LlmResponse(
                content=types.Content(role="model", parts=[types.Part(text=reply)])
            )
        if isinstance(reply, dict):
            reply = [reply]
        if isinstance(reply, list):
            parts = [
                types.Part(function_call=types.FunctionCall(name=r["call"], args=r.get("args", {})))
                for r in reply
            ]
            return fw.LlmResponse(content=types.Content(role="model", parts=parts))
        return reply

    class Scripted(fw.BaseLlm):  # type: ignore[misc, name-defined]
        async def generate_content_async(self, llm_request: Any, stream: bool = False) -> Any:
            self.__dict__.setdefault("requests", []).append(llm_request)
            queue = self.__dict__.setdefault("queue", list(replies))
            reply = queue.pop(0) if queue else "done"
            yield to_response(reply)

    return Scripted(model=model)


def requests_of(model: Any) -> list[Any]:
    """The requests a :func:`scripted_model` received."""
    return list(model.__dict__.get("requests", []))
