"""The HTTP server under load, Eventide's ``eventide api-server`` side by side with google-adk's
``adk api_server``: the same app, the same fake model, the same load, in one run.

Usage: python benchmarks/bench_server_vs_adk.py [--json] [--quick] [--conversations N]
       [--turns N] [--backends memory,postgres] [--no-adk] [--adk-python PATH]
       [--output PATH]

Each side serves one app folder (``bench_app``) whose ``root_agent`` is an ``LlmAgent`` on
the shared fake model (``benchmarks/fake_model.py``, ``bench-stream-10``: ten partial
chunks, then the aggregated answer), started with each framework's own command line. The
load: N conversations at once (default 200), each a new session running T turns (default
10) of ``POST /run_sse`` with ``"streaming": true`` and ADK's camelCase body, each on its own
keep-alive connection. A turn's latency runs from sending the request to reading the end of
its SSE stream; every turn's frames are checked (10 partial chunks, then the final answer,
no error frame), so neither side can look fast by doing less.

Backends:
- ``memory``: one server process with in-memory sessions.
- ``postgres``: two server processes behind one PostgreSQL database (a private database
  created on ``EVENTIDE_PG_URL``'s server for the run and dropped after it); each
  conversation's turns alternate between the two processes, so every turn reads a session
  the other process wrote.

Reported per side: turns per second (wall clock, all conversations), turn latency p50/p99,
errors (anything else than a well-formed stream counts), peak RSS of each server process
(``VmHWM``), and server CPU per turn. The load generator is a small asyncio HTTP/1.1
client (no httpx): it costs far less CPU per turn than either server, so on a small machine
it is not what limits the figures.

google-adk runs from ``--adk-python`` (default: this interpreter when it can import
``google.adk``, else ``$EVENTIDE_ADK_PYTHON``, else the repository's ``.venv-adk`` that the
google-adk tests create); its PostgreSQL side needs asyncpg and SQLAlchemy there too.
Ports are picked free on 127.0.0.1. Exits non-zero if Eventide had any error.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.util
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

ROOT = Path(__file__).resolve().parents[1]
APP = "bench_app"
MODEL = "bench-stream-10"
PARTIALS = 10
DEFAULT_PG_URL = "postgresql+asyncpg://postgres@127.0.0.1:5432/test"

APP_SOURCE = f'''
import os
from types import SimpleNamespace

from benchmarks.fake_model import make_fake_llm_class

if os.environ["EVENTIDE_BENCH_FRAMEWORK"] == "adk":
    from google.adk.agents import LlmAgent
    from google.adk.models import BaseLlm, LlmResponse
    from google.genai import types
else:
    from eventide import BaseLlm, LlmAgent, LlmResponse, types

_api = SimpleNamespace(types=types, BaseLlm=BaseLlm, LlmResponse=LlmResponse)
root_agent = LlmAgent(
    name="bench_agent",
    model=make_fake_llm_class(_api)(model="{MODEL}"),
    instruction="Answer briefly.",
)
'''


# --- servers ---


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _apps_dir(parent: Path) -> Path:
    folder = parent / "apps"
    (folder / APP).mkdir(parents=True)
    (folder / APP / "__init__.py").write_text("from . import agent\n")
    (folder / APP / "agent.py").write_text(APP_SOURCE)
    return folder


@dataclass
class Server:
    framework: str
    proc: subprocess.Popen[bytes]
    port: int
    log: Path

    @property
    def pid(self) -> int:
        return self.proc.pid


def _start(
    framework: str,
    python: str,
    apps: Path,
    session_url: str,
    log_dir: Path,
    profile: str | None = None,
) -> Server:
    port = _free_port()
    if framework == "eventide":
        command = [python, "-m", "eventide.cli", "api-server", str(apps), "--port", str(port)]
        if profile:  # the event loop runs in the main thread, which cProfile records
            command[1:1] = ["-m", "cProfile", "-o", profile]
        command += ["--session-db", session_url, "--log-level", "warning"]
    else:
        command = [python, "-m", "google.adk.cli", "api_server", "--port", str(port)]
        command += ["--log_level", "warning", "--session_service_uri", session_url, str(apps)]
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(ROOT), str(ROOT / "src")]),
        "EVENTIDE_BENCH_FRAMEWORK": framework,
        "PYTHONWARNINGS": "ignore",
    }
    log = log_dir / f"{framework}-{port}.log"
    with log.open("wb") as out:
        proc = subprocess.Popen(command, cwd=apps, env=env, stdout=out, stderr=subprocess.STDOUT)
    return Server(framework, proc, port, log)


async def wait_healthy(port: int, proc: subprocess.Popen[bytes], limit_s: float) -> bool:
    """Poll ``GET /health`` on ``port`` until it answers 200 (True), or until ``proc`` exits
    or ``limit_s`` passes (False)."""
    deadline = time.monotonic() + limit_s
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            return False
        try:
            conn = await Connection.open(port)
            try:
                status, _, _ = await conn.request("GET", "/health", None)
            finally:
                conn.close()
            if status == 200:
                return True
        except OSError:
            pass
        await asyncio.sleep(0.2)
    return False


async def _wait_healthy(server: Server, limit_s: float = 120.0) -> None:
    if not await wait_healthy(server.port, server.proc, limit_s):
        raise RuntimeError(
            f"{server.framework} server did not start: {server.log.read_text()[-2000:]}"
        )


def _stop(server: Server) -> None:
    if server.proc.poll() is None:
        # SIGINT, as Ctrl-C: uvicorn shuts down gracefully and the process exits normally
        # (after SIGTERM, uvicorn re-raises the signal, which would lose a profile).
        server.proc.send_signal(signal.SIGINT)
        try:
            server.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            server.proc.kill()
            server.proc.wait()


def _peak_rss_mb(pid: int) -> float | None:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return round(int(line.split()[1]) / 1024, 1)
    except OSError:
        return None
    return None


def _cpu_seconds(pid: int, *, kernel_only: bool = False) -> float | None:
    """The process's CPU time (user + system; system alone with ``kernel_only``)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None
    ticks = int(fields[12]) if kernel_only else int(fields[11]) + int(fields[12])
    return ticks / os.sysconf("SC_CLK_TCK")


