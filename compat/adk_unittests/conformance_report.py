"""Joins the two runs and the static reading into per-test results and the table by area.

A test is a *target* when it passes on google-adk 2.13. Each target gets a category:

- ``pass``: it passes on Eventide too;
- ``fails-public``: it fails on Eventide and uses only public API;
- ``absent``: it fails on Eventide and uses only public API, of a google-adk feature (module)
  Eventide does not have at all;
- ``internals``: it fails on Eventide and uses google-adk internals (private modules,
  patches of google-adk modules or classes) or a Google Cloud service;
- ``not-supported``: it fails on Eventide and uses live audio/video streaming.

The public-API figures count the targets that use only public API (static reading): over
all of them (``public`` and ``absent`` kinds), and over those of features Eventide has
(``public`` kind alone). Live tests are outside both, counted as not supported.
"""

from __future__ import annotations

import collections
import re
from typing import Any

from adk_unittests.static_reading import KitReader

_COUNTERPART = re.compile(r"(google\.adk[\w.]*) has no Eventide counterpart")


def _eventide_outcome(nodeid: str, eventide: dict[str, Any]) -> tuple[str, str]:
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
        elif reading.kind == "absent":
            category = "absent"
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
            if record["kind"] in ("public", "absent"):
                row["public_all"] += 1
                row["public_all_passed"] += passed
            if record["kind"] == "public":
                row["public"] += 1
                row["public_passed"] += passed
    return {area: dict(row) for area, row in table.items()}


def top_blockers(records: list[dict[str, str]], limit: int = 25) -> list[tuple[str, int]]:
    """The most common causes of public-API failures, by the number of tests each stops."""
    counts = collections.Counter(
        blocker_of(record["reason"]) for record in records if record["category"] == "fails-public"
    )
    return counts.most_common(limit)


def absent_features(records: list[dict[str, str]]) -> list[tuple[str, int]]:
    """The google-adk modules Eventide does not have, by the number of target tests that
    need them."""
    counts = collections.Counter(
        record["evidence"].split()[1].rstrip(",")
        for record in records
        if record["category"] == "absent"
    )
    return counts.most_common()


def _percent(part: int, whole: int) -> str:
    return f"{100 * part / whole:.0f}%" if whole else "-"


def format_table(table: dict[str, dict[str, int]], areas: list[str]) -> str:
    """The table by area, as printed by the runner: targets (pass on google-adk 2.13) and how
    many pass on Eventide; the public-API targets (all, and of features Eventide has) and
    their passes; the failures by category."""
    header = (
        f"{'area':<10} {'ran':>5} {'target':>6} {'pass':>5} {'%':>4} | {'pubAPI':>6} "
        f"{'pass':>5} {'%':>4} | {'pubHas':>6} {'pass':>5} {'%':>4} | {'fail-pub':>8} "
        f"{'absent':>6} {'intern':>6} {'live':>5}"
    )
    lines = [header, "-" * len(header)]
    for area in [*areas, "all"]:
        row = table.get(area, {})

        def cell(key: str, width: int, row: dict[str, int] = row) -> str:
            return f"{row.get(key, 0):>{width}}"

        lines.append(
            f"{area:<10} {cell('collected', 5)} {cell('target', 6)} {cell('passed', 5)} "
            f"{_percent(row.get('passed', 0), row.get('target', 0)):>4} | "
            f"{cell('public_all', 6)} {cell('public_all_passed', 5)} "
            f"{_percent(row.get('public_all_passed', 0), row.get('public_all', 0)):>4} | "
            f"{cell('public', 6)} {cell('public_passed', 5)} "
            f"{_percent(row.get('public_passed', 0), row.get('public', 0)):>4} | "
            f"{cell('fails-public', 8)} {cell('absent', 6)} {cell('internals', 6)} "
            f"{cell('not-supported', 5)}"
        )
    return "\n".join(lines)
