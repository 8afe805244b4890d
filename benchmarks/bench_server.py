"""HTTP server load: many concurrent SSE conversations against a scripted model.

Usage: python benchmarks/bench_server.py [--json] [--quick] [--conversations N] [--turns N]
       [--sessions memory|sqlite]

Starts the API server (``eventide.server.create_app`` + uvicorn) in a subprocess on
127.0.0.1, then opens N conversations at once (default 200), each a session running T turns
(default 5) of ``POST /run_sse`` with ``streaming: true``. The app is an ``LlmAgent`` whose
model is ``eventide.testing.FunctionModel``: every answer is ~200 characters streamed as
10 partial chunks plus the final event, so the figures are the server's and runtime's own
cost (HTTP, JSON, SSE framing, the event loop, session commits), not a model's.

Reported: turns per second over the whole run (wall clock, all conversations), turn latency
(request sent to last SSE frame read) p50/p99, time to the first frame p50/p99, frames per
second, and errors (HTTP errors, error frames, malformed or missing final events): the run
fails unless there are none. Client and server share the machine (loopback only).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

ANSWER_CHARS = 200
CHUNK = 20


# --- the server side (run in a subprocess with --serve) ---


def _serve(sessions: str, db_dir: str) -> None:
    from eventide import LlmAgent
    from eventide.apps import App
    from eventide.apps.services import build_services
    from eventide.models.llm_request import LlmRequest
    from eventide.server import create_app, serve
    from eventide.testing import FunctionModel

    def answer(request: LlmRequest) -> str:
        last = request.contents[-1].text or "" if request.contents else ""
        text = f"You said {last!r}. "
        return (text * (ANSWER_CHARS // len(text) + 1))[:ANSWER_CHARS]

    agent = LlmAgent(
        name="bench_agent",
        model=FunctionModel(function=answer, stream_chunk_size=CHUNK),
        instruction="Answer briefly.",
    )
    session_db = "memory:" if sessions == "memory" else f"sqlite:///{db_dir}/sessions.db"
    services = build_services(session_db=session_db, artifact_root="memory:", base_dir=db_dir)
    api = create_app(apps={"bench": App(name="bench", root_agent=agent)}, services=services)
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    print(json.dumps({"port": sock.getsockname()[1]}), flush=True)
    serve(api, sock=sock, log_level="warning", graceful_shutdown_timeout=5)


# --- the client side ---


class Stats:
    def __init__(self) -> None:
        self.latencies: list[float] = []
        self.first_frame: list[float] = []
        self.frames = 0
        self.errors: list[str] = []


async def _turn(client: Any, body: dict[str, Any], stats: Stats) -> None:
    started = time.perf_counter()
    first: float | None = None
    frames: list[dict[str, Any]] = []
    async with client.stream("POST", "/run_sse", json=body) as response:
        if response.status_code != 200:
            stats.errors.append(f"HTTP {response.status_code}: {(await response.aread())[:200]!r}")
            return
        async for line in response.aiter_lines():
            if line.startswith("data:"):
                if first is None:
                    first = time.perf_counter() - started
                frames.append(json.loads(line[5:]))
    elapsed = time.perf_counter() - started
    stats.frames += len(frames)
    final = frames[-1] if frames else {}
    if "errorCode" in final or final.get("partial") or not final.get("content"):
        stats.errors.append(f"bad last frame: {json.dumps(final)[:200]}")
        return
    if len(frames) != ANSWER_CHARS // CHUNK + 1:
        stats.errors.append(f"expected {ANSWER_CHARS // CHUNK + 1} frames, got {len(frames)}")
        return
    stats.latencies.append(elapsed)
    stats.first_frame.append(first or elapsed)


async def _conversation(client: Any, index: int, turns: int, stats: Stats) -> None:
    user = f"user{index}"
    created = await client.post(f"/apps/bench/users/{user}/sessions")
    if created.status_code != 200:
        stats.errors.append(f"create session: HTTP {created.status_code}")
        return
    sid = created.json()["id"]
    for turn in range(turns):
        body = {
            "app_name": "bench",
            "user_id": user,
            "session_id": sid,
            "new_message": {"role": "user", "parts": [{"text": f"message {turn}"}]},
            "streaming": True,
        }
        try:
            await _turn(client, body, stats)
        except Exception as exc:  # a benchmark reports every failure, whatever its type
            stats.errors.append(f"{type(exc).__name__}: {exc}")


def _cpu_seconds(pid: int) -> float | None:
    """User + system CPU time of a process (Linux ``/proc``), or None elsewhere."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _pct(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


