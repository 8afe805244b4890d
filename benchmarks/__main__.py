"""``python -m benchmarks``: run the scenarios for Eventide and google-adk, side by side.

Each round of a scenario starts one fresh worker process per framework (the order alternates
between rounds); the table gives pooled medians with their interquartile range, and the
google-adk/Eventide ratio as the median of per-round ratios (min-max across rounds). Results
go to ``benchmarks/results/latest.json``. See ``benchmarks/README.md`` for the method.
"""

from __future__ import annotations

import argparse
import datetime
import importlib.metadata
import importlib.util
import json
import os
import platform
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from benchmarks.scenarios import SCENARIOS, Scenario
from benchmarks.stats import pairwise_ratio, summarize

ROOT = Path(__file__).resolve().parent
DEFAULT_OUTPUT = ROOT / "results" / "latest.json"
WORKER_TIMEOUT_S = 600
# Standalone scripts other engineers own; folded into the results when present.
EXTRA_SCRIPTS = (
    "bench_sql_sessions.py",
    "bench_connectors.py",
    "bench_server.py",
    "bench_parallel.py",
    "bench_durable.py",
    "bench_dbos.py",
)
EXTRA_ROWS_PER_SCRIPT = 30
# Scenarios whose --quick size differs from the goal's (100 sessions, 60 turns).
QUICK_RESIZED = ("6", "7")


def main(argv: list[str] | None = None) -> int:
    """Run the selected scenarios; print the table; write the JSON results."""
    args = _parse(argv)
    frameworks = ["eventide"]
    notes: list[str] = []
    if not args.no_adk:
        if importlib.util.find_spec("google.adk") is None:
            notes.append("google-adk is not installed (pip install -e '.[bench]'): Eventide only.")
        else:
            frameworks.append("adk")
    selected = sorted(args.only) if args.only else sorted(SCENARIOS)
    started = time.perf_counter()
    results: dict[str, Any] = {
        "meta": _meta(args, frameworks),
        "scenarios": {},
    }
    for number in selected:
        scenario = SCENARIOS[number]
        _log(f"scenario {number}: {scenario.title}")
        scenario_started = time.perf_counter()
        outcome = _run_scenario(scenario, frameworks, args.quick)
        outcome["elapsed_s"] = round(time.perf_counter() - scenario_started, 1)
        results["scenarios"][str(number)] = outcome
    if not args.only and not args.no_extra:
        results["extra"] = _run_extra_scripts(args.quick)
    results["meta"]["elapsed_s"] = round(time.perf_counter() - started, 1)
    results["meta"]["loadavg_after"] = _loadavg()
    results["meta"]["notes"] = notes
    output = Path(args.output)
    output.parent.mkdir(parents=True, exist_ok=True)
    output.write_text(json.dumps(results, indent=1) + "\n")
    print(render_table(results))
    if results.get("extra"):
        print()
        print(render_extra(results["extra"]))
    for note in notes:
        print(note)
    print(f"results written to {output}")
    failed = [
        f"scenario {n}: {fw}: {err}"
        for n, s in results["scenarios"].items()
        for fw, err in s["errors"].items()
    ]
    for line in failed:
        print("ERROR", line, file=sys.stderr)
    return 1 if failed else 0


