"""Smoke test of ``benchmarks/bench_protocols.py``: each mode runs end to end and reports a
figure and a ratio for every protocol. Timings are never asserted."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PROTOCOLS = ["run_sse", "ag_ui", "chat", "responses"]


def _bench(*args: str) -> dict[str, object]:
    done = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "bench_protocols.py"), "--json", *args],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT / "src")},
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    result: dict[str, object] = json.loads(done.stdout)
    return result


def test_in_process_reports_every_protocol() -> None:
    result = _bench("--in-process", "--turns", "3", "--rounds", "1")
    protocols = result["protocols"]
    assert isinstance(protocols, dict)
    assert list(protocols) == PROTOCOLS
    for figures in protocols.values():
        assert figures["cpu_ms_per_turn"] > 0
        assert figures["cpu_ratio_to_run_sse"] > 0
    assert protocols["run_sse"]["cpu_ratio_to_run_sse"] == 1.0


@pytest.mark.slow
def test_callgrind_counts_every_protocol() -> None:
    """Under valgrind (a minute or two): positive instruction counts per turn."""
    assert shutil.which("valgrind"), (
        "bench_protocols --callgrind needs valgrind (apt-get install valgrind)"
    )
    result = _bench("--callgrind", "--turns", "2")
    protocols = result["protocols"]
    assert isinstance(protocols, dict)
    assert list(protocols) == PROTOCOLS
    for figures in protocols.values():
        assert figures["instructions_per_turn"] > 0
    assert protocols["run_sse"]["ratio_to_run_sse"] == 1.0
