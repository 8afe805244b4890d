"""Run the compatibility scenarios on google-adk itself (the opt-in job).

Usage, from the repository root, with a Python that has google-adk 2.13 installed (never
Eventide's virtualenv)::

    /path/to/adk-venv/bin/python -m tests.adk_compat.run_on_adk

It prints one line per scenario and per example app (``examples/adk_*``, run unmigrated
with the model output recorded in ``golden/``) and exits 1 when any fails: a failure means
an expectation in ``scenarios.py`` or a golden file is not google-adk's behaviour. google-adk is installed from the package
registry (``pip install google-adk==2.13.0``), never vendored.
"""

from __future__ import annotations

import asyncio
import importlib
import json
import logging
import sys
import tempfile
import warnings
from pathlib import Path
from typing import Any

from tests.adk_compat import (
    parity_scenarios,  # noqa: F401 - registers its scenarios
    phase2_scenarios,  # noqa: F401 - registers its scenarios
)
from tests.adk_compat.example_apps import TURNS, play, replay_model
from tests.adk_compat.frameworks import Framework, adk_framework
from tests.adk_compat.scenarios import run_all

GOLDEN = Path(__file__).parent / "golden"


def run_examples(fw: Framework) -> list[tuple[str, str | None]]:
    """Each ``examples/adk_*`` app, unmigrated, on google-adk with its recorded model output:
    (name, None) when events and state match the golden file, else (name, the difference)."""
    results: list[tuple[str, str | None]] = []
    for name, turns in sorted(TURNS.items()):
        golden = json.loads((GOLDEN / f"{name}.json").read_text())
        module = importlib.import_module(f"examples.{name}.agent")
        root = module.root_agent
        for agent in _walk(root):
            if hasattr(agent, "model") and agent.name in golden["model_outputs"]:
                agent.model = replay_model(fw, golden["model_outputs"][agent.name])
        try:
            played = asyncio.run(play(fw, root, turns))
        except Exception as exc:  # noqa: BLE001 - reported per example
            results.append((f"example {name}", f"{type(exc).__name__}: {exc}"))
            continue
        played = json.loads(json.dumps(played))
        if played["turns"] != golden["turns"]:
            results.append((f"example {name}", f"events differ: {played['turns']}"))
        elif played["state"] != golden["state"]:
            results.append((f"example {name}", f"state differs: {played['state']}"))
        else:
            results.append((f"example {name}", None))
    return results


def _walk(agent: Any) -> list[Any]:
    found = [agent]
    for sub in agent.sub_agents:
        found += _walk(sub)
    return found


def main() -> int:
    warnings.simplefilter("ignore")
    # google-adk logs a warning per model call of a test model; scenarios that check a
    # warning capture it themselves.
    logging.getLogger().addHandler(logging.NullHandler())
    logging.getLogger().setLevel(logging.ERROR)
    with tempfile.TemporaryDirectory() as tmp:
        fw = adk_framework()
        results = run_all(fw, Path(tmp)) + run_examples(fw)
    for name, error in results:
        print(f"{'PASS' if error is None else 'FAIL'} {name}" + (f": {error}" if error else ""))
    failed = sum(1 for _, error in results if error is not None)
    print(f"{len(results) - failed} passed, {failed} failed on google-adk")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
