"""Smoke test of the benchmark suite: it runs end to end and writes well-formed results.

It never asserts timings (the machine's speed is not under test), only that the suite runs
both the LLM-turn and the state-event scenarios, and reports positive figures for them.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
IN_CI = os.environ.get("CI", "").lower() == "true"


@pytest.mark.slow
def test_quick_run_writes_positive_figures_for_scenarios_2_and_5(tmp_path: Path) -> None:
    """`python -m benchmarks --quick --no-adk --only 2,5` writes the JSON with every key."""
    output = tmp_path / "latest.json"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "benchmarks",
            "--quick",
            "--no-adk",
            "--only",
            "2,5",
            "--output",
            str(output),
        ],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    results = json.loads(output.read_text())

    assert results["meta"]["frameworks"] == ["eventide"]
    assert results["meta"]["quick"] is True
    assert set(results["scenarios"]) == {"2", "5"}
    assert "| 2 | turn |" in done.stdout  # the table is printed

    plain = results["scenarios"]["2"]
    assert plain["errors"] == {}
    assert set(plain["metrics"]) == {"turn_us", "fake_model_us"}
    state = results["scenarios"]["5"]
    assert state["errors"] == {}
    assert set(state["metrics"]) == {
        "memory_per_event_us",
        "sqlite_per_event_us",
        "sqlite_full_per_event_us",
        "postgres_per_event_us",
        "agent_code_per_event_us",
    }
    measured = [
        plain["metrics"]["turn_us"]["eventide"],
        plain["metrics"]["fake_model_us"]["eventide"],
        state["metrics"]["memory_per_event_us"]["eventide"],
        state["metrics"]["agent_code_per_event_us"]["eventide"],
    ]
    for entry in measured:
        assert entry["n"] == len(entry["samples"]) > 0
        assert 0 < entry["min"] <= entry["q1"] <= entry["median"] <= entry["q3"] <= entry["max"]
    # SQLite is always there; PostgreSQL may be absent locally (reported as skipped with the
    # reason) but must be measured in CI.
    for backend in ("sqlite_per_event_us", "sqlite_full_per_event_us"):
        assert state["metrics"][backend]["eventide"]["median"] > 0
    postgres = state["metrics"]["postgres_per_event_us"]["eventide"]
    if IN_CI or "skipped" not in postgres:
        assert postgres.get("median", 0) > 0, f"PostgreSQL not measured: {postgres}"
    else:
        assert "PostgreSQL unavailable" in postgres["skipped"]


def test_pairwise_ratio_is_the_median_of_per_round_ratios() -> None:
    """Ratios pair each round's google-adk median with the same round's Eventide median."""
    from benchmarks.stats import pairwise_ratio, summarize

    ratio = pairwise_ratio([[1.0, 3.0], [2.0], [4.0]], [[10.0], [30.0, 50.0], [4.0]])
    assert ratio == {"median": 5.0, "min": 1.0, "max": 20.0, "rounds": 3}
    assert pairwise_ratio([[]], [[1.0]]) is None
    assert summarize([4.0, 1.0, 3.0, 2.0]) == {
        "median": 2.5,
        "q1": 1.75,
        "q3": 3.25,
        "min": 1.0,
        "max": 4.0,
        "n": 4,
    }
