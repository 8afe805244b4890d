"""Graph workflows on Eventide, google-adk 2.13 and LangGraph, side by side in one run.

``python benchmarks/bench_workflow.py [--venvs DIR] [--rounds N] [--quick]`` runs
``benchmarks/workflow_worker.py``'s scenarios (a 100-node chain of function nodes, a
1,000-node fan-out/fan-in, a 3-agent pipeline on a fake model) on each framework, each round
a fresh process per framework with the order rotating from round to round, then Eventide's
resume of a crashed 1,000-node chain. google-adk runs from ``.venv-adk`` (or
``EVENTIDE_ADK_PYTHON``) and LangGraph, without and with its in-memory checkpointer
(``langgraph-saver``: the like-for-like of Eventide's event log), from ``DIR/langgraph``
(``make bench-peers --setup`` creates it). It prints per scenario and framework the median
time per node with its IQR, each peer's median over Eventide's per round, and the peak traced
memory per node; it writes every sample to ``--output`` (default
``benchmarks/results/workflow.json``).
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
FRAMEWORKS = ("eventide", "adk", "langgraph", "langgraph-saver")
SCENARIOS = {
    "chain100": "100-node chain of function nodes",
    "fan1000": "1,000-node fan-out and join",
    "pipeline3": "3 LLM agents in a chain (fake model)",
}


def python_of(framework: str, venvs: Path) -> str:
    if framework == "eventide":
        return sys.executable
    if framework == "adk":
        return os.environ.get("EVENTIDE_ADK_PYTHON", str(ROOT / ".venv-adk" / "bin" / "python"))
    return str(venvs / "langgraph" / "bin" / "python")  # with and without its checkpointer


def run_worker(framework: str, scenario: str, venvs: Path, quick: bool) -> dict[str, Any]:
    env = {**os.environ, "PYTHONPATH": f"{ROOT / 'src'}{os.pathsep}{ROOT}"}
    worker = str(ROOT / "benchmarks" / "workflow_worker.py")
    command = [python_of(framework, venvs), worker, "--framework", framework,
               "--scenario", scenario] + (["--quick"] * quick)  # fmt: skip
    done = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=900)
    lines = done.stdout.strip().splitlines()
    result: dict[str, Any] = json.loads(lines[-1]) if lines else {"error": done.stderr[-800:]}
    if "error" in result:
        raise RuntimeError(f"{framework}, {scenario}: {result['error']}")
    metrics: dict[str, Any] = result["metrics"]
    return metrics


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--venvs", default=str(ROOT / ".venv-peers"))
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--quick", action="store_true", help="few runs (a smoke run)")
    parser.add_argument("--output", default=str(ROOT / "benchmarks" / "results" / "workflow.json"))
    args = parser.parse_args(argv)
    venvs = Path(args.venvs)
    missing = [f for f in FRAMEWORKS if not Path(python_of(f, venvs)).exists()]
    if missing:
        print(
            f"no interpreter for {missing}: make .venv-adk / run make bench-peers", file=sys.stderr
        )
        return 2
    started = time.time()
    results: dict[str, Any] = {"loadavg_before": os.getloadavg(), "scenarios": {}}
    for scenario, title in SCENARIOS.items():
        rounds: dict[str, list[float]] = {f: [] for f in FRAMEWORKS}
        samples: dict[str, list[float]] = {f: [] for f in FRAMEWORKS}
        memory: dict[str, list[float]] = {f: [] for f in FRAMEWORKS}
        for r in range(args.rounds):
            turn = r % len(FRAMEWORKS)  # the order rotates from round to round
            for framework in FRAMEWORKS[turn:] + FRAMEWORKS[:turn]:
                metrics = run_worker(framework, scenario, venvs, args.quick)
                samples[framework].extend(metrics["per_node_us"])
                rounds[framework].append(statistics.median(metrics["per_node_us"]))
                memory[framework].extend(metrics["peak_kib_per_node"])
        results["scenarios"][scenario] = {"samples": samples, "rounds": rounds, "memory": memory}
        print(f"\n{title} ({args.rounds} rounds):")
        print("| framework | us/node, median [IQR] | / Eventide [min-max] | peak KiB/node |")
        print("| --- | --- | --- | --- |")
        for framework in FRAMEWORKS:
            pooled = samples[framework]
            q1, _, q3 = statistics.quantiles(pooled, n=4) if len(pooled) > 1 else (0, 0, 0)
            ratios = [a / b for a, b in zip(rounds[framework], rounds["eventide"], strict=True)]
            low, mid, high = min(ratios), statistics.median(ratios), max(ratios)
            ratio = "1" if framework == "eventide" else f"{mid:.1f}x [{low:.1f}-{high:.1f}]"
            print(f"| {framework} | {statistics.median(pooled):,.1f} [{q1:,.1f}-{q3:,.1f}] "
                  f"| {ratio} | {statistics.median(memory[framework]):,.2f} |")  # fmt: skip
    resume = run_worker("eventide", "resume1000", venvs, args.quick)["resume_ms"]
    results["resume1000_ms"] = resume
    print(f"\nEventide, resume of a crashed 1,000-node chain: median "
          f"{statistics.median(resume):.1f} ms [{min(resume):.1f}-{max(resume):.1f}] "
          f"over {len(resume)} runs")  # fmt: skip
    results["loadavg_after"] = os.getloadavg()
    results["elapsed_s"] = round(time.time() - started, 1)
    Path(args.output).parent.mkdir(parents=True, exist_ok=True)
    Path(args.output).write_text(json.dumps(results) + "\n")
    print(f"\nresults written to {args.output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
