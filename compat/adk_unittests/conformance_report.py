"""Joins the two runs and the static reading into per-test results and the table by area.

A test is a *target* when it passes on google-adk 2.13. Each target gets a category:

- ``pass``: it passes on Eventide too;
- ``fails-public``: it fails on Eventide and uses only public API;
- ``internals``: it fails on Eventide and uses google-adk internals (private modules,
  patches of google-adk modules or classes) or a Google Cloud service;
- ``not-supported``: it fails on Eventide and uses live audio/video streaming.

The public-API figure counts the ``public`` targets (by static reading) that pass; live
tests are outside it, counted as not supported.
"""

from __future__ import annotations

import collections
import re
from typing import Any

from adk_unittests.static_reading import KitReader

_COUNTERPART = re.compile(r"(google\.adk[\w.]*) has no Eventide counterpart")


def _eventide_outcome(
    nodeid: str, eventide: dict[str, Any]
) -> tuple[str, str]:
    record = eventide["tests"].get(nodeid)
    if record is not None:
        return str(record["outcome"]), str(record["reason"])
    file_part = nodeid.partition("::")[0]
    error = eventide["collection_errors"].get(file_part)
    if error is not None:
        return "error", f"collection: {error}"
    return "not-run", "not collected on Eventide"


def blocker_of(reason: str) -> str:
    """A short key grouping failures with the same cause (for the top-blockers list)."""
    missing = _COUNTERPART.search(reason)
    if missing:
        return f"missing {missing.group(1)}"
    text = reason.removeprefix("collection: ")
    text = re.sub(r"0x[0-9a-f]+", "0x…", text)
    text = re.sub(r"'[^']{40,}'", "'…'", text)
    return text[:160]


def classify(
    area_of: dict[str, str],
    adk: dict[str, Any],
    eventide: dict[str, Any],
    reader: KitReader,
) -> list[dict[str, str]]:
    """One record per test that ran on google-adk (targets and not)."""
    records: list[dict[str, str]] = []
    for nodeid, adk_record in sorted(adk["tests"].items()):
        reading = reader.read(nodeid)
        outcome, reason = _eventide_outcome(nodeid, eventide)
        target = adk_record["outcome"] == "passed"
        if not target:
            category = "not-target"
        elif outcome == "passed":
            category = "pass"
        elif reading.kind == "live":
            category = "not-supported"
        elif reading.kind in ("internals", "cloud"):
            category = "internals"
        else:
            category = "fails-public"
        records.append(
            {
                "id": nodeid,
                "area": area_of[nodeid],
                "adk": str(adk_record["outcome"]),
                "eventide": outcome,
                "kind": reading.kind,
                "evidence": reading.evidence,
                "category": category,
                "reason": reason if outcome != "passed" else "",
            }
        )
    return records


def summary(records: list[dict[str, str]]) -> dict[str, dict[str, int]]:
    """Counts by area (and ``all``): targets, passes, public targets and their passes, and
    each category."""
    table: dict[str, dict[str, int]] = collections.defaultdict(collections.Counter)
    for record in records:
        for area in (record["area"], "all"):
            row = table[area]
            row["collected"] += 1
            if record["category"] == "not-target":
                continue
            row["target"] += 1
            row[record["category"]] += 1
            passed = record["category"] == "pass"
            row["passed"] += passed
            if record["kind"] == "public":
                row["public"] += 1
                row["public_passed"] += passed
    return {area: dict(row) for area, row in table.items()}


def top_blockers(records: list[dict[str, str]], limit: int = 25) -> list[tuple[str, int]]:
    """The most common causes of public-API failures, by the number of tests each stops."""
    counts = collections.Counter(
        blocker_of(record["reason"])
        for record in records
        if record["category"] == "fails-public"
    )
    return counts.most_common(limit)


def _percent(part: int, whole: int) -> str:
    return f"{100 * part / whole:.0f}%" if whole else "-"


def format_table(table: dict[str, dict[str, int]], areas: list[str]) -> str:
    """The table by area, as printed by the runner."""
    header = (
        f"{'area':<10} {'ran':>5} {'target':>6} {'pass':>5} {'%':>4} | {'public':>6} "
        f"{'pass':>5} {'%':>4} | {'fails-pub':>9} {'internals':>9} {'live':>5}"
    )
    lines = [header, "-" * len(header)]
    for area in [*areas, "all"]:
        row = table.get(area, {})
        lines.append(
            f"{area:<10} {row.get('collected', 0):>5} {row.get('target', 0):>6} "
            f"{row.get('passed', 0):>5} {_percent(row.get('passed', 0), row.get('target', 0)):>4}"
            f" | {row.get('public', 0):>6} {row.get('public_passed', 0):>5} "
            f"{_percent(row.get('public_passed', 0), row.get('public', 0)):>4} | "
            f"{row.get('fails-public', 0):>9} {row.get('internals', 0):>9} "
            f"{row.get('not-supported', 0):>5}"
        )
    return "\n".join(lines)
