"""The runtime scenarios on every framework users pick, side by side in one run.

``python benchmarks/bench_peers.py [--setup] [--venvs DIR] [--rounds N] [--quick]`` runs
scenario 2 (a plain turn) and scenario 3 (a turn with one async tool call) on Eventide,
google-adk, openai-agents, pydantic-ai and LangGraph, each framework in a venv of its own
(``--setup`` creates the missing ones under ``--venvs``, default ``.venv-peers``, with the
versions pinned below), each round a fresh process per framework, the order rotating from
round to round. It prints per framework the pooled median turn time with its interquartile
range, and the framework's median over Eventide's per round (median of the rounds, min-max),
and writes every sample to ``--output`` (default ``benchmarks/results/peers.json``).

Eventide and google-adk run ``benchmarks.worker`` (the same scenarios as ``make bench``);
the others run ``benchmarks/peer_worker.py``, which imports nothing from Eventide.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
PINS = {
    # [db]: SQLAlchemy, for its SQLite sessions; the A2A SDK: without it google-adk retries
    # a failing optional import (its RemoteA2aAgent) every turn (Makefile, ADK_BENCH_PYTHON).
    "adk": ["google-adk[db]==2.13.0", "a2a-sdk[http-server]==1.3.0"],
    "openai-agents": ["openai-agents==0.24.0"],
    "pydantic-ai": ["pydantic-ai-slim==2.68.0"],
    "langgraph": ["langgraph==1.2.24", "langchain-core==1.8.3"],
}
FRAMEWORKS = ("eventide", "adk", "openai-agents", "pydantic-ai", "langgraph")
METRIC = {2: "turn_us", 3: "turn_async_tool_us"}
TITLES = {2: "plain turn", 3: "tool turn (async tool)"}


def setup(venvs: Path) -> None:
    """Create each peer's venv (missing ones only) with its pinned packages."""
    for name, packages in PINS.items():
        python = venvs / name / "bin" / "python"
        if python.exists():
            continue
        print(f"creating {venvs / name} ({' '.join(packages)})", file=sys.stderr)
        subprocess.run([sys.executable, "-m", "venv", str(venvs / name)], check=True)
        subprocess.run([str(python), "-m", "pip", "install", "-q", *packages], check=True)


def command(framework: str, scenario: int, venvs: Path, quick: bool) -> list[str]:
    extra = ["--quick"] if quick else []
    if framework == "eventide":
        return [sys.executable, "-m", "benchmarks.worker", "--framework", "eventide",
                "--scenario", str(scenario), *extra]  # fmt: skip
    python = str(venvs / framework / "bin" / "python")
    if framework == "adk":
        return [python, "-m", "benchmarks.worker", "--framework", "adk",
                "--scenario", str(scenario), *extra]  # fmt: skip
    return [python, str(ROOT / "benchmarks" / "peer_worker.py"), "--framework", framework,
            "--scenario", str(scenario), *extra]  # fmt: skip


def run_round(framework: str, scenario: int, venvs: Path, quick: bool) -> list[float]:
    env = {**os.environ, "PYTHONPATH": f"{ROOT / 'src'}{os.pathsep}{ROOT}"}
    done = subprocess.run(
        command(framework, scenario, venvs, quick),
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )
    lines = done.stdout.strip().splitlines()
    result: dict[str, Any] = json.loads(lines[-1]) if lines else {"error": done.stderr[-500:]}
    if "error" in result:
        raise RuntimeError(f"{framework}, scenario {scenario}: {result['error']}")
    samples: list[float] = result["metrics"][METRIC[scenario]]
    return samples


def main(argv: list[str] | None = None) -> int:
    """Run the rounds; print the table; write the JSON."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--setup", action="store_true", help="create missing venvs first")
    parser.add_argument("--venvs", default=str(ROOT / ".venv-peers"))
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--quick", action="store_true", help="few turns (a smoke run)")
    parser.add_argument("--output", default=str(ROOT / "benchmarks" / "results" / "peers.json"))
    args = parser.parse_args(argv)
    venvs = Path(args.venvs)
    if args.setup:
        setup(venvs)
    missing = [n for n in PINS if not (venvs / n / "bin" / "python").exists()]
    if missing:
        print(f"missing venvs {missing} under {venvs}: run with --setup", file=sys.stderr)
        return 2
    started = time.time()
    results: dict[str, Any] = {"loadavg_before": os.getloadavg(), "scenarios": {}}
    for scenario in (2, 3):
        per_round: dict[str, list[float]] = {f: [] for f in FRAMEWORKS}
        samples: dict[str, list[float]] = {f: [] for f in FRAMEWORKS}
        for r in range(args.rounds):
            order = FRAMEWORKS[r % len(FRAMEWORKS) :] + FRAMEWORKS[: r % len(FRAMEWORKS)]
            for framework in order:
                got = run_round(framework, scenario, venvs, args.quick)
                samples[framework].extend(got)
                per_round[framework].append(statistics.median(got))
        results["scenarios"][str(scenario)] = {"samples": samples, "round_medians": per_round}
        print(f"\nScenario {scenario}, {TITLES[scenario]} ({args.rounds} rounds):")
        print("| framework | median us [IQR] | / Eventide per round, median [min-max] |")
        print("| --- | --- | --- |")
        for framework in FRAMEWORKS:
            pooled = samples[framework]
            q1, _, q3 = statistics.quantiles(pooled, n=4)
            ratios = [
                mine / ours
                for mine, ours in zip(per_round[framework], per_round["eventide"], strict=True)
            ]
            ratio = (
                "1"
                if framework == "eventide"
                else f"{statistics.median(ratios):.1f}x [{min(ratios):.1f}-{max(ratios):.1f}]"
            )
            median = statistics.median(pooled)
            print(f"| {framework} | {median:,.0f} [{q1:,.0f}-{q3:,.0f}] | {ratio} |")
    results["loadavg_after"] = os.getloadavg()
    results["elapsed_s"] = round(time.time() - started, 1)
    Path(args.output).parent.mkdir(parents=True, exist_ok=True)
    Path(args.output).write_text(json.dumps(results) + "\n")
    print(f"\nresults written to {args.output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
