"""Scenario 1: import the core API in a fresh interpreter and report its cost.

Run as ``python -m benchmarks.cold_import eventide|adk``; prints one JSON line. Nothing but
the standard library is imported before the timed import.
"""

from __future__ import annotations

import json
import resource
import sys
import time

IMPORTS = {
    # The names a typical app imports; the same set on both sides.
    "eventide": (
        "from eventide import (BaseAgent, BaseLlm, Event, EventActions, InMemorySessionService,"
        " LlmResponse, RunConfig, Runner, StreamingMode, types)\n"
        "import eventide\n"
        "eventide.LlmAgent if hasattr(eventide, 'LlmAgent') else "
        "__import__('eventide.agents.llm_agent')\n"
    ),
    "adk": (
        "from google.adk.agents import BaseAgent, LlmAgent\n"
        "from google.adk.agents.run_config import RunConfig, StreamingMode\n"
        "from google.adk.events import Event, EventActions\n"
        "from google.adk.models import BaseLlm, LlmResponse\n"
        "from google.adk.runners import Runner\n"
        "from google.adk.sessions import InMemorySessionService\n"
        "from google.genai import types\n"
    ),
}


def main(framework: str) -> None:
    """Time the framework's import statement and print ``import_ms`` and ``peak_rss_mb``."""
    code = compile(IMPORTS[framework], f"<{framework} imports>", "exec")
    start = time.perf_counter()
    exec(code, {})
    import_ms = (time.perf_counter() - start) * 1e3
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps({"import_ms": import_ms, "peak_rss_mb": peak_mb}))


if __name__ == "__main__":
    main(sys.argv[1])
