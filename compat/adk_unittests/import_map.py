"""The import map: ``google.adk.*`` resolved to Eventide's names, for running google-adk's
unit tests on Eventide.

A meta-path finder answers every ``google.adk`` module with a proxy module. A name read from
a proxy is looked up, in order, in the Eventide modules that hold the same things:

- for a public ADK module ``google.adk.a.b``: ``eventide.a.b`` when it exists, then the
  modules the table below names for it (Eventide groups things differently: ADK's
  ``events/event.py`` and ``events/event_actions.py`` are both ``eventide.events``), then the
  Eventide packages above ``eventide.a.b``, then the top-level ``eventide`` (its ``__all__``
  is Eventide's public API, with google-adk's spelling for the names Eventide renamed);
- for an ADK internal (a private ``_module``, ``flows``, ``utils``, ...): only the table, and
  only where Eventide has the same thing under another name (a plain rename).

A name found nowhere does not break the import: it resolves to a placeholder class that
raises ``NoEventideCounterpartError`` when the test uses it (calls it, instantiates it or
reads an attribute from it). A test file that imports one missing name at its top then fails
only in the tests that use that name, and the failure says which name it was, which is how
the report counts blockers by name.

``google.genai`` is never mapped: Eventide accepts google-genai's objects.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import os
import sys
import types
from collections.abc import Sequence
from pathlib import Path
from typing import Any

ADK_ROOT = "google.adk"

# ADK module -> Eventide modules holding the same names (checked after eventide.<same path>).
MODULE_TABLE: dict[str, tuple[str, ...]] = {
    "google.adk": ("eventide",),
    "google.adk.events.event": ("eventide.events",),
    "google.adk.events.event_actions": ("eventide.events",),
    "google.adk.agents.invocation_context": ("eventide.contexts",),
    "google.adk.agents.callback_context": ("eventide.contexts",),
    "google.adk.agents.readonly_context": ("eventide.contexts",),
    "google.adk.agents.context": ("eventide.node_context", "eventide.contexts"),
    "google.adk.tools.tool_context": ("eventide.contexts", "eventide.node_context"),
    "google.adk.tools.tool_confirmation": ("eventide.events",),
    "google.adk.events.ui_widget": ("eventide.events",),
    "google.adk.agents.run_config": ("eventide.run_config",),
    "google.adk.runners": ("eventide.runner",),
    "google.adk.sessions.state": ("eventide.state",),
    "google.adk.auth.auth_credential": ("eventide.auth",),
    "google.adk.auth.auth_schemes": ("eventide.auth",),
    "google.adk.auth.auth_tool": ("eventide.auth",),
    "google.adk.auth.credential_service.base_credential_service": ("eventide.auth",),
    "google.adk.auth.credential_service.in_memory_credential_service": ("eventide.auth",),
    "google.adk.errors": ("eventide.errors",),
    "google.adk.apps.compaction": ("eventide.history.compaction",),
    "google.adk.apps.llm_event_summarizer": ("eventide.history.compaction",),
    "google.adk.apps.base_events_summarizer": ("eventide.history.compaction",),
    "google.adk.planners": ("eventide.planners",),
    "google.adk.code_executors": ("eventide.code_executors",),
    "google.adk.models.google_llm": ("eventide.models.gemini_llm",),
    "google.adk.models.lite_llm": ("eventide.models.litellm_llm",),
    "google.adk.tools.google_search_tool": ("eventide.tools.gemini_tools",),
    "google.adk.tools.url_context_tool": ("eventide.tools.gemini_tools",),
    "google.adk.tools.vertex_ai_search_tool": ("eventide.tools.gemini_tools",),
    "google.adk.tools.load_artifacts_tool": ("eventide.tools.builtin_tools",),
    "google.adk.tools.load_memory_tool": ("eventide.tools.builtin_tools",),
    "google.adk.tools.preload_memory_tool": ("eventide.tools.builtin_tools",),
    "google.adk.tools.exit_loop_tool": ("eventide.tools.builtin_tools",),
    "google.adk.tools.mcp_tool": ("eventide.tools.mcp_toolset", "eventide.tools.mcp_tool"),
    "google.adk.tools.langchain_tool": ("eventide.tools.third_party_tools",),
    "google.adk.tools.crewai_tool": ("eventide.tools.third_party_tools",),
    "google.adk.sessions.database_session_service": ("eventide.sessions.sql_session_service",),
    "google.adk.sessions.sqlite_session_service": ("eventide.sessions.sql_session_service",),
    "google.adk.plugins.logging_plugin": ("eventide.plugins.logging_plugin",),
    "google.adk.memory.memory_entry": ("eventide.memory.base_memory_service",),
    # The graph workflow: ADK's private modules hold the names its own tests import.
    "google.adk.events": ("eventide.events", "eventide.workflow.request_input"),
    "google.adk.events.request_input": ("eventide.workflow.request_input",),
    "google.adk.workflow._workflow": ("eventide.workflow.workflow",),
    "google.adk.workflow._base_node": ("eventide.workflow.base_node",),
    "google.adk.workflow._function_node": ("eventide.workflow.function_node",),
    "google.adk.workflow._join_node": ("eventide.workflow.join_node",),
    "google.adk.workflow._node": ("eventide.workflow.node",),
    "google.adk.workflow._graph": ("eventide.workflow.graph",),
    "google.adk.workflow._retry_config": ("eventide.workflow.retry_config",),
    "google.adk.workflow._errors": ("eventide.errors",),
    "google.adk.workflow._tool_node": ("eventide.workflow.tool_node",),
    "google.adk.tools._node_tool": ("eventide.workflow.node_tool",),
    "google.adk.workflow.utils._workflow_graph_utils": ("eventide.workflow.node_builder",),
    "google.adk.workflow.utils._workflow_hitl_utils": ("eventide.workflow.request_input",),
}

# google-adk names Eventide spells differently (the same renames `eventide migrate` applies).
RENAMED_NAMES: dict[str, str] = {
    "MCPToolset": "McpToolset",
    "LlmRegistry": "LLMRegistry",
}

# ADK internals with a plain-rename counterpart outside Eventide's modules: ADK's own
# backport of contextlib.aclosing, which its shared test helpers import.
INTERNAL_RENAMES: dict[str, dict[str, str]] = {
    "google.adk.utils.context_utils": {"Aclosing": "contextlib:aclosing"},
    "google.adk.workflow._parallel_worker": {
        "_ParallelWorker": "eventide.workflow.parallel_worker:ParallelWorker"
    },
    "google.adk.workflow._tool_node": {"_ToolNode": "eventide.workflow.tool_node:ToolNode"},
}

# First component after google.adk that makes a module an ADK internal.
INTERNAL_PACKAGES = frozenset(
    {"flows", "utils", "telemetry", "cli", "platform", "features", "dependencies", "version"}
)
# Deeper ADK packages that are internal.
INTERNAL_PREFIXES = (
    "google.adk.workflow.utils",
    "google.adk.sessions.schemas",
    "google.adk.sessions.migration",
)


def is_internal_module(name: str) -> bool:
    """Whether ``name`` (a ``google.adk`` module) is one of google-adk's internals: a private
    ``_module`` anywhere in its path, or a module of an internal package."""
    parts = name.split(".")
    if any(part.startswith("_") for part in parts):
        return True
    if len(parts) > 2 and parts[2] in INTERNAL_PACKAGES:
        return True
    return any(name == prefix or name.startswith(prefix + ".") for prefix in INTERNAL_PREFIXES)


def has_counterpart(adk_module: str, eventide_src: Path) -> bool:
    """Whether the ADK module ``adk_module`` has an Eventide counterpart in the sources at
    ``eventide_src``: a module at the same path, or a table entry for it or a package above
    it. Without one, the module is a feature Eventide does not have."""
    parts = adk_module.split(".")
    for end in range(len(parts), 2, -1):
        if ".".join(parts[:end]) in MODULE_TABLE or ".".join(parts[:end]) in INTERNAL_RENAMES:
            return True
    same = Path(eventide_src, "eventide", *parts[2:])
    return same.with_suffix(".py").is_file() or (same / "__init__.py").is_file()


class NoEventideCounterpartError(AttributeError):
    """A google-adk name the import map found nowhere in Eventide was used.

    An ``AttributeError`` so that ``hasattr`` and ``getattr(..., default)`` on a placeholder
    behave as on an object without the attribute.
    """

    def __init__(self, qualified_name: str) -> None:
        self.qualified_name = qualified_name
        super().__init__(
            f"{qualified_name} has no Eventide counterpart "
            "(import map: compat/adk_unittests/import_map.py)"
        )


class _PlaceholderMeta(type):
    def __getattr__(cls, attr: str) -> Any:
        if attr.startswith("__") and attr.endswith("__"):
            raise AttributeError(attr)
        raise NoEventideCounterpartError(f"{cls.__adk_name__}.{attr}")

    def __call__(cls, *args: Any, **kwargs: Any) -> Any:
        raise NoEventideCounterpartError(cls.__adk_name__)


def _placeholder(qualified_name: str) -> type:
    module, _, name = qualified_name.rpartition(".")
    # An exception class, so `except X` and `pytest.raises(X)` of a missing ADK error work
    # (and fail by not matching) instead of breaking the test's own syntax.
    return _PlaceholderMeta(
        name,
        (Exception,),
        {"__adk_name__": qualified_name, "__module__": module, "__qualname__": name},
    )


_MISSING = object()

# google-adk's own ``google/adk`` folder (of another venv), read for its file names only: it
# tells `from google.adk.x import name` of a submodule from that of a missing function.
ADK_MODULE_ROOT_ENV = "EVENTIDE_ADK_MODULE_ROOT"


def _is_adk_module(name: str) -> bool:
    root = os.environ.get(ADK_MODULE_ROOT_ENV)
    last = name.rpartition(".")[2]
    if not root:  # no ADK to look at: a snake_case name is taken for a module
        return last.islower() and last.isidentifier()
    path = Path(root, *name.split(".")[2:])
    return path.with_suffix(".py").is_file() or (path / "__init__.py").is_file()


def _import_optional(name: str) -> types.ModuleType | None:
    """The module ``name``, or None when it (or a parent) does not exist in Eventide."""
    try:
        return importlib.import_module(name)
    except ModuleNotFoundError as exc:
        if exc.name is not None and (name == exc.name or name.startswith(exc.name + ".")):
            return None
        raise


def eventide_sources(adk_name: str) -> list[str]:
    """The Eventide modules a name of ``adk_name`` is looked up in, in order."""
    if is_internal_module(adk_name):
        return list(MODULE_TABLE.get(adk_name, ()))
    same_path = "eventide" + adk_name[len(ADK_ROOT) :]
    sources = [same_path, *MODULE_TABLE.get(adk_name, ())]
    parts = same_path.split(".")
    sources += [".".join(parts[:end]) for end in range(len(parts) - 1, 0, -1)]
    return list(dict.fromkeys(sources))


class AdkProxyModule(types.ModuleType):
    """A ``google.adk`` module whose names come from Eventide (see the module docstring)."""

    def __init__(self, name: str, sources: Sequence[str]) -> None:
        super().__init__(name)
        self.__path__ = []  # a package, so its submodules import through the map
        self.__adk_sources__ = tuple(sources)
        self.__adk_resolved__: dict[str, Any] = {}

    def __getattr__(self, attr: str) -> Any:
        if attr.startswith("__") and attr.endswith("__"):
            raise AttributeError(attr)
        resolved = self.__adk_resolved__
        if attr not in resolved:
            resolved[attr] = self._resolve(attr)
        return resolved[attr]

    def _resolve(self, attr: str) -> Any:
        internal = INTERNAL_RENAMES.get(self.__name__, {})
        if attr in internal:
            module_name, _, name = internal[attr].partition(":")
            return getattr(importlib.import_module(module_name), name)
        names = (attr, RENAMED_NAMES[attr]) if attr in RENAMED_NAMES else (attr,)
        for source in self.__adk_sources__:
            module = _import_optional(source)
            if module is None:
                continue
            for name in names:
                value = getattr(module, name, _MISSING)
                if isinstance(value, types.ModuleType):
                    # `from google.adk.agents import llm_agent`: ADK's submodule, mapped.
                    return importlib.import_module(f"{self.__name__}.{attr}")
                if value is not _MISSING:
                    return value
        if _is_adk_module(f"{self.__name__}.{attr}"):
            # Not a name of any source but one of ADK's submodules: its own names resolve,
            # or turn into placeholders, one by one.
            return importlib.import_module(f"{self.__name__}.{attr}")
        return _placeholder(f"{self.__name__}.{attr}")


class _ProxyLoader(importlib.abc.Loader):
    def create_module(self, spec: importlib.machinery.ModuleSpec) -> types.ModuleType:
        return AdkProxyModule(spec.name, eventide_sources(spec.name))

    def exec_module(self, module: types.ModuleType) -> None:
        return None


class AdkImportMap(importlib.abc.MetaPathFinder):
    """Finds every ``google.adk`` module as an ``AdkProxyModule``."""

    def find_spec(
        self,
        fullname: str,
        path: Sequence[str] | None,
        target: types.ModuleType | None = None,
    ) -> importlib.machinery.ModuleSpec | None:
        if fullname != ADK_ROOT and not fullname.startswith(ADK_ROOT + "."):
            return None
        return importlib.machinery.ModuleSpec(fullname, _ProxyLoader(), is_package=True)


def install() -> AdkImportMap:
    """Put the map first on ``sys.meta_path`` (once) and return it."""
    for finder in sys.meta_path:
        if isinstance(finder, AdkImportMap):
            return finder
    if any(name == ADK_ROOT or name.startswith(ADK_ROOT + ".") for name in sys.modules):
        raise RuntimeError("google.adk is already imported; install the import map before it")
    finder = AdkImportMap()
    sys.meta_path.insert(0, finder)
    return finder
