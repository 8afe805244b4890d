"""Smoke test of benchmarks/bench_durable.py: it runs and reports positive figures (never
timings asserted)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.slow
def test_bench_durable_quick_reports_both_settings_on_both_backends() -> None:
    """Issue 17 (benchmarks): the resumability-cost script reports on/off turn times, the
    markers' extra events and the resume time, in memory and on SQLite."""
    done = subprocess.run(
        [sys.executable, "-m", "benchmarks.bench_durable", "--quick", "--json"],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    for backend in ("memory", "sqlite"):
        row = result[backend]
        assert row["turn_ms_resumability_off"] > 0 and row["turn_ms_resumability_on"] > 0
        assert row["resume_ms_last_model_call"] > 0
        assert row["events_per_turn_on"] > row["events_per_turn_off"] == 6
