"""Smoke test of the server benchmark against google-adk: it runs end to end on a tiny load.

It never asserts timings, only that every turn of every side came back well formed (the
script checks each SSE stream) and that each figure is reported.
"""

from __future__ import annotations

import importlib.util
import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
IN_CI = os.environ.get("CI", "").lower() == "true"


def _postgres_up() -> bool:
    try:
        with socket.create_connection(("127.0.0.1", 5432), timeout=1):
            return True
    except OSError:
        return False


@pytest.mark.slow
def test_tiny_run_of_both_backends_has_no_errors_and_every_figure(tmp_path: Path) -> None:
    """`bench_server_vs_adk.py` serves the app with `eventide api-server` (one process in
    memory, two behind one PostgreSQL database), drives SSE conversations and reports
    turns/s, latency percentiles, errors, peak RSS and CPU per turn; google-adk's side runs
    too when google-adk is installed."""
    backends = ["memory"]
    if _postgres_up():
        backends.append("postgres")
    elif IN_CI:
        pytest.fail("PostgreSQL is not reachable on 127.0.0.1:5432; CI=true needs it")
    output = tmp_path / "server.json"
    frameworks = ["eventide"]
    if importlib.util.find_spec("google.adk") is not None:
        frameworks.append("adk")
    done = subprocess.run(
        [
            sys.executable,
            str(ROOT / "benchmarks" / "bench_server_vs_adk.py"),
            "--conversations",
            "3",
            "--turns",
            "2",
            "--backends",
            ",".join(backends),
            "--output",
            str(output),
            *([] if "adk" in frameworks else ["--no-adk"]),
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:] + done.stdout[-3000:]
    assert "| memory | eventide | 1 |" in done.stdout  # the table is printed
    results = json.loads(output.read_text())
    runs = {(r["backend"], r["framework"]): r for r in results["runs"]}
    assert set(runs) == {(b, f) for b in backends for f in frameworks}
    for (backend, _), run in runs.items():
        assert "failed" not in run, run
        assert (run["turns_ok"], run["errors"]) == (6, 0), run["error_samples"]
        assert run["processes"] == (2 if backend == "postgres" else 1)
        assert run["turns_per_s"] > 0 and run["server_cpu_ms_per_turn"] > 0
        assert run["latency_ms"]["p99"] >= run["latency_ms"]["p50"] > 0
        assert all(rss > 0 for rss in run["peak_rss_mb"])
