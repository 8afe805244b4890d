"""``python -m adk_unittests`` (with ``compat`` and ``src`` on PYTHONPATH; ``make
adk-conformance``): run google-adk's unit tests on google-adk 2.13 and on Eventide, print the
table by area and the top blockers, and write the per-test results as JSON."""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

from adk_unittests import conformance_report, kit_runs
from adk_unittests.static_reading import KitReader

DEFAULT_OUTPUT = kit_runs.COMPAT_DIR / "adk_unittests" / "results" / "latest.json"


def _parse(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m adk_unittests", description=__doc__)
    parser.add_argument(
        "--areas",
        default=",".join(kit_runs.AREAS),
        help="comma-separated areas (default: all: %(default)s)",
    )
    parser.add_argument("--output", type=Path, default=DEFAULT_OUTPUT, help="per-test JSON")
    parser.add_argument(
        "--adk-results",
        type=Path,
        help="reuse the google-adk side of an earlier output file instead of running it",
    )
    parser.add_argument(
        "--src",
        type=Path,
        default=kit_runs.REPO / "src",
        help="Eventide's sources to run (default: this checkout's src), e.g. a copy of a baseline",
    )
    parser.add_argument("--timeout", type=float, default=60.0, help="seconds per test")
    parser.add_argument("-k", dest="keyword", help="pytest -k expression (a subset)")
    parser.add_argument("--blockers", type=int, default=25, help="how many blockers to list")
    return parser.parse_args(argv)


def _adk_side(
    args: argparse.Namespace, areas: list[str], kit: Any, python: Path | None
) -> dict[str, dict[str, Any]]:
    if args.adk_results is not None:
        earlier = json.loads(args.adk_results.read_text())
        return {area: earlier["adk_runs"][area] for area in areas}
    assert python is not None
    runs: dict[str, dict[str, Any]] = {}
    for area in areas:
        started = time.monotonic()
        runs[area] = kit_runs.run_area(
            area,
            "adk",
            kit=kit,
            python=python,
            adk_root=None,
            timeout_s=args.timeout,
            keyword=args.keyword,
        )
        print(f"  google-adk {area}: {len(runs[area]['tests'])} tests, "
              f"{time.monotonic() - started:.0f} s", file=sys.stderr)
    return runs


def main(argv: list[str] | None = None) -> int:
    """Run, print, write; exit 0 (the figures are the result, not a pass/fail)."""
    args = _parse(argv)
    areas = [area.strip() for area in args.areas.split(",") if area.strip()]
    unknown = sorted(set(areas) - set(kit_runs.AREAS))
    if unknown:
        print(f"unknown areas {unknown}; choose from {', '.join(kit_runs.AREAS)}")
        return 2
    kit = kit_runs.find_kit()
    python: Path | None = None
    adk_root: str | None = None
    if True:  # google-adk's venv: runs its side, and names its modules for the map
        try:
            python = kit_runs.adk_python()
            kit_runs.ensure_test_packages(python)
            adk_root = kit_runs.adk_module_root(python)
        except (FileNotFoundError, OSError) as exc:
            if args.adk_results is None:
                raise
            print(f"  (no google-adk venv: {exc}; submodule names guessed)", file=sys.stderr)
    adk_runs = _adk_side(args, areas, kit, python)
    eventide_runs: dict[str, dict[str, Any]] = {}
    for area in areas:
        started = time.monotonic()
        eventide_runs[area] = kit_runs.run_area(
            area,
            "eventide",
            kit=kit,
            python=kit_runs.main_python(),
            adk_root=adk_root,
            timeout_s=args.timeout,
            keyword=args.keyword,
            src=args.src,
        )
        print(f"  eventide {area}: {len(eventide_runs[area]['tests'])} tests, "
              f"{time.monotonic() - started:.0f} s", file=sys.stderr)
    reader = KitReader(kit)
    records: list[dict[str, str]] = []
    for area in areas:
        area_of = dict.fromkeys(adk_runs[area]["tests"], area)
        records += conformance_report.classify(
            area_of, adk_runs[area], eventide_runs[area], reader
        )
    table = conformance_report.summary(records)
    blockers = conformance_report.top_blockers(records, args.blockers)
    print(conformance_report.format_table(table, areas))
    print("\nTop blockers of public-API tests (tests stopped, cause):")
    for cause, count in blockers:
        print(f"{count:>5}  {cause}")
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(
        json.dumps(
            {
                "kit": kit_runs.KIT_NAME,
                "areas": areas,
                "summary": table,
                "top_blockers": blockers,
                "tests": records,
                "adk_runs": adk_runs,
            },
            indent=0,
            sort_keys=True,
        )
        + "\n"
    )
    print(f"\nper-test results: {args.output}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
