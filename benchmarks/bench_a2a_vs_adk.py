"""The A2A round trip, Eventide's A2A server side by side with google-adk 2.13's, in one run.

Usage: python benchmarks/bench_a2a_vs_adk.py [--clients N] [--requests N] [--quick]
       [--no-adk] [--adk-python PATH] [--output PATH] [--json]

A round trip: a client sends ``SendMessage`` (A2A 1.0 JSON-RPC, ``A2A-Version: 1.0``,
blocking, no context: a new conversation each time) -> the server -> an ``LlmAgent`` on the
fake model (``bench-text``) -> the answer, returned as the completed task. Every answer is
checked (state ``TASK_STATE_COMPLETED``, the model's text in an artifact), so neither side
can look fast by doing less.

Each side is its own server process on 127.0.0.1 (``benchmarks/a2a_bench_server.py``: each
framework's ``to_a2a`` on uvicorn, in-memory services), started, warmed up (one request per
client), loaded by N concurrent clients (default 50) each sending R requests (default 40)
on its own keep-alive connection, then stopped; Eventide first, then google-adk, then the
two again in the other order, and the figures are the median of the rounds. The load
generator is the small asyncio HTTP/1.1 client of ``bench_server_vs_adk``.

Reported per side: round trips per second, latency p50/p99, errors, server CPU per round
trip, peak RSS; and Eventide's throughput over google-adk's.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # run as a script: the benchmarks package is importable
    sys.path.insert(0, str(ROOT))

from benchmarks.bench_server_vs_adk import (  # noqa: E402
    Connection,
    _adk_python,
    _cpu_seconds,
    _free_port,
    _pct,
    _peak_rss_mb,
)
from benchmarks.fake_model import ANSWER  # noqa: E402

CARD = "/.well-known/agent-card.json"


class A2aConnection(Connection):
    """A keep-alive connection that sends A2A 1.0's version header."""

    async def _exchange(
        self, method: str, path: str, body: bytes | None
    ) -> tuple[int, bytes, float]:
        head = f"{method} {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nA2A-Version: 1.0\r\n"
        if body is not None:
            head += f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n"
        answer = self.protocol.expect()
        if not self.protocol.closed:
            self.transport.write(head.encode() + b"\r\n" + (body or b""))
        return await answer


def _body(client: int, index: int) -> bytes:
    message = {
        "messageId": f"m-{client}-{index}",
        "role": "ROLE_USER",
        "parts": [{"text": "What is the weather in Paris?"}],
    }
    request = {
        "jsonrpc": "2.0",
        "id": index,
        "method": "SendMessage",
        "params": {"message": message},
    }
    return json.dumps(request).encode()


def _check(status: int, body: bytes) -> str | None:
    """None for a completed task holding the answer, else what is wrong."""
    if status != 200:
        return f"HTTP {status}"
    try:
        task = json.loads(body)["result"]["task"]
    except (ValueError, KeyError, TypeError):
        return f"not a task: {body[:200]!r}"
    if task["status"]["state"] != "TASK_STATE_COMPLETED":
        return f"state {task['status']['state']}"
    texts = [p.get("text") for a in task.get("artifacts", []) for p in a["parts"]]
    return None if ANSWER in texts else f"answer missing: {texts}"


@dataclass
class _Tally:
    latencies: list[float] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)


async def _client(port: int, index: int, requests: int, warm: bool, tally: _Tally) -> None:
    connection = await A2aConnection.open(port)
    try:
        for n in range(1 if warm else requests):
            started = time.perf_counter()
            status, body, _ = await connection.request("POST", "/", _body(index, n))
            if not warm:
                tally.latencies.append(time.perf_counter() - started)
            problem = _check(status, body)
            if problem is not None:
                tally.errors.append(problem)
    finally:
        connection.close()


async def _wait_card(port: int, proc: subprocess.Popen[bytes], limit_s: float = 120) -> None:
    deadline = time.monotonic() + limit_s
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            break
        try:
            connection = await A2aConnection.open(port)
            try:
                status, _, _ = await connection.request("GET", CARD, None)
            finally:
                connection.close()
            if status == 200:
                return
        except OSError:
            pass
        await asyncio.sleep(0.2)
    raise RuntimeError("the server did not start")


def _spawn(command: list[str], env: dict[str, str], log: Any) -> subprocess.Popen[bytes]:
    return subprocess.Popen(command, cwd=ROOT, env=env, stdout=log, stderr=log)


