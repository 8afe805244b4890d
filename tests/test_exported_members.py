"""The public surface: every name in ``__all__`` imports, the list is sorted, and importing
the package loads no optional heavy dependency."""

from __future__ import annotations

import json
import subprocess
import sys

import eventide


def test_all_is_sorted_and_complete() -> None:
    """STYLE: `__all__` is explicit, sorted and complete (every public name importable)."""
    names = eventide.__all__
    assert names == sorted(names, key=str.lower) or names == sorted(names)
    for name in names:
        assert getattr(eventide, name) is not None, name
    public = {n for n, v in vars(eventide).items() if not n.startswith("_") and not _is_module(v)}
    assert public - {"annotations", "importlib", "Any", "TYPE_CHECKING"} <= set(names)


def _is_module(value: object) -> bool:
    return type(value).__name__ == "module" and value is not eventide.types


def test_required_names_are_exported() -> None:
    """Issue 2: the names the spec's snippets use import from the top-level package."""
    required = {
        "Runner", "InMemoryRunner", "RunConfig", "StreamingMode", "Event", "EventActions",
        "BaseAgent", "InvocationContext", "CallbackContext", "ToolContext", "State", "Session",
        "InMemorySessionService", "InMemoryArtifactService", "InMemoryMemoryService", "types",
        "LlmAgent", "Agent", "SequentialAgent", "ParallelAgent", "LoopAgent", "BaseLlm",
        "LlmRequest", "LlmResponse", "BaseTool", "FunctionTool", "LongRunningFunctionTool",
        "AgentTool", "exit_loop", "BasePlugin",
    }  # fmt: skip
    assert required <= set(eventide.__all__)


def test_import_loads_no_heavy_dependency() -> None:
    """DESIGN §4: `import eventide` imports no SQL driver, web framework, provider SDK or
    tracing SDK."""
    code = "import sys, json, eventide\nprint(json.dumps(sorted(sys.modules)))\n"
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    loaded = set(json.loads(out))
    forbidden = {
        "sqlalchemy", "aiosqlite", "asyncpg", "fastapi", "starlette", "uvicorn", "google.genai",
        "openai", "anthropic", "litellm", "mcp", "opentelemetry", "opentelemetry.sdk", "httpx",
        "fsspec", "click", "rich",
    }  # fmt: skip
    assert not (loaded & forbidden), sorted(loaded & forbidden)