def _postgres_cpu_seconds() -> float | None:
    """CPU time of every PostgreSQL server process on this machine (backends, WAL writer,
    ...), those that exited included (the postmaster's reaped children); None when none
    can be read (the database runs elsewhere, or its processes are hidden)."""
    stats: dict[str, list[str]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            name, _, rest = stat.partition(" (")[2].rpartition(")")
            if name == "postgres":
                stats[entry.name] = rest.split()
    if not stats:
        return None
    ticks = 0
    for fields in stats.values():
        ticks += int(fields[11]) + int(fields[12])  # utime, stime
        if fields[1] not in stats:  # the postmaster: its exited children's time too
            ticks += int(fields[13]) + int(fields[14])
    return ticks / os.sysconf("SC_CLK_TCK")


# --- a small HTTP/1.1 client ---


class _ClosedBeforeResponse(ConnectionError):
    """The server closed the connection before answering (an idle keep-alive timeout)."""


# Both servers run uvicorn, which closes a keep-alive connection idle for 5 s: a connection
# idle for longer than this is reopened before use, as HTTP clients do.
_IDLE_REOPEN_S = 4.0


class _Response(asyncio.Protocol):
    """Reads HTTP/1.1 responses off one connection, parsing in ``data_received`` (no
    coroutine per header line or chunk, as with ``asyncio.StreamReader``): a response is
    one wake-up of the waiting task once it is complete."""

    def __init__(self) -> None:
        self.transport: asyncio.Transport | None = None
        self.buffer = bytearray()
        self.waiter: asyncio.Future[tuple[int, bytes, float]] | None = None
        self.first_byte = 0.0
        self.closed = False
        self._reset()

    def _reset(self) -> None:
        self.status = 0
        self.length = -1  # Content-Length, once the head is read
        self.chunked = False
        self.head_done = False
        self.pieces: list[bytes] = []
        self.pos = 0  # where the next unread chunk starts in ``buffer``

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport

    def expect(self) -> asyncio.Future[tuple[int, bytes, float]]:
        """A future for the next response (status, whole body, when its first byte came)."""
        self._reset()
        self.buffer.clear()
        self.first_byte = 0.0
        self.waiter = asyncio.get_running_loop().create_future()
        if self.closed:
            self._fail()
        return self.waiter

    def data_received(self, data: bytes) -> None:
        if not self.first_byte:
            self.first_byte = time.perf_counter()
        self.buffer += data
        waiter = self.waiter
        if waiter is None or waiter.done():
            return
        try:
            body = self._parse()
        except Exception as exc:  # a malformed answer fails the request, as a read would
            waiter.set_exception(exc)
            return
        if body is not None:
            waiter.set_result((self.status, body, self.first_byte))

    def _parse(self) -> bytes | None:
        """The body once the response is complete, else None (more data needed)."""
        buffer = self.buffer
        if not self.head_done:
            end = buffer.find(b"\r\n\r\n")
            if end < 0:
                return None
            lines = bytes(buffer[:end]).split(b"\r\n")
            self.status = int(lines[0].split(b" ", 2)[1])
            for line in lines[1:]:
                name, _, value = line.partition(b":")
                name = name.strip().lower()
                if name == b"content-length":
                    self.length = int(value)
                elif name == b"transfer-encoding" and b"chunked" in value.lower():
                    self.chunked = True
            self.head_done = True
            self.pos = end + 4
        if self.chunked:
            while True:
                line_end = buffer.find(b"\r\n", self.pos)
                if line_end < 0:
                    return None
                size = int(bytes(buffer[self.pos : line_end]).split(b";")[0], 16)
                start = line_end + 2
                if len(buffer) < start + size + 2:
                    return None
                self.pos = start + size + 2
                if size == 0:
                    return b"".join(self.pieces)
                self.pieces.append(bytes(buffer[start : start + size]))
        if self.length >= 0:
            if len(buffer) - self.pos < self.length:
                return None
            return bytes(buffer[self.pos : self.pos + self.length])
        return None  # read to the end of the connection: see connection_lost

    def connection_lost(self, exc: Exception | None) -> None:
        self.closed = True
        self._fail(exc)

    def _fail(self, exc: Exception | None = None) -> None:
        waiter = self.waiter
        if waiter is None or waiter.done():
            return
        if not self.buffer:
            waiter.set_exception(_ClosedBeforeResponse(str(exc or "closed")))
        elif self.head_done and self.length < 0 and not self.chunked:
            waiter.set_result((self.status, bytes(self.buffer[self.pos :]), self.first_byte))
        else:
            waiter.set_exception(asyncio.IncompleteReadError(bytes(self.buffer), None))


class Connection:
    """One keep-alive HTTP/1.1 connection to 127.0.0.1 (Content-Length or chunked bodies).

    A connection the server closed while idle is reopened and the request sent again: the
    server closes only connections with no request in flight, so nothing ran twice.
    """

    def __init__(self, port: int, transport: asyncio.Transport, protocol: _Response) -> None:
        self.port = port
        self.transport = transport
        self.protocol = protocol
        self.last_used = time.monotonic()
        self.reopened = 0

    @classmethod
    async def open(cls, port: int) -> Connection:
        transport, protocol = await asyncio.get_running_loop().create_connection(
            _Response, "127.0.0.1", port
        )
        return cls(port, transport, protocol)

    def close(self) -> None:
        self.transport.close()

    async def reopen(self) -> None:
        self.close()
        self.transport, self.protocol = await asyncio.get_running_loop().create_connection(
            _Response, "127.0.0.1", self.port
        )
        self.reopened += 1

    async def request(self, method: str, path: str, body: bytes | None) -> tuple[int, bytes, float]:
        """Send a request; the status, the whole body and when the status line arrived."""
        if time.monotonic() - self.last_used > _IDLE_REOPEN_S:
            await self.reopen()
        try:
            answer = await self._exchange(method, path, body)
        except _ClosedBeforeResponse:
            await self.reopen()
            answer = await self._exchange(method, path, body)
        self.last_used = time.monotonic()
        return answer

    async def _exchange(
        self, method: str, path: str, body: bytes | None
    ) -> tuple[int, bytes, float]:
        head = f"{method} {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n"
        if body is not None:
            head += f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n"
        answer = self.protocol.expect()
        if not self.protocol.closed:
            self.transport.write(head.encode() + b"\r\n" + (body or b""))
        return await answer


# --- the load ---


@dataclass
class Tally:
    latencies: list[float] = field(default_factory=list)
    first_byte: list[float] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    reopened: int = 0


def _check_stream(body: bytes) -> str | None:
    """None when the SSE body is 10 partial chunks then the final answer; else what is wrong."""
    frames = [f for f in body.split(b"\n\n") if f.strip()]
    for frame in frames:
        if not frame.startswith(b"data:"):
            return f"not an SSE data frame: {frame[:80]!r}"
    # One parse for all the frames (each must be one JSON value: the count is checked).
    events: list[Any] = json.loads(b"[" + b",".join([f[5:] for f in frames]) + b"]")
    final = events[-1] if events else {}
    if "errorCode" in final or "error_code" in final or "error" in final:
        return f"error frame: {json.dumps(final)[:200]}"
    partial = [e for e in events if e.get("partial")]
    if len(partial) != PARTIALS or len(events) != PARTIALS + 1:
        return f"expected {PARTIALS} partial frames and 1 final, got {len(events)} frames"
    text = "".join(p.get("text", "") for p in final.get("content", {}).get("parts", []))
    if text != "tok " * PARTIALS:
        return f"unexpected final answer {text[:80]!r}"
    return None


def turn_body(user: str, session_id: str, turn: int, *, streaming: bool) -> bytes:
    """The JSON body of turn ``turn`` of a conversation, as ADK's clients send it."""
    return json.dumps(
        {
            "appName": APP,
            "userId": user,
            "sessionId": session_id,
            "newMessage": {"role": "user", "parts": [{"text": f"message {turn}"}]},
            "streaming": streaming,
        }
    ).encode()


async def _conversation(ports: list[int], index: int, turns: int, tally: Tally) -> None:
    user = f"user{index}"
    conns = [await Connection.open(port) for port in ports]
    try:
        status, body, _ = await conns[index % len(conns)].request(
            "POST", f"/apps/{APP}/users/{user}/sessions", b"{}"
        )
        if status != 200:
            tally.errors.append(f"create session: HTTP {status} {body[:200]!r}")
            return
        session_id = json.loads(body)["id"]
        for turn in range(turns):
            request = turn_body(user, session_id, turn, streaming=True)
            conn = conns[(index + turn) % len(conns)]
            started = time.perf_counter()
            try:
                status, body, first_byte = await conn.request("POST", "/run_sse", request)
            except (OSError, asyncio.IncompleteReadError) as exc:
                tally.errors.append(f"turn {turn}: {type(exc).__name__}: {exc}")
                await conn.reopen()
                continue
            elapsed = time.perf_counter() - started
            problem = f"HTTP {status}: {body[:200]!r}" if status != 200 else _check_stream(body)
            if problem is not None:
                tally.errors.append(f"turn {turn}: {problem}")
                continue
            tally.latencies.append(elapsed)
            tally.first_byte.append(first_byte - started)
    except Exception as exc:  # a benchmark reports every failure, whatever its type
        tally.errors.append(f"{type(exc).__name__}: {exc}")
    finally:
        for conn in conns:
            tally.reopened += conn.reopened
            conn.close()


def _pct(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


async def _measure(servers: list[Server], conversations: int, turns: int) -> dict[str, Any]:
    ports = [s.port for s in servers]
    for server in servers:
        await _wait_healthy(server)
    # Warm-up: imports, the app's runner and (PostgreSQL) tables exist before the clock.
    for offset in range(len(servers)):
        await _conversation(ports, -1 - offset, 2, Tally())
    cpu_before = [_cpu_seconds(s.pid) for s in servers]
    sys_before = [_cpu_seconds(s.pid, kernel_only=True) for s in servers]
    pg_cpu_before = _postgres_cpu_seconds()
    client_cpu_before = time.process_time()
    tally = Tally()
    started = time.perf_counter()
    await asyncio.gather(*(_conversation(ports, i, turns, tally) for i in range(conversations)))
    wall = time.perf_counter() - started
    client_cpu = time.process_time() - client_cpu_before
    cpu_after = [_cpu_seconds(s.pid) for s in servers]
    sys_after = [_cpu_seconds(s.pid, kernel_only=True) for s in servers]
    pg_cpu_after = _postgres_cpu_seconds()
    ok = len(tally.latencies)
    server_cpu = sum(
        (after or 0.0) - (before or 0.0)
        for before, after in zip(cpu_before, cpu_after, strict=True)
    )
    server_sys = sum(
        (after or 0.0) - (before or 0.0)
        for before, after in zip(sys_before, sys_after, strict=True)
    )
    ms = 1000.0
    return {
        "processes": len(servers),
        "conversations": conversations,
        "turns_per_conversation": turns,
        "turns_ok": ok,
        # Turns that did not end in a well-formed stream (a failed session creation loses
        # its conversation's turns too).
        "errors": conversations * turns - ok,
        "error_samples": tally.errors[:5],
        "connections_reopened": tally.reopened,
        "wall_s": round(wall, 2),
        "turns_per_s": round(ok / wall, 1),
        "latency_ms": {
            "p50": round(_pct(tally.latencies, 0.50) * ms, 1),
            "p99": round(_pct(tally.latencies, 0.99) * ms, 1),
        },
        "first_byte_ms": {
            "p50": round(_pct(tally.first_byte, 0.50) * ms, 1),
            "p99": round(_pct(tally.first_byte, 0.99) * ms, 1),
        },
        "peak_rss_mb": [_peak_rss_mb(s.pid) for s in servers],
        "server_cpu_ms_per_turn": round(server_cpu * ms / ok, 2) if ok else None,
        # The part of it spent in the kernel (system calls: sockets, epoll).
        "server_kernel_cpu_ms_per_turn": round(server_sys * ms / ok, 2) if ok else None,
        "client_cpu_ms_per_turn": round(client_cpu * ms / ok, 2) if ok else None,
        # All of PostgreSQL's processes (other users' work on the server included).
        "postgres_cpu_ms_per_turn": (
            round((pg_cpu_after - pg_cpu_before) * ms / ok, 2)
            if ok and pg_cpu_before is not None and pg_cpu_after is not None
            else None
        ),
        "loadavg_1min": round(os.getloadavg()[0], 2),
    }


# --- PostgreSQL ---


async def _create_database() -> tuple[str, str, str]:
    import asyncpg

    base = urlsplit(os.environ.get("EVENTIDE_PG_URL", DEFAULT_PG_URL))
    admin = urlunsplit(base._replace(scheme="postgresql"))
    name = f"eventide_bench_server_{uuid.uuid4().hex[:10]}"
    conn = await asyncio.wait_for(asyncpg.connect(admin), timeout=5)
    try:
        await conn.execute(f'CREATE DATABASE "{name}"')
    finally:
        await conn.close()
    url = urlunsplit(base._replace(scheme="postgresql+asyncpg", path=f"/{name}"))
    return admin, name, url


async def _drop_database(admin: str, name: str) -> None:
    import asyncpg

    conn = await asyncpg.connect(admin)
    try:  # only this run's private database; FORCE ends this run's leftover connections
        await conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    finally:
        await conn.close()


# --- one side, one backend ---


def _run_side(
    framework: str,
    python: str,
    backend: str,
    conversations: int,
    turns: int,
    work: Path,
    profile: str | None = None,
) -> dict[str, Any]:
    apps = _apps_dir(work / f"{framework}-{backend}")
    database: tuple[str, str] | None = None
    if backend == "memory":
        urls = ["memory:" if framework == "eventide" else "memory://"]
    else:
        admin, name, url = asyncio.run(_create_database())
        database = (admin, name)
        urls = [url, url]
    servers: list[Server] = []
    try:
        for number, url in enumerate(urls):
            # One profile per process: PATH, then PATH.1 for the second.
            where = profile and (profile if number == 0 else f"{profile}.{number}")
            servers.append(_start(framework, python, apps, url, work, where))
            if backend == "postgres":
                # Started one after the other: each creates the tables it needs on first use.
                asyncio.run(_wait_healthy(servers[-1]))
        result = asyncio.run(_measure(servers, conversations, turns))
    finally:
        for server in servers:
            _stop(server)
        if database is not None:
            asyncio.run(_drop_database(*database))
    result["framework"] = framework
    result["backend"] = backend
    return result


def _adk_python(given: str | None) -> str | None:
    if given:  # absolute (servers run in the apps folder), symlinks kept (venvs need them)
        return os.path.abspath(given)
    if importlib.util.find_spec("google.adk") is not None:
        return sys.executable
    named = os.environ.get("EVENTIDE_ADK_PYTHON")
    if named:
        return os.path.abspath(named)
    # The separate environment the google-adk tests create (see tests/adk_env.py).
    beside = ROOT / ".venv-adk" / "bin" / "python"
    return str(beside) if beside.exists() else None


def run(args: argparse.Namespace) -> dict[str, Any]:
    adk = None if args.no_adk else _adk_python(args.adk_python)
    sides = [("eventide", sys.executable)] + ([("adk", adk)] if adk else [])
    results: dict[str, Any] = {
        "meta": {
            "conversations": args.conversations,
            "turns": args.turns,
            "model": MODEL,
            "cpus": os.cpu_count(),
            "loadavg_before": list(os.getloadavg()),
            "adk_python": adk,
            "notes": [] if adk else ["google-adk not found: Eventide only (see --adk-python)"],
        },
        "runs": [],
    }
    with tempfile.TemporaryDirectory(prefix="eventide-bench-vs-adk-") as tmp:
        for backend in args.backends:
            for framework, python in sides:
                _log(f"{framework}, {backend}: {args.conversations} x {args.turns} turns")
                try:
                    outcome = _run_side(
                        framework,
                        python,
                        backend,
                        args.conversations,
                        args.turns,
                        Path(tmp),
                        args.profile if framework == "eventide" else None,
                    )
                except Exception as exc:  # reported, and the other sides still run
                    outcome = {"framework": framework, "backend": backend, "failed": str(exc)}
                results["runs"].append(outcome)
    results["meta"]["loadavg_after"] = list(os.getloadavg())
    return results


def render(results: dict[str, Any]) -> str:
    meta = results["meta"]
    lines = [
        f"{meta['conversations']} concurrent SSE conversations x {meta['turns']} turns "
        f"(model {meta['model']}, {meta['cpus']} CPUs, load {meta['loadavg_before'][0]:.1f} "
        f"before, {meta['loadavg_after'][0]:.1f} after)",
        "",
        "| backend | server | processes | turns/s | p50 ms | p99 ms | errors | peak RSS MB "
        "| server CPU ms/turn | client CPU ms/turn | PostgreSQL CPU ms/turn "
        "| Eventide/adk turns/s |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    by_key = {(r["backend"], r["framework"]): r for r in results["runs"]}
    for run_ in results["runs"]:
        if "failed" in run_:
            lines.append(f"| {run_['backend']} | {run_['framework']} | failed: {run_['failed']} |")
            continue
        ratio = ""
        other = by_key.get((run_["backend"], "adk"))
        if run_["framework"] == "eventide" and other and other.get("turns_per_s"):
            ratio = f"{run_['turns_per_s'] / other['turns_per_s']:.1f}x"
        pg_cpu = run_.get("postgres_cpu_ms_per_turn") if run_["backend"] == "postgres" else "-"
        rss = " + ".join(f"{v:.0f}" for v in run_["peak_rss_mb"] if v is not None)
        lines.append(
            f"| {run_['backend']} | {run_['framework']} | {run_['processes']} | "
            f"{run_['turns_per_s']:,.1f} | {run_['latency_ms']['p50']:,.1f} | "
            f"{run_['latency_ms']['p99']:,.1f} | {run_['errors']} | {rss} | "
            f"{run_['server_cpu_ms_per_turn']} | {run_.get('client_cpu_ms_per_turn')} | "
            f"{pg_cpu} | {ratio} |"
        )
    for run_ in results["runs"]:
        for sample in run_.get("error_samples", [])[:3]:
            lines.append(f"  {run_['framework']} {run_['backend']} error: {sample}")
    return "\n".join(lines)


def _log(message: str) -> None:
    print(f"[bench_server_vs_adk] {message}", file=sys.stderr, flush=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--quick", action="store_true", help="20 conversations x 3 turns")
    parser.add_argument("--conversations", type=int, default=200)
    parser.add_argument("--turns", type=int, default=10)
    parser.add_argument(
        "--backends",
        default="memory,postgres",
        type=lambda text: [b for b in text.split(",") if b],
        help="memory, postgres or both (default both)",
    )
    parser.add_argument("--no-adk", action="store_true", help="Eventide only")
    parser.add_argument("--adk-python", help="the interpreter that has google-adk")
    parser.add_argument("--output", help="also write the JSON results to this file")
    parser.add_argument(
        "--profile",
        metavar="PATH",
        help="run Eventide's server under cProfile and write its stats to PATH "
        "(one backend only; the figures are then not comparable)",
    )
    args = parser.parse_args(argv)
    if args.quick:
        args.conversations, args.turns = 20, 3
    unknown = set(args.backends) - {"memory", "postgres"}
    if unknown:
        parser.error(f"unknown backend(s) {', '.join(sorted(unknown))}: use memory, postgres")
    results = run(args)
    if args.output:
        Path(args.output).write_text(json.dumps(results, indent=1) + "\n")
    print(json.dumps({"server_vs_adk": results}) if args.json else render(results))
    eventide_runs = [r for r in results["runs"] if r["framework"] == "eventide"]
    failed = any("failed" in r or r["errors"] for r in eventide_runs)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
