"""No import cycle among Eventide's modules, counting imports inside functions (deferred
imports) and leaving out ``if TYPE_CHECKING:`` blocks (issue 32: the agents, the Runner and
the tools that run child invocations import each other in one direction only)."""

from __future__ import annotations

import ast
from pathlib import Path

import eventide

SRC = Path(eventide.__file__).parent


def _modules() -> dict[str, Path]:
    found: dict[str, Path] = {}
    for path in SRC.rglob("*.py"):
        parts = list(path.relative_to(SRC.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


def _imports(path: Path, known: dict[str, Path]) -> set[str]:
    """The Eventide modules ``path`` imports at run time (top level or in functions)."""

    def module_of(name: str) -> str | None:
        while name and name not in known:
            name = name.rpartition(".")[0]
        return name or None

    found: set[str] = set()

    def visit(node: ast.AST) -> None:
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            for child in node.orelse:
                visit(child)
            return
        if isinstance(node, ast.Import):
            found.update(m for a in node.names if (m := module_of(a.name)))
        elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
            for alias in node.names:
                full = f"{node.module}.{alias.name}"
                target = module_of(full if full in known else node.module)
                if target:
                    found.add(target)
        for inner in ast.iter_child_nodes(node):
            visit(inner)

    visit(ast.parse(path.read_text()))
    return found


def test_no_module_imports_itself_back_through_others() -> None:
    known = _modules()
    # The package itself re-exports the public names; every module's import of a submodule
    # runs it first, so it is left out of the graph (it imports, nothing imports it back).
    graph = {
        name: _imports(path, known) - {name, "eventide"}
        for name, path in known.items()
        if name != "eventide"
    }
    cycles: list[list[str]] = []
    state: dict[str, int] = {}  # 1: on the current path, 2: done

    def walk(name: str, path: list[str]) -> None:
        state[name] = 1
        path.append(name)
        for target in sorted(graph.get(name, ())):
            if state.get(target) == 1:
                cycles.append([*path[path.index(target) :], target])
            elif target not in state:
                walk(target, path)
        path.pop()
        state[name] = 2

    for name in sorted(graph):
        if name not in state:
            walk(name, [])
    assert cycles == [], "import cycles: " + "; ".join(" -> ".join(c) for c in cycles)
