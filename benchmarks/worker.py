"""Runs one scenario for one framework in this (fresh) process and prints its raw samples.

``python -m benchmarks.worker --framework eventide --scenario 2 [--quick]``: the last line of
stdout is a JSON object ``{"metrics": {...}, "skipped": {...}, "info": {...}}`` or
``{"error": "..."}``. The orchestrator (``python -m benchmarks``) starts one worker per
framework per round, so the two frameworks never share a process, an import or a heap.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import sys
import traceback
import warnings


def main() -> None:
    """Parse the arguments, run the scenario, print its samples as JSON."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--framework", required=True, choices=("eventide", "adk"))
    parser.add_argument("--scenario", required=True, type=int)
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()

    # Both sides run with the same settings: warnings and library logs off (google-adk logs
    # at WARNING on some paths; formatting log records is not what is measured).
    warnings.simplefilter("ignore")
    logging.disable(logging.WARNING)

    from benchmarks.frameworks import load_api
    from benchmarks.scenarios import SCENARIOS

    scenario = SCENARIOS[args.scenario]
    params = scenario.quick if args.quick else scenario.full
    try:
        api = load_api(args.framework)
        if scenario.run is None:
            raise ValueError(f"scenario {args.scenario} does not run in a worker")
        result = asyncio.run(scenario.run(api, params))
    except Exception as exc:
        traceback.print_exc(file=sys.stderr)
        result = {"error": f"{type(exc).__name__}: {exc}"}
    sys.stdout.write(json.dumps(result) + "\n")


if __name__ == "__main__":
    main()