def _parse(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m benchmarks", description=__doc__)
    parser.add_argument("--quick", action="store_true", help="few repetitions (smoke test)")
    parser.add_argument(
        "--only",
        type=lambda text: [int(n) for n in text.split(",") if n.strip()],
        help="comma-separated scenario numbers, e.g. 2,5",
    )
    parser.add_argument("--no-adk", action="store_true", help="measure Eventide only")
    parser.add_argument(
        "--no-extra",
        action="store_true",
        help="skip the standalone bench_*.py scripts (run only without --only)",
    )
    parser.add_argument("--output", default=str(DEFAULT_OUTPUT), help="where to write the JSON")
    args = parser.parse_args(argv)
    unknown = [n for n in args.only or () if n not in SCENARIOS]
    if unknown:
        parser.error(f"unknown scenario(s) {unknown}; choose from {sorted(SCENARIOS)}")
    return args


def _run_scenario(scenario: Scenario, frameworks: list[str], quick: bool) -> dict[str, Any]:
    params = scenario.quick if quick else scenario.full
    rounds: dict[str, list[dict[str, list[float]]]] = {fw: [] for fw in frameworks}
    skipped: dict[str, dict[str, str]] = {fw: {} for fw in frameworks}
    errors: dict[str, str] = {}
    info: dict[str, Any] = {}
    for round_index in range(params["rounds"]):
        order = frameworks if round_index % 2 == 0 else frameworks[::-1]
        for framework in order:
            if framework in errors:
                continue
            if scenario.number == 1:
                out = _cold_import(framework)
            else:
                out = _worker(framework, scenario.number, quick)
            if "error" in out:
                errors[framework] = out["error"]
                _log(f"  {framework}: ERROR {out['error']}")
                continue
            rounds[framework].append(out["metrics"])
            skipped[framework].update(out.get("skipped", {}))
            info.update(out.get("info", {}))
    if scenario.number == 1:
        # The first interpreter of each side may compile bytecode: a warm-up, discarded.
        rounds = {fw: r[1:] if len(r) > 1 else r for fw, r in rounds.items()}
    metrics: dict[str, Any] = {}
    for metric in scenario.metrics:
        entry: dict[str, Any] = {"unit": metric.unit, "title": metric.title}
        if metric.goal is not None:
            entry["goal"] = metric.goal
        if metric.adk_reference is not None:
            entry["adk_reference"] = metric.adk_reference
            if metric.goal and metric.unit != "x":  # a growth factor is load-proof already
                # The goal restated as "this many times better than google-adk": on a busy
                # machine both sides slow down, so this verdict holds where the absolute
                # one cannot.
                entry["goal_ratio"] = metric.adk_reference / metric.goal
        per_round: dict[str, list[list[float]]] = {}
        for framework in frameworks:
            samples_by_round = [r[metric.name] for r in rounds[framework] if metric.name in r]
            per_round[framework] = samples_by_round
            pooled = [x for samples in samples_by_round for x in samples]
            if pooled:
                entry[framework] = {**summarize(pooled), "samples": _rounded(pooled)}
            elif metric.name in skipped[framework]:
                entry[framework] = {"skipped": skipped[framework][metric.name]}
        if "eventide" in per_round and "adk" in per_round:
            ratio = pairwise_ratio(per_round["eventide"], per_round["adk"])
            if ratio is not None:
                entry["ratio_adk_over_eventide"] = ratio
        metrics[metric.name] = entry
        _log(f"  {metric.name}: {_brief(entry, frameworks)}")
    return {
        "title": scenario.title,
        "params": params,
        "info": info,
        "metrics": metrics,
        "errors": errors,
    }


def _worker(framework: str, number: int, quick: bool) -> dict[str, Any]:
    command = [sys.executable, "-m", "benchmarks.worker", "--framework", framework]
    command += ["--scenario", str(number)] + (["--quick"] if quick else [])
    return _run_json(command)


def _cold_import(framework: str) -> dict[str, Any]:
    start = time.perf_counter()
    out = _run_json([sys.executable, "-m", "benchmarks.cold_import", framework])
    if "error" not in out:
        process_ms = (time.perf_counter() - start) * 1e3
        out = {"metrics": {name: [value] for name, value in out.items()}}
        out["metrics"]["process_ms"] = [process_ms]
    return out


def _run_json(command: list[str]) -> dict[str, Any]:
    env = _worker_env()
    try:
        done = subprocess.run(
            command,
            capture_output=True,
            text=True,
            timeout=WORKER_TIMEOUT_S,
            cwd=ROOT.parent,
            env=env,
            check=False,
        )
    except subprocess.TimeoutExpired:
        return {"error": f"timed out after {WORKER_TIMEOUT_S} s: {' '.join(command)}"}
    lines = done.stdout.strip().splitlines()
    if done.returncode != 0 or not lines:
        tail = done.stderr.strip().splitlines()[-5:]
        return {"error": f"exit code {done.returncode}: {' | '.join(tail)}"}
    try:
        result: dict[str, Any] = json.loads(lines[-1])
    except json.JSONDecodeError:
        return {"error": f"no JSON result; last line: {lines[-1][:200]!r}"}
    if "error" in result:
        tail = done.stderr.strip().splitlines()[-3:]
        result["error"] += " | " + " | ".join(tail)
    return result


def _worker_env() -> dict[str, str]:
    """The environment of the measured processes.

    Bytecode caching is left on even when the caller's shell turns it off
    (PYTHONDONTWRITEBYTECODE): pip compiled google-adk's modules at install, while an
    editable Eventide would otherwise recompile its source in every cold import. The
    discarded warm-up round writes the caches, as any installed package has them.
    """
    env = {**os.environ, "PYTHONPATH": _pythonpath()}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def _pythonpath() -> str:
    parts = [str(ROOT.parent)]
    if os.environ.get("PYTHONPATH"):
        parts.append(os.environ["PYTHONPATH"])
    return os.pathsep.join(parts)


def _run_extra_scripts(quick: bool) -> dict[str, Any]:
    """Run the other engineers' standalone scripts (with ``--json`` and ``--quick`` when
    they support them)."""
    extra: dict[str, Any] = {}
    for name in EXTRA_SCRIPTS:
        path = ROOT / name
        if not path.exists():
            continue
        _log(f"extra: {name}")
        command = [sys.executable, str(path)]
        source = path.read_text()
        if "--json" in source:
            command.append("--json")
        if quick and "--quick" in source:
            command.append("--quick")
        env = _worker_env()
        try:
            done = subprocess.run(
                command,
                capture_output=True,
                text=True,
                timeout=WORKER_TIMEOUT_S,
                cwd=ROOT.parent,
                env=env,
                check=False,
            )
        except subprocess.TimeoutExpired:
            extra[name] = {"error": f"timed out after {WORKER_TIMEOUT_S} s"}
            continue
        entry: dict[str, Any] = {"exit_code": done.returncode}
        parsed = _last_json(done.stdout)
        if parsed is None:
            entry["output"] = done.stdout[-4000:]
        else:
            entry["json"] = parsed
        if done.returncode != 0:
            entry["stderr"] = done.stderr[-2000:]
        _log(f"  exit code {done.returncode}")
        extra[name] = entry
    return extra


def _last_json(stdout: str) -> Any:
    """The script's JSON output: all of stdout, or else its last line that parses."""
    try:
        return json.loads(stdout)
    except json.JSONDecodeError:
        pass
    for line in reversed(stdout.strip().splitlines()):
        try:
            return json.loads(line)
        except json.JSONDecodeError:
            continue
    return None


def _flatten(value: Any, prefix: str = "") -> list[tuple[str, Any]]:
    """Leaf numbers and short strings of a JSON document, with their dotted paths."""
    if isinstance(value, dict):
        rows = []
        for key, item in value.items():
            rows += _flatten(item, f"{prefix}.{key}" if prefix else str(key))
        return rows
    if isinstance(value, list):
        if all(isinstance(x, int | float) for x in value) and len(value) > 3:
            return []  # raw samples: in the JSON file, not in the table
        rows = []
        for index, item in enumerate(value):
            rows += _flatten(item, f"{prefix}[{index}]")
        return rows
    if isinstance(value, bool) or value is None:
        return [(prefix, value)]
    if isinstance(value, int | float):
        return [(prefix, _fmt(float(value)) if isinstance(value, float) else value)]
    if isinstance(value, str) and len(value) <= 80:
        return [(prefix, value)]
    return []


def render_extra(extra: dict[str, Any]) -> str:
    """The standalone scripts' figures, as a second table (first rows of each)."""
    lines = ["| script | figure | value |", "| --- | --- | --- |"]
    for name, entry in extra.items():
        if "json" not in entry:
            status = f"exit code {entry['exit_code']}, no JSON output"
            lines.append(f"| {name} | (no figures) | {status} |")
            continue
        rows = _flatten(entry["json"])
        for path, value in rows[:EXTRA_ROWS_PER_SCRIPT]:
            lines.append(f"| {name} | {path} | {value} |")
        if len(rows) > EXTRA_ROWS_PER_SCRIPT:
            more = len(rows) - EXTRA_ROWS_PER_SCRIPT
            lines.append(f"| {name} | ... {more} more in the JSON file | |")
    return "\n".join(lines)


def _meta(args: argparse.Namespace, frameworks: list[str]) -> dict[str, Any]:
    versions = {}
    for dist in ("eventide", "google-adk", "pydantic"):
        try:
            versions[dist] = importlib.metadata.version(dist)
        except importlib.metadata.PackageNotFoundError:
            versions[dist] = None
    return {
        "date": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        "git_commit": _git_commit(),
        "python": platform.python_version(),
        "platform": platform.platform(),
        "cpus": os.cpu_count(),
        "loadavg_before": _loadavg(),
        "quick": args.quick,
        "frameworks": frameworks,
        "versions": versions,
    }


def _git_commit() -> str | None:
    try:
        done = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"],
            capture_output=True,
            text=True,
            cwd=ROOT.parent,
            check=False,
        )
    except OSError:
        return None
    return done.stdout.strip() or None