async def _side(framework: str, python: str, clients: int, requests: int) -> dict[str, Any]:
    port = _free_port()
    paths = [str(ROOT)] if framework == "adk" else [str(ROOT / "src"), str(ROOT)]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(paths), "PYTHONWARNINGS": "ignore"}
    with tempfile.TemporaryFile() as log:
        command = [python, "-m", "benchmarks.a2a_bench_server", framework, str(port)]
        proc = _spawn(command, env, log)
        try:
            try:
                await _wait_card(port, proc)
            except RuntimeError:
                log.seek(0)
                raise RuntimeError(f"{framework}: {log.read().decode()[-2000:]}") from None
            warm = _Tally()
            await asyncio.gather(*(_client(port, i, 1, True, warm) for i in range(clients)))
            tally = _Tally()
            cpu_before = _cpu_seconds(proc.pid) or 0.0
            started = time.perf_counter()
            await asyncio.gather(
                *(_client(port, i, requests, False, tally) for i in range(clients))
            )
            wall = time.perf_counter() - started
            cpu = (_cpu_seconds(proc.pid) or 0.0) - cpu_before
            done = len(tally.latencies)
            return {
                "framework": framework,
                "round_trips": done,
                "per_second": round(done / wall, 1),
                "p50_ms": round(_pct(tally.latencies, 0.5) * 1000, 2),
                "p99_ms": round(_pct(tally.latencies, 0.99) * 1000, 2),
                "errors": len(tally.errors) + len(warm.errors),
                "first_error": next(iter(tally.errors + warm.errors), None),
                "server_cpu_ms_per_round_trip": round(cpu / max(done, 1) * 1000, 3),
                "peak_rss_mb": _peak_rss_mb(proc.pid),
            }
        finally:
            proc.terminate()
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


def run(args: argparse.Namespace) -> dict[str, Any]:
    adk = None if args.no_adk else _adk_python(args.adk_python)
    order = ["eventide", "adk"] if adk else ["eventide"]
    samples: dict[str, list[dict[str, Any]]] = {name: [] for name in order}
    for round_number in range(args.rounds):
        sides = order if round_number % 2 == 0 else list(reversed(order))
        for framework in sides:
            python = adk if framework == "adk" else sys.executable
            assert python is not None
            result = asyncio.run(_side(framework, python, args.clients, args.requests))
            print(f"[bench_a2a_vs_adk] round {round_number + 1}: {result}", file=sys.stderr)
            samples[framework].append(result)
    summary: dict[str, Any] = {
        "clients": args.clients,
        "requests_per_client": args.requests,
        "rounds": args.rounds,
        "samples": samples,
    }
    for framework, runs in samples.items():
        summary[framework] = {
            key: round(statistics.median(r[key] for r in runs), 2)
            for key in ("per_second", "p50_ms", "p99_ms", "server_cpu_ms_per_round_trip")
        } | {"errors": sum(r["errors"] for r in runs)}
    if "adk" in summary:
        summary["throughput_ratio"] = round(
            summary["eventide"]["per_second"] / summary["adk"]["per_second"], 2
        )
    return summary


def render(summary: dict[str, Any]) -> str:
    lines = [
        f"A2A round trips, {summary['clients']} concurrent clients x "
        f"{summary['requests_per_client']} requests, median of {summary['rounds']} rounds",
        "",
        "| server | round trips/s | p50 ms | p99 ms | server CPU ms/trip | errors |",
        "| --- | ---: | ---: | ---: | ---: | ---: |",
    ]
    for framework in ("eventide", "adk"):
        if framework in summary:
            row = summary[framework]
            lines.append(
                f"| {framework} | {row['per_second']} | {row['p50_ms']} | {row['p99_ms']} | "
                f"{row['server_cpu_ms_per_round_trip']} | {row['errors']} |"
            )
    if "throughput_ratio" in summary:
        lines += ["", f"Eventide / google-adk throughput: {summary['throughput_ratio']}x"]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--clients", type=int, default=50)
    parser.add_argument("--requests", type=int, default=40, help="per client")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--quick", action="store_true", help="5 clients x 3 requests, 1 round")
    parser.add_argument("--no-adk", action="store_true", help="Eventide only")
    parser.add_argument("--adk-python", help="the interpreter that has google-adk[a2a]")
    parser.add_argument("--output", help="also write the JSON results to this file")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    args = parser.parse_args(argv)
    if args.quick:
        args.clients, args.requests, args.rounds = 5, 3, 1
    summary = run(args)
    if args.output:
        Path(args.output).write_text(json.dumps(summary, indent=1) + "\n")
    print(json.dumps({"a2a_vs_adk": summary}) if args.json else render(summary))
    return 1 if summary["eventide"]["errors"] else 0


if __name__ == "__main__":
    sys.exit(main())
