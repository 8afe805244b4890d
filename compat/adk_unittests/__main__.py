"""``python -m adk_unittests`` (with ``compat`` and ``src`` on PYTHONPATH; ``make
adk-conformance``): run google-adk's unit tests on google-adk 2.13 and on Eventide, print the
table by area and the top blockers, and write the per-test results as JSON."""

from __future__ import annotations

import argparse
import json
import subprocess
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
        help="reuse the google-adk side stored beside an earlier output file",
    )
    parser.add_argument(
        "--src",
        type=Path,
        default=kit_runs.REPO / "src",
        help="Eventide's sources to run (default: this checkout's src), e.g. a copy of a baseline",
    )
    parser.add_argument(
        "--reclassify",
        type=Path,
        help="run nothing: classify again the runs stored beside an earlier output file",
    )
    parser.add_argument("--timeout", type=float, default=60.0, help="seconds per test")
    parser.add_argument("-k", dest="keyword", help="pytest -k expression (a subset)")
    parser.add_argument("--blockers", type=int, default=25, help="how many blockers to list")
    return parser.parse_args(argv)


def _adk_side(
    args: argparse.Namespace, areas: list[str], kit: Path, python: Path | None
) -> dict[str, dict[str, Any]]:
    if args.adk_results is not None:
        earlier = json.loads(_runs_file(args.adk_results).read_text())
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
        print(
            f"  google-adk {area}: {len(runs[area]['tests'])} tests, "
            f"{time.monotonic() - started:.0f} s",
            file=sys.stderr,
        )
    return runs


def _adk_venv(*, needed: bool) -> tuple[Path | None, str | None]:
    """google-adk's interpreter (made ready to run pytest) and its package folder, which
    also tells the import map ADK's submodules from its other names."""
    try:
        python = kit_runs.adk_python()
        kit_runs.ensure_test_packages(python)
        return python, kit_runs.adk_module_root(python)
    except (OSError, subprocess.CalledProcessError) as exc:
        if needed:
            raise
        print(f"  (no google-adk venv: {exc}; submodules told by name)", file=sys.stderr)
        return None, None


def main(argv: list[str] | None = None) -> int:
    """Run, print, write; exit 0 (the figures are the result, not a pass/fail)."""
    args = _parse(argv)
    areas = [area.strip() for area in args.areas.split(",") if area.strip()]
    unknown = sorted(set(areas) - set(kit_runs.AREAS))
    if unknown:
        print(f"unknown areas {unknown}; choose from {', '.join(kit_runs.AREAS)}")
        return 2
    kit = kit_runs.find_kit()
    python, adk_root = _adk_venv(needed=args.adk_results is None and args.reclassify is None)
    if args.reclassify is not None:
        earlier = json.loads(_runs_file(args.reclassify).read_text())
        adk_runs = {area: earlier["adk_runs"][area] for area in areas}
        eventide_runs = {area: earlier["eventide_runs"][area] for area in areas}
    else:
        adk_runs = _adk_side(args, areas, kit, python)
        eventide_runs = _eventide_side(args, areas, kit, adk_root)
    _report(args, areas, kit, adk_root, adk_runs, eventide_runs)
    return 0


def _runs_file(output: Path) -> Path:
    """Where the raw runs of an output file are kept (beside it, not committed)."""
    return output.with_name(output.stem + ".runs.json")


def _eventide_side(
    args: argparse.Namespace, areas: list[str], kit: Path, adk_root: str | None
) -> dict[str, dict[str, Any]]:
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
        print(
            f"  eventide {area}: {len(eventide_runs[area]['tests'])} tests, "
            f"{time.monotonic() - started:.0f} s",
            file=sys.stderr,
        )
    return eventide_runs


def _report(
    args: argparse.Namespace,
    areas: list[str],
    kit: Path,
    adk_root: str | None,
    adk_runs: dict[str, dict[str, Any]],
    eventide_runs: dict[str, dict[str, Any]],
) -> None:
    reader = KitReader(kit, eventide_src=args.src, adk_root=Path(adk_root) if adk_root else None)
    records: list[dict[str, str]] = []
    for area in areas:
        area_of = dict.fromkeys(adk_runs[area]["tests"], area)
        records += conformance_report.classify(area_of, adk_runs[area], eventide_runs[area], reader)
    table = conformance_report.summary(records)
    blockers = conformance_report.top_blockers(records, args.blockers)
    print(conformance_report.format_table(table, areas))
    absent = conformance_report.absent_features(records)
    print("\nTop blockers of public-API tests of features Eventide has (tests, cause):")
    for cause, count in blockers:
        print(f"{count:>5}  {cause}")
    print("\ngoogle-adk features Eventide does not have (public-API tests that need them):")
    for module, count in absent[: args.blockers]:
        print(f"{count:>5}  {module}")
    args.output.parent.mkdir(parents=True, exist_ok=True)
    fields = ("id", "area", "adk", "eventide", "kind", "category", "reason")
    rows = ",\n".join(json.dumps([record[f] for f in fields]) for record in records)
    header = json.dumps(
        {
            "kit": kit_runs.KIT_NAME,
            "areas": areas,
            "summary": table,
            "top_blockers": blockers,
            "absent_features": absent,
            "test_fields": fields,
        },
        indent=1,
        sort_keys=True,
    )
    # One test per line: the file diffs well from one run to the next.
    args.output.write_text(header[:-2] + ',\n "tests": [\n' + rows + "\n ]\n}\n")
    _runs_file(args.output).write_text(
        json.dumps({"adk_runs": adk_runs, "eventide_runs": eventide_runs}) + "\n"
    )
    print(f"\nper-test results: {args.output}")


if __name__ == "__main__":
    raise SystemExit(main())