async def _load(url: str, conversations: int, turns: int, server_pid: int) -> dict[str, Any]:
    import httpx

    limits = httpx.Limits(
        max_connections=conversations + 10, max_keepalive_connections=conversations
    )
    async with httpx.AsyncClient(base_url=url, timeout=120, limits=limits) as client:
        # Warm-up: one conversation, so imports and the Runner are built before the clock.
        await _conversation(client, -1, 1, Stats())
        stats = Stats()
        cpu_before = _cpu_seconds(server_pid)
        client_cpu_before = time.process_time()
        started = time.perf_counter()
        await asyncio.gather(
            *(_conversation(client, i, turns, stats) for i in range(conversations))
        )
        wall = time.perf_counter() - started
        cpu_after = _cpu_seconds(server_pid)
        client_cpu = time.process_time() - client_cpu_before
    server_cpu = None if cpu_before is None or cpu_after is None else cpu_after - cpu_before
    ms = 1000.0
    return {
        "conversations": conversations,
        "turns_per_conversation": turns,
        "turns_ok": len(stats.latencies),
        "errors": len(stats.errors),
        "error_samples": stats.errors[:5],
        "wall_s": round(wall, 3),
        "turns_per_s": round(len(stats.latencies) / wall, 1),
        "frames_per_s": round(stats.frames / wall, 1),
        "turn_latency_ms": {
            "p50": round(_pct(stats.latencies, 0.50) * ms, 1),
            "p99": round(_pct(stats.latencies, 0.99) * ms, 1),
            "mean": round(statistics.fmean(stats.latencies) * ms, 1) if stats.latencies else None,
        },
        # The server's own CPU per turn (sessions created during the run included): unlike
        # the latencies, it does not depend on how busy the rest of the machine is.
        "server_cpu_ms_per_turn": (
            round(server_cpu * ms / len(stats.latencies), 2)
            if server_cpu is not None and stats.latencies
            else None
        ),
        # The load generator's CPU per turn (httpx, SSE parsing): on a shared machine the
        # client, not the server, is usually what limits turns/s.
        "client_cpu_ms_per_turn": (
            round(client_cpu * ms / len(stats.latencies), 2) if stats.latencies else None
        ),
        "loadavg_1min": os.getloadavg()[0],
        "first_frame_ms": {
            "p50": round(_pct(stats.first_frame, 0.50) * ms, 1),
            "p99": round(_pct(stats.first_frame, 0.99) * ms, 1),
        },
    }


def _run(args: argparse.Namespace) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="eventide-bench-server-") as db_dir:
        env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
        server = subprocess.Popen(
            [sys.executable, __file__, "--serve", "--sessions", args.sessions, "--db-dir", db_dir],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )
        try:
            assert server.stdout is not None
            line = server.stdout.readline()
            if not line:
                raise RuntimeError(f"server failed to start: {server.communicate()[1]}")
            url = f"http://127.0.0.1:{json.loads(line)['port']}"
            result = asyncio.run(_load(url, args.conversations, args.turns, server.pid))
        finally:
            server.terminate()
            try:
                _, err = server.communicate(timeout=30)
            except subprocess.TimeoutExpired:
                server.kill()
                _, err = server.communicate()
        result["sessions"] = args.sessions
        result["server_stderr_tail"] = err.strip().splitlines()[-3:] if err.strip() else []
        return result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--quick", action="store_true", help="20 conversations x 2 turns")
    parser.add_argument("--conversations", type=int, default=200)
    parser.add_argument("--turns", type=int, default=5)
    parser.add_argument("--sessions", choices=("memory", "sqlite"), default="memory")
    parser.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--db-dir", default="", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        _serve(args.sessions, args.db_dir)
        return 0
    if args.quick:
        args.conversations, args.turns = 20, 2
    result = _run(args)
    if args.json:
        print(json.dumps({"server_sse_load": result}))
    else:
        lat, first = result["turn_latency_ms"], result["first_frame_ms"]
        print(
            f"{result['conversations']} concurrent SSE conversations x "
            f"{result['turns_per_conversation']} turns ({result['sessions']} sessions)\n"
            f"  turns ok {result['turns_ok']}, errors {result['errors']}, "
            f"wall {result['wall_s']} s\n"
            f"  {result['turns_per_s']} turns/s, {result['frames_per_s']} SSE frames/s\n"
            f"  turn latency p50 {lat['p50']} ms, p99 {lat['p99']} ms\n"
            f"  first frame  p50 {first['p50']} ms, p99 {first['p99']} ms\n"
            f"  CPU per turn: server {result['server_cpu_ms_per_turn']} ms, "
            f"client {result['client_cpu_ms_per_turn']} ms; "
            f"load average {result['loadavg_1min']:.1f} at the end"
        )
        for sample in result["error_samples"]:
            print(f"  error: {sample}")
    return 0 if result["errors"] == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
