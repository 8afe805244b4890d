"""Issue 31: one node runtime, no import cycle agents -> durable -> agents.

The agents read the replay index (``eventide.runtime``); ``eventide.durable`` plans a resume
and imports the agents; nothing below it imports it back, deferred imports included."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import eventide

SRC = Path(eventide.__file__).parent


def _imports(path: Path) -> list[str]:
    """Every module ``path`` imports: at the top, under TYPE_CHECKING, inside functions."""
    found: list[str] = []
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            found.extend(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module is not None:
            found.append(node.module)
    return found


def _offenders(package: str, forbidden: tuple[str, ...]) -> dict[str, list[str]]:
    offenders: dict[str, list[str]] = {}
    for path in sorted((SRC / package).rglob("*.py")):
        bad = [m for m in _imports(path) if m.startswith(forbidden)]
        if bad:
            offenders[str(path.relative_to(SRC))] = bad
    return offenders


def test_agents_never_import_durable() -> None:
    """Issue 31 (no import cycle, deferred imports included): no module of eventide.agents,
    eventide.flows or eventide.workflow imports eventide.durable in any form; the runtime
    the agents read imports neither the agents nor durable."""
    assert _offenders("agents", ("eventide.durable",)) == {}
    assert _offenders("flows", ("eventide.durable",)) == {}
    assert _offenders("workflow", ("eventide.durable",)) == {}
    assert _offenders("runtime", ("eventide.durable", "eventide.agents", "eventide.flows")) == {}
    # The check can fail: durable does import the agents, and the agents the runtime.
    assert "eventide.agents.base_agent" in _imports(SRC / "durable" / "plan.py")
    assert "eventide.runtime.replay" in _imports(SRC / "agents" / "base_agent.py")


def test_the_workflow_agents_run_on_the_graph_loop_without_importing_workflow() -> None:
    """Issue 31 (section 15.1): the workflow agents are shapes over the graph loop a
    ``Workflow`` runs on, which lives in eventide.runtime; no agents -> workflow -> agents
    cycle, deferred imports included, and their private loops are gone."""
    assert _offenders("agents", ("eventide.workflow", "eventide.node_context")) == {}
    assert _offenders("runtime", ("eventide.workflow", "eventide.node_context")) == {}
    shapes = _imports(SRC / "agents" / "shapes.py")
    assert "eventide.runtime.graph_loop" in shapes and "eventide.runtime.drive" in shapes
    assert "eventide.runtime.graph_loop" in _imports(SRC / "workflow" / "workflow.py")
    assert not (SRC / "agents" / "chain.py").exists()
    parallel = (SRC / "agents" / "parallel_agent.py").read_text()
    assert "create_task" not in parallel and "CommitChannel" not in parallel


def test_durable_has_no_second_copy_of_the_workflow_agents() -> None:
    """Issue 31: durable/agents.py's copies of the workflow agents are gone; nothing in
    eventide.durable tells agents apart by class."""
    assert not (SRC / "durable" / "agents.py").exists()
    for path in sorted((SRC / "durable").glob("*.py")):
        text = path.read_text()
        for name in ("SequentialAgent", "LoopAgent", "ParallelAgent", "LlmAgent"):
            assert f"isinstance(agent, {name})" not in text, path.name


def test_each_runtime_module_imports_first_in_a_fresh_interpreter() -> None:
    """Issue 31: every module of the agents/runtime/durable triangle imports on its own as
    the first eventide module of a fresh interpreter (a cycle broken only by import order
    would fail here for one of them)."""
    modules = [
        "eventide.runtime.markers",
        "eventide.runtime.replay",
        "eventide.agents.resumable_run",
        "eventide.agents.base_agent",
        "eventide.agents.sequential_agent",
        "eventide.agents.loop_agent",
        "eventide.agents.parallel_agent",
        "eventide.agents.shapes",
        "eventide.runtime.graph_loop",
        "eventide.runtime.drive",
        "eventide.agents.llm_agent",
        "eventide.flows.llm_resume",
        "eventide.workflow",
        "eventide.runtime.markers",
        "eventide.durable.plan",
        "eventide.durable",
        "eventide.runner",
    ]
    for module in modules:
        result = subprocess.run(
            [sys.executable, "-c", f"import {module}"],
            capture_output=True,
            text=True,
            check=False,
        )
        assert result.returncode == 0, f"{module}:\n{result.stderr}"
