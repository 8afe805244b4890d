"""Smoke test of the server benchmark against google-adk: it runs end to end on a tiny load.

It never asserts timings, only that every turn of every side came back well formed (the
script checks each SSE stream) and that each figure is reported.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
IN_CI = os.environ.get("CI", "").lower() == "true"


def _postgres_up() -> bool:
    try:
        with socket.create_connection(("127.0.0.1", 5432), timeout=1):
            return True
    except OSError:
        return False


def _run(
    tmp_path: Path, backends: list[str], adk_python: Path | None
) -> dict[tuple[str, str], Any]:
    output = tmp_path / "server.json"
    adk = ["--adk-python", str(adk_python)] if adk_python is not None else ["--no-adk"]
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
            *adk,
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:] + done.stdout[-3000:]
    assert "| memory | eventide | 1 |" in done.stdout  # the table is printed
    return {(r["backend"], r["framework"]): r for r in json.loads(output.read_text())["runs"]}


def _check(runs: dict[tuple[str, str], Any]) -> None:
    for (backend, _), run in runs.items():
        assert "failed" not in run, run
        assert (run["turns_ok"], run["errors"]) == (6, 0), run["error_samples"]
        assert run["processes"] == (2 if backend == "postgres" else 1)
        assert run["turns_per_s"] > 0 and run["server_cpu_ms_per_turn"] is not None
        assert run["latency_ms"]["p99"] >= run["latency_ms"]["p50"] > 0
        assert all(rss > 0 for rss in run["peak_rss_mb"])


@pytest.mark.slow
def test_eventide_in_memory_and_two_processes_on_postgres(tmp_path: Path) -> None:
    """`bench_server_vs_adk.py` serves the app with `eventide api-server` (one process in
    memory, two behind one PostgreSQL database), drives SSE conversations and reports
    turns/s, latency percentiles, errors, peak RSS and CPU per turn."""
    backends = ["memory"]
    if _postgres_up():
        backends.append("postgres")
    elif IN_CI:
        pytest.fail("PostgreSQL is not reachable on 127.0.0.1:5432; CI=true needs it")
    runs = _run(tmp_path, backends, None)
    assert set(runs) == {(backend, "eventide") for backend in backends}
    _check(runs)


@pytest.mark.slow
def test_adk_api_server_side_runs_the_same_load(tmp_path: Path) -> None:
    """The google-adk side: `adk api_server` from google-adk's own environment serves the
    same app on the same fake model, and its streams pass the same checks."""
    from tests.adk_env import adk_python

    runs = _run(tmp_path, ["memory"], adk_python())
    assert set(runs) == {("memory", "eventide"), ("memory", "adk")}
    _check(runs)
