"""``eventide migrate``'s module-level mapping: google-adk imports that bind a module rather
than names, and the dotted uses that go with them.

- ``from google.adk.agents import llm_agent`` / ``import google.adk.agents.llm_agent as la``
  (a module under a local name, used as ``llm_agent.LlmAgent``): rewritten to Eventide's
  module of the same path when it has every name the file reads from it
  (``from eventide.agents import llm_agent``), else to ``import eventide as llm_agent``
  when the top-level package has them; a renamed name is renamed at each use.
- ``import google.adk[.x]`` with dotted uses ``google.adk.x.Name``: each use becomes
  ``eventide.Name`` (``eventide.workflow.Name`` for the workflow's own names) and the import
  ``import eventide`` (and ``import eventide.workflow``).
- ``google.adk.workflow`` is ``eventide.workflow``, with google-adk's public names, as are
  ``RequestInput`` (``google.adk.events``) and ``NodeTool`` (``google.adk.tools``); the 2.x
  top-level names (``from google.adk import Agent, Event, Workflow, Context``) are
  Eventide's top-level names.

A module whose uses cannot all be mapped is left as it is, and each name that is missing is
reported with its line.
"""

from __future__ import annotations

import dataclasses
import importlib

import libcst as cst

__all__ = [
    "ADK",
    "TOP_LEVEL_2X",
    "WORKFLOW_MODULE",
    "WORKFLOW_NAMES",
    "WORKFLOW_NAMES_ELSEWHERE",
    "ModuleUses",
    "dotted",
    "dotted_target",
    "has_same_path_module",
    "module_target",
]

ADK = "google.adk"
WORKFLOW_MODULE = "google.adk.workflow"
# google-adk 2.x's workflow names, which Eventide spells the same in eventide.workflow.
WORKFLOW_NAMES = frozenset(
    {
        "BaseNode",
        "DEFAULT_ROUTE",
        "Edge",
        "FunctionNode",
        "JoinNode",
        "Node",
        "NodeTimeoutError",
        "RetryConfig",
        "START",
        "Workflow",
        "node",
    }
)
# google-adk names that live elsewhere in google-adk and in eventide.workflow in Eventide:
# name -> the google-adk modules apps import it from.
WORKFLOW_NAMES_ELSEWHERE: dict[str, frozenset[str]] = {
    "RequestInput": frozenset({"google.adk.events", "google.adk.events.request_input"}),
    "NodeTool": frozenset({"google.adk.tools", "google.adk.tools._node_tool"}),
}
# google-adk 2.x's top-level names (`from google.adk import Agent, Event, Workflow, Context`);
# Eventide's top-level package re-exports the same four.
TOP_LEVEL_2X = frozenset({"Agent", "Context", "Event", "Workflow"})


def dotted(node: cst.BaseExpression | None) -> str:
    """``a.b.c`` for a name or attribute chain; "" for anything else."""
    if node is None:
        return ""
    if isinstance(node, cst.Name):
        return node.value
    if isinstance(node, cst.Attribute):
        inner = dotted(node.value)
        return f"{inner}.{node.attr.value}" if inner else ""
    return ""


@dataclasses.dataclass(slots=True)
class _Alias:
    attrs: set[str] = dataclasses.field(default_factory=set)
    bare: bool = False  # used other than as `alias.attr` (called, passed, ...)


class ModuleUses(cst.CSTVisitor):
    """Collects how the file uses each local name and each dotted ``google.adk`` chain."""

    def __init__(self, local_names: set[str]) -> None:
        self.aliases = {name: _Alias() for name in local_names}
        self.dotted_uses: set[str] = set()  # every google.adk.x.Name read in code
        self._attribute_bases: set[int] = set()

    def visit_Import(self, node: cst.Import) -> bool:
        return False

    def visit_ImportFrom(self, node: cst.ImportFrom) -> bool:
        return False

    def visit_Attribute(self, node: cst.Attribute) -> bool:
        chain = dotted(node)
        if chain.startswith(ADK + "."):
            self.dotted_uses.add(chain)
            return False
        if isinstance(node.value, cst.Name) and node.value.value in self.aliases:
            self.aliases[node.value.value].attrs.add(node.attr.value)
            self._attribute_bases.add(id(node.value))
        return True

    def visit_Name(self, node: cst.Name) -> None:
        alias = self.aliases.get(node.value)
        if alias is not None and id(node) not in self._attribute_bases:
            alias.bare = True

    def module_aliases(self) -> dict[str, set[str]]:
        """The local names used only as ``name.attr`` (so bound to a module), and the
        attributes read from each."""
        return {name: use.attrs for name, use in self.aliases.items() if not use.bare}


def has_same_path_module(adk_module: str) -> bool:
    """Whether Eventide has a module at ``adk_module``'s path (``google.adk.x`` ->
    ``eventide.x``)."""
    return adk_module == WORKFLOW_MODULE or _has_all("eventide" + adk_module[len(ADK) :], set())


def _has_all(module: str, names: set[str]) -> bool:
    try:
        imported = importlib.import_module(module)
    except ImportError:
        return False
    return all(hasattr(imported, name) for name in names)


@dataclasses.dataclass(frozen=True, slots=True)
class ModuleTarget:
    """Where a google-adk module bound to a local name goes in Eventide."""

    statement: str  # the import that replaces the google-adk one
    renames: dict[str, str]  # attribute renames at each use (google-adk -> Eventide)


def module_target(
    adk_module: str,
    local: str,
    attrs: set[str],
    known: frozenset[str],
    renamed: dict[str, str],
) -> ModuleTarget | list[str]:
    """The Eventide import for the google-adk module ``adk_module`` bound to ``local`` and
    read as ``local.<attrs>``; or the attributes Eventide lacks."""
    renames = {a: renamed[a] for a in attrs if a in renamed}
    wanted = {renames.get(a, a) for a in attrs}
    if adk_module == WORKFLOW_MODULE:
        missing = sorted(a for a in wanted if a not in WORKFLOW_NAMES)
        if missing:
            return missing
        return ModuleTarget(_import_as("eventide.workflow", local), renames)
    same_path = "eventide" + adk_module[len(ADK) :]
    if same_path != "eventide" and _has_all(same_path, wanted):
        return ModuleTarget(_import_as(same_path, local), renames)
    missing = sorted(a for a in wanted if a not in known)
    if missing:
        return missing
    return ModuleTarget(_import_as("eventide", local), renames)


def _import_as(module: str, local: str) -> str:
    package, _, last = module.rpartition(".")
    if package:
        return f"from {package} import {last}" + ("" if last == local else f" as {local}")
    return f"import {module}" + ("" if module == local else f" as {local}")


def dotted_target(chain: str, known: frozenset[str], renamed: dict[str, str]) -> str | None:
    """``eventide.Name...`` (``eventide.workflow.Name...`` for the workflow's own names) for a
    dotted ``google.adk.<modules>.Name...`` use: the first part after the modules that
    Eventide has names the target; None when there is none."""
    parts = chain.split(".")
    for index in range(2, len(parts)):
        name = renamed.get(parts[index], parts[index])
        rest = "".join(f".{part}" for part in parts[index + 1 :])
        in_workflow = chain.startswith(WORKFLOW_MODULE + ".")
        if in_workflow and name in WORKFLOW_NAMES and name not in TOP_LEVEL_2X:
            return f"eventide.workflow.{name}{rest}"
        if name in known:
            return f"eventide.{name}{rest}"
    return None
