"""Server instructions per turn, under callgrind: repeatable on a loaded machine where wall
time and CPU time are not.

Starts ``eventide api-server`` (in-memory sessions, the ``bench_server_vs_adk`` app and fake
model) under ``valgrind --tool=callgrind``, warms it up, zeroes the counters
(``callgrind_control -z``), runs C conversations of T turns at once, dumps the counters and
divides their total by the number of turns. Session creation (one per conversation) is in
the total, as in ``bench_server_vs_adk.py``::

    .venv/bin/python -m benchmarks.callgrind_server [--route run_sse|run] [--streaming]
        [--conversations 50] [--turns 4] [--keep PATH]

``--route run_sse --streaming`` is the benchmark's turn (ten partial chunks, then the answer);
``--keep`` saves the callgrind output for ``callgrind_annotate``.

``--postgres`` measures ``bench_server_vs_adk.py``'s PostgreSQL case: a private database on
``EVENTIDE_PG_URL``'s server (dropped afterwards) and two server processes, the measured one
under callgrind and a second one running normally; each conversation's turns alternate
between them, so every turn reads a session the other process wrote. Instructions per turn
are the measured process's total over the turns it served (half of them).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchmarks.bench_server_vs_adk import (
    APP,
    ROOT,
    Connection,
    _apps_dir,
    _check_stream,
    _create_database,
    _drop_database,
    _free_port,
    turn_body,
    wait_healthy,
)

# --- the load ---


async def _conversation(
    ports: list[int], index: int, turns: int, route: str, streaming: bool
) -> int:
    """One conversation; its turns alternate between ``ports`` (the session is created on
    the second one, if any); the number of turns the first port served."""
    user = f"user{index}"
    conns = [await Connection.open(port) for port in ports]
    done = 0
    try:
        status, body, _ = await conns[-1].request(
            "POST", f"/apps/{APP}/users/{user}/sessions", b"{}"
        )
        if status != 200:
            raise RuntimeError(f"create session: HTTP {status} {body[:200]!r}")
        session_id = json.loads(body)["id"]
        for turn in range(turns):
            request = turn_body(user, session_id, turn, streaming=streaming)
            conn = conns[turn % len(conns)]
            status, body, _ = await conn.request("POST", f"/{route}", request)
            if status != 200:
                raise RuntimeError(f"turn {turn}: HTTP {status} {body[:200]!r}")
            if route == "run_sse" and streaming and (problem := _check_stream(body)):
                raise RuntimeError(f"turn {turn}: {problem}")
            done += conn is conns[0]
    finally:
        for conn in conns:
            conn.close()
    return done


async def _load(
    ports: list[int], conversations: int, turns: int, route: str, streaming: bool
) -> int:
    counts = await asyncio.gather(
        *(_conversation(ports, i, turns, route, streaming) for i in range(conversations))
    )
    return sum(counts)


async def _wait_healthy(port: int, proc: subprocess.Popen[bytes], limit_s: float) -> None:
    if not await wait_healthy(port, proc, limit_s):
        raise RuntimeError(
            "the server exited" if proc.poll() is not None else "the server did not start"
        )


def _control(pid: int, flag: str, port: int) -> None:
    """Send callgrind_control a command; a request wakes the server so it is seen."""
    control = subprocess.Popen(["callgrind_control", flag, str(pid)], stdout=subprocess.DEVNULL)
    while control.poll() is None:
        asyncio.run(_poke(port))
        time.sleep(0.2)


async def _poke(port: int) -> None:
    conn = await Connection.open(port)
    try:
        await conn.request("GET", "/health", None)
    finally:
        conn.close()


def _last_dump(out_dir: Path, stem: str) -> Path:
    """The dump ``callgrind_control -d`` wrote last (``<stem>.<part>``)."""
    return max(out_dir.glob(f"{stem}.*"), key=lambda p: int(p.name.rsplit(".", 1)[1]))


def _total(dump: Path) -> int:
    text = dump.read_text(errors="replace")
    match = re.search(r"^(?:summary|totals): (\d+)", text, re.MULTILINE)
    if match is None:
        raise RuntimeError(f"no total in {dump}")
    return int(match.group(1))


def measure(args: argparse.Namespace) -> dict[str, object]:
    database: tuple[str, str] | None = None
    session_db = "memory:"
    if args.postgres:
        admin, name, session_db = asyncio.run(_create_database())
        database = (admin, name)
    try:
        return _measure(args, session_db)
    finally:
        if database is not None:
            asyncio.run(_drop_database(*database))


def _start_plain(
    apps: Path, session_db: str, env: dict[str, str], log: Path
) -> tuple[subprocess.Popen[bytes], int]:
    """The second server process (PostgreSQL only), not under callgrind."""
    port = _free_port()
    command = [sys.executable, "-m", "eventide.cli", "api-server", str(apps), "--port", str(port)]
    command += ["--session-db", session_db, "--log-level", "warning"]
    with log.open("wb") as out:
        proc = subprocess.Popen(command, cwd=apps, env=env, stdout=out, stderr=subprocess.STDOUT)
    return proc, port


def _measure(args: argparse.Namespace, session_db: str) -> dict[str, object]:
    with tempfile.TemporaryDirectory(prefix="eventide-cg-server-") as tmp:
        folder = Path(tmp)
        apps = _apps_dir(folder)
        port = _free_port()
        stem = "callgrind.out"
        command = [
            "valgrind",
            "--tool=callgrind",
            f"--callgrind-out-file={folder / stem}",
            sys.executable,
            "-m",
            "eventide.cli",
            "api-server",
            str(apps),
            "--port",
            str(port),
            "--session-db",
            session_db,
            "--log-level",
            "warning",
        ]
        env = {
            **os.environ,
            "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
            "EVENTIDE_BENCH_FRAMEWORK": "eventide",
            "PYTHONWARNINGS": "ignore",
        }
        log = (folder / "server.log").open("wb")
        proc = subprocess.Popen(command, cwd=apps, env=env, stdout=log, stderr=subprocess.STDOUT)
        others: list[subprocess.Popen[bytes]] = []
        try:
            asyncio.run(_wait_healthy(port, proc, 600))
            ports = [port]
            if args.postgres:  # started once the first has created the tables
                other, other_port = _start_plain(apps, session_db, env, folder / "other.log")
                others.append(other)
                asyncio.run(_wait_healthy(other_port, other, 120))
                ports.append(other_port)
            asyncio.run(_load(ports, args.conversations, 2, args.route, args.streaming))
            _control(proc.pid, "-z", port)
            turns = asyncio.run(
                _load(ports, args.conversations, args.turns, args.route, args.streaming)
            )
            _control(proc.pid, "-d", port)
            total = _total(_last_dump(folder, stem))
        finally:
            for server in [proc, *others]:
                server.send_signal(signal.SIGINT)
            for server in [proc, *others]:
                try:
                    server.wait(timeout=120)
                except subprocess.TimeoutExpired:
                    server.kill()
                    server.wait()
            log.close()
        if args.keep:
            shutil.copy(_last_dump(folder, stem), args.keep)
    return {
        "session_db": "postgresql, 2 processes" if args.postgres else "memory",
        "route": args.route,
        "streaming": args.streaming,
        "conversations": args.conversations,
        "turns": turns,
        "instructions": total,
        "instructions_per_turn": round(total / turns),
        "loadavg_1min": round(os.getloadavg()[0], 2),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--route", choices=("run_sse", "run"), default="run_sse")
    parser.add_argument("--streaming", action="store_true", help="ask for partial chunks")
    parser.add_argument("--conversations", type=int, default=50)
    parser.add_argument("--turns", type=int, default=4)
    parser.add_argument("--keep", help="copy the measured callgrind output here")
    parser.add_argument(
        "--postgres",
        action="store_true",
        help="two processes on one PostgreSQL database (EVENTIDE_PG_URL), as the benchmark",
    )
    args = parser.parse_args(argv)
    result = measure(args)
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
