"""The server load benchmark still runs: a tiny load, zero errors, every figure present."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from tests.server.harness import REPO


@pytest.mark.slow
def test_bench_server_small_run() -> None:
    done = subprocess.run(
        [
            sys.executable,
            str(REPO / "benchmarks" / "bench_server.py"),
            "--json",
            "--conversations",
            "3",
            "--turns",
            # Enough turns that the server's CPU time spans several of /proc's 10 ms ticks
            # (two turns each could read as zero once a turn costs under ~1.5 ms).
            "10",
        ],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=REPO,
    )
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)["server_sse_load"]
    assert (result["turns_ok"], result["errors"]) == (30, 0)
    assert result["turns_per_s"] > 0
    assert result["turn_latency_ms"]["p99"] >= result["turn_latency_ms"]["p50"] > 0
    # Process CPU time comes in 10 ms ticks: six fast turns may round to 0.
    assert result["server_cpu_ms_per_turn"] is not None and result["server_cpu_ms_per_turn"] >= 0