def _loadavg() -> list[float] | None:
    try:
        return [round(x, 2) for x in os.getloadavg()]
    except OSError:
        return None


def _rounded(values: list[float]) -> list[float]:
    return [round(v, 3) for v in values]


def _log(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


def _brief(entry: dict[str, Any], frameworks: list[str]) -> str:
    parts = []
    for framework in frameworks:
        side = entry.get(framework, {})
        if "median" in side:
            parts.append(f"{framework} {_fmt(side['median'])} {entry['unit']}")
        elif "skipped" in side:
            parts.append(f"{framework} skipped")
    ratio = entry.get("ratio_adk_over_eventide")
    if ratio:
        parts.append(f"ratio {ratio['median']:.1f}x")
    return ", ".join(parts) or "no data"


def _fmt(value: float) -> str:
    if value >= 100:
        return f"{value:,.0f}"
    if value >= 10:
        return f"{value:.1f}"
    return f"{value:.2f}"


def render_table(results: dict[str, Any]) -> str:
    """The results as a Markdown table (medians [IQR], ratios [min-max over rounds])."""
    frameworks = results["meta"]["frameworks"]
    header = ["#", "metric", "Eventide median [IQR]"]
    if "adk" in frameworks:
        header += ["google-adk median [IQR]", "adk/Eventide [rounds min-max]"]
    header += ["Eventide goal"]
    if "adk" in frameworks:
        header += ["goal as adk/Eventide ratio"]
    lines = ["| " + " | ".join(header) + " |", "|" + " --- |" * len(header)]
    for number, scenario in results["scenarios"].items():
        for entry in scenario["metrics"].values():
            unit = entry["unit"]
            row = [number, entry["title"], _cell(entry.get("eventide"), unit)]
            if "adk" in frameworks:
                row.append(_cell(entry.get("adk"), unit))
                ratio = entry.get("ratio_adk_over_eventide")
                row.append(
                    f"{ratio['median']:.1f}x [{ratio['min']:.1f}-{ratio['max']:.1f}]"
                    if ratio
                    else "-"
                )
            if results["meta"]["quick"] and number in QUICK_RESIZED:
                row.append("n/a (--quick runs a smaller size)")
                if "adk" in frameworks:
                    row.append("")
            else:
                row.append(_goal(entry))
                if "adk" in frameworks:
                    row.append(_goal_ratio(entry))
            lines.append("| " + " | ".join(str(c) for c in row) + " |")
        for framework, error in scenario["errors"].items():
            lines.append(f"| {number} | ERROR ({framework}): {error[:150]} |")
    return "\n".join(lines)


def _cell(side: dict[str, Any] | None, unit: str) -> str:
    if not side:
        return "-"
    if "skipped" in side:
        return "skipped"
    return f"{_fmt(side['median'])} {unit} [{_fmt(side['q1'])}-{_fmt(side['q3'])}]"


def _goal_ratio(entry: dict[str, Any]) -> str:
    goal_ratio = entry.get("goal_ratio")
    if goal_ratio is None:
        return ""
    ratio = entry.get("ratio_adk_over_eventide")
    if ratio is None:
        return f"> {goal_ratio:.1f}x"
    verdict = "met" if ratio["median"] > goal_ratio else "NOT met"
    return f"> {goal_ratio:.1f}x: {verdict}"


def _goal(entry: dict[str, Any]) -> str:
    goal = entry.get("goal")
    if goal is None:
        return ""
    side = entry.get("eventide") or {}
    if "median" not in side:
        return f"< {_fmt(goal)} {entry['unit']}"
    verdict = "met" if side["median"] < goal else "NOT met"
    return f"< {_fmt(goal)} {entry['unit']}: {verdict}"


if __name__ == "__main__":
    sys.exit(main())
