"""benchmarks/bench_connectors.py runs and reports its figures (tiny sizes)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[2] / "benchmarks" / "bench_connectors.py"


@pytest.mark.slow
def test_bench_connectors_reports_per_chunk_figures() -> None:
    result = subprocess.run(
        [sys.executable, str(BENCH), "--json", "--chunks", "20", "--rounds", "1"],
        capture_output=True,
        text=True,
        timeout=180,
        check=True,
    )
    figures = json.loads(result.stdout.strip().splitlines()[-1])
    assert figures["chunks"] == 20
    assert figures["connector_wall_us_per_chunk"] > 0
    assert figures["sdk_wall_us_per_chunk"] > 0
    assert "overhead_cpu_us_per_chunk" in figures
