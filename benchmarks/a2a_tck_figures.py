"""The A2A TCK's mandatory JSON-RPC figures for two kinds of Eventide app, measured.

Usage: python benchmarks/a2a_tck_figures.py

1. the reference app (``tests/a2a/apps``, tasks stay working as the TCK's reference agent's
   do; the CI gate ``tests/a2a/test_a2a_tck.py`` runs the same);
2. a real, task-completing app: the example ``trivia`` agent (``examples/a2a_pair/
   remote_apps``, an ``LlmAgent`` on the offline demo model), whose tasks complete before
   ``message/send`` answers, as google-adk's ``to_a2a`` agents' do.

Each runs on a fresh ``eventide api-server --a2a`` with the TCK's own venv, from a temporary
copy (tests/a2a/tck_env.py). Prints passed / failed / skipped and the failing tests. The
second run takes about a minute and a half: the TCK's ListTasks tests wait 5 s each for a
task to be working, which a completed task never is again. For comparison (same TCK and
setting, shared/third_party/README.md): a2a-sdk 1.3.0's own server with a task left working
passes 71, google-adk 2.13's ``to_a2a`` 51.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from tests.a2a.tck_env import (  # noqa: E402
    MANDATORY_MARKERS,
    api_server,
    run_tck,
    tck_copy,
    tck_python,
    tck_source,
)

RUNS = {
    "reference_agent": (ROOT / "tests" / "a2a" / "apps", ("--a2a-send-wait", "0.1")),
    "trivia": (ROOT / "examples" / "a2a_pair" / "remote_apps", ()),
}


def main() -> int:
    source = tck_source()
    python = tck_python(source)
    figures: dict[str, dict[str, object]] = {}
    for app, (apps_dir, options) in RUNS.items():
        tck = tck_copy(source)
        os.environ["EVENTIDE_TCK_WORK_SECONDS"] = "10"
        with tempfile.TemporaryDirectory() as folder:
            log = Path(folder) / "server.log"
            with api_server(apps_dir, log, *options) as url:
                outcomes = run_tck(
                    python, tck, f"{url}/a2a/{app}", "tests/mandatory", *MANDATORY_MARKERS
                )
        counts = {
            kind: sum(1 for o in outcomes.values() if o == kind)
            for kind in ("passed", "failed", "skipped")
        }
        failed = sorted(name for name, outcome in outcomes.items() if outcome == "failed")
        figures[app] = {**counts, "failed_tests": failed}
        print(f"{app}: {counts}", file=sys.stderr)
    print(json.dumps(figures, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
