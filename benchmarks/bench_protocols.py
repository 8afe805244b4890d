"""Per-turn cost of the protocol adapters against ``/run_sse``, in one run.

Usage: python benchmarks/bench_protocols.py [--json] [--turns N] [--rounds N]
    [--in-process | --callgrind [--keep DIR]]

Starts the API server with ``--openai`` and ``--ag-ui`` (in-memory sessions) in a subprocess
on 127.0.0.1. The app is an ``LlmAgent`` on ``FunctionModel``: every answer is 200 characters
streamed as 10 partial chunks plus the final event, so the figures are the server's own cost
(HTTP, the adapter's mapping, framing, commits), not a model's. Each round runs N streamed
turns of one conversation per protocol, the protocols in turn (so drift hits all alike):
``/run_sse`` (streaming), AG-UI ``/ag-ui/{app}``, Chat Completions and Responses (``stream``).

Reported per protocol: the server's CPU time per turn (from /proc, the overhead the goal is
about) and the turn's wall time as the client sees it (request sent to last frame read), as
medians over rounds, and each as a ratio to ``/run_sse`` of the same round (median of the
per-round ratios). The goal of issue 35: every adapter within 10% of ``/run_sse``.

``--in-process`` drives the same ASGI app without sockets or a client process (the request
handed to the app, the answer's bytes collected) and times each turn with the process's CPU
clock: the adapters' own cost, free of the loopback and of the client, and far less noisy on
a shared machine.

``--callgrind`` runs the in-process turns under ``valgrind --tool=callgrind`` and counts the
instructions of each protocol's conversation (one per protocol, ``--turns`` turns, counters
zeroed before and dumped after it; the cost of zeroing and dumping, measured on an empty
interval, taken off): the same figure on a loaded machine as on an idle one. The client's
share of the window (encoding each request body, reading each answer's frames) is counted on
its own, by replaying the client's side of the same conversation against the answers it got,
and taken off, as ``--in-process`` leaves it out: an AG-UI client resends the whole
conversation each turn, and encoding it (0.75 M instructions at 100 messages) is the
client's cost, not the adapter's. ``--keep DIR`` keeps the dumps for ``callgrind_annotate``.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import os
import re
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

ANSWER_CHARS = 200
CHUNK = 20
PROTOCOLS = ("run_sse", "ag_ui", "chat", "responses")


def _api() -> Any:
    from eventide import LlmAgent
    from eventide.apps import App
    from eventide.models.llm_request import LlmRequest
    from eventide.server import create_app
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
    return create_app(
        apps={"bench": App(name="bench", root_agent=agent)}, openai=True, ag_ui=True, traces=False
    )


def _serve(port: int) -> None:
    from eventide.server import serve

    serve(_api(), port=port, log_level="warning")


def _cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


class _Conversation:
    """One conversation per protocol, a streamed turn at a time."""

    def __init__(self, client: Any, protocol: str) -> None:
        self.client = client
        self.protocol = protocol
        self.session = f"s-{uuid.uuid4().hex[:10]}"
        self.messages: list[dict[str, Any]] = []
        self.previous: str | None = None
        if protocol == "run_sse" and not isinstance(client, _InProcess):
            client.post(f"/apps/bench/users/u/sessions/{self.session}").raise_for_status()

    def request(self, index: int) -> tuple[str, dict[str, Any], dict[str, str]]:
        """The path, body and headers of turn ``index``."""
        text = f"message {index}"
        if self.protocol == "run_sse":
            path = "/run_sse"
            body: dict[str, Any] = {
                "app_name": "bench",
                "user_id": "u",
                "session_id": self.session,
                "new_message": {"role": "user", "parts": [{"text": text}]},
                "streaming": True,
            }
            headers: dict[str, str] = {}
        elif self.protocol == "ag_ui":
            path = "/ag-ui/bench"
            self.messages.append({"id": f"m{index}", "role": "user", "content": text})
            body = {"threadId": self.session, "runId": f"r{index}", "messages": self.messages}
            headers = {}
        elif self.protocol == "chat":
            path = "/v1/chat/completions"
            body = {
                "model": "bench",
                "stream": True,
                "messages": [{"role": "user", "content": text}],
            }
            headers = {"X-Eventide-Session-Id": self.session}
        else:
            path = "/v1/responses"
            body = {"model": "bench", "stream": True, "input": text}
            if self.previous is not None:
                body["previous_response_id"] = self.previous
            headers = {}
        return path, body, headers

    def turn(self, index: int) -> None:
        """Run turn ``index`` over HTTP."""
        path, body, headers = self.request(index)
        last = ""
        with self.client.stream("POST", path, json=body, headers=headers) as response:
            response.raise_for_status()
            for line in response.iter_lines():
                if line.startswith("data:"):
                    last = line
        self.after(index, last)

    def after(self, index: int, last: str) -> None:
        """Keep what the next turn needs from this one's last frame."""
        if self.protocol == "ag_ui":
            self.messages.append({"id": f"a{index}", "role": "assistant", "content": "..."})
        if self.protocol == "responses":
            self.previous = json.loads(last[5:])["response"]["id"]
        if not last:
            raise RuntimeError(f"{self.protocol}: no frame")


class _InProcess:
    """An httpx-like ``stream``/``post`` that hands requests to the ASGI app in this process."""

    def __init__(self, api: Any) -> None:
        self.api = api
        self.cpu = 0.0  # process CPU spent inside the app (the request built, the answer read
        # outside it: a client's work is not the server's)

    async def call(
        self, method: str, path: str, raw: bytes = b"", headers: dict[str, str] | None = None
    ) -> tuple[int, bytes]:
        scope = {
            "type": "http",
            "http_version": "1.1",
            "method": method,
            "path": path,
            "raw_path": path.encode(),
            "query_string": b"",
            "root_path": "",
            "scheme": "http",
            "server": ("127.0.0.1", 80),
            "client": ("127.0.0.1", 5000),
            "headers": [(b"content-type", b"application/json")]
            + [(k.lower().encode(), v.encode()) for k, v in (headers or {}).items()],
        }
        sent = False
        status = 0
        chunks: list[bytes] = []
        done = asyncio.Event()

        async def receive() -> dict[str, Any]:
            nonlocal sent
            if not sent:
                sent = True
                return {"type": "http.request", "body": raw, "more_body": False}
            await done.wait()
            return {"type": "http.disconnect"}

        async def send(message: dict[str, Any]) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
            elif message["type"] == "http.response.body":
                chunks.append(message.get("body", b""))
                if not message.get("more_body", False):
                    done.set()

        started = time.process_time()
        await self.api(scope, receive, send)
        self.cpu += time.process_time() - started
        return status, b"".join(chunks)


class _AsyncConversation(_Conversation):
    """The same turns as :class:`_Conversation`, through :class:`_InProcess`."""

    async def start(self) -> None:
        if self.protocol == "run_sse":
            await self.client.call("POST", f"/apps/bench/users/u/sessions/{self.session}")

    async def aturn(self, index: int, answers: list[bytes] | None = None) -> None:
        """Run turn ``index``; its answer's bytes appended to ``answers`` when given."""
        path, raw, headers = self.encode(index)
        status, data = await self.client.call("POST", path, raw, headers)
        if status != 200:
            raise RuntimeError(f"{self.protocol}: {status} {data[:300]!r}")
        if answers is not None:
            answers.append(data)
        self.read(index, data)

    def encode(self, index: int) -> tuple[str, bytes, dict[str, str]]:
        """The client's work before turn ``index``: its request, the body encoded."""
        path, body, headers = self.request(index)
        return path, json.dumps(body).encode(), headers

    def read(self, index: int, data: bytes) -> None:
        """The client's work after turn ``index``: the answer's last frame read."""
        last = [line for line in data.decode().splitlines() if line.startswith("data:")][-1]
        self.after(index, last)

    def replay_client(self, answers: list[bytes]) -> None:
        """The client's side of a conversation whose answers were ``answers``, without the
        server: what :meth:`aturn` does besides handing the request to the app."""
        for index, data in enumerate(answers):
            self.encode(index)
            self.read(index, data)


async def _run_in_process(turns: int, rounds: int) -> dict[str, Any]:
    api = _api()
    client = _InProcess(api)
    cpu: dict[str, list[float]] = {p: [] for p in PROTOCOLS}
    for protocol in PROTOCOLS:  # warm-up: imports, first-use costs
        warm = _AsyncConversation(client, protocol)
        await warm.start()
        for index in range(3):
            await warm.aturn(index)
    for _ in range(rounds):
        for protocol in PROTOCOLS:
            conversation = _AsyncConversation(client, protocol)
            await conversation.start()
            client.cpu = 0.0
            for index in range(turns):
                await conversation.aturn(index)
            cpu[protocol].append(client.cpu / turns)
    result: dict[str, Any] = {"turns_per_round": turns, "rounds": rounds, "protocols": {}}
    for protocol in PROTOCOLS:
        result["protocols"][protocol] = {
            "cpu_ms_per_turn": round(statistics.median(cpu[protocol]) * 1000, 3),
            "cpu_ratio_to_run_sse": round(
                statistics.median(
                    c / b for c, b in zip(cpu[protocol], cpu["run_sse"], strict=True)
                ),
                3,
            ),
        }
    return result


def _callgrind_control(flag: str) -> None:
    subprocess.run(
        ["callgrind_control", flag, str(os.getpid())], check=True, stdout=subprocess.DEVNULL
    )


async def _callgrind_child(turns: int) -> None:
    """Under callgrind: warm up, then one dump per protocol's conversation (the first an
    empty interval: the cost of zeroing and dumping)."""
    client = _InProcess(_api())
    for protocol in PROTOCOLS:
        warm = _AsyncConversation(client, protocol)
        await warm.start()
        for index in range(3):
            await warm.aturn(index)
    _callgrind_control("-z")
    _callgrind_control("-d")
    for protocol in PROTOCOLS:
        conversation = _AsyncConversation(client, protocol)
        await conversation.start()
        answers: list[bytes] = []
        # Each conversation starts from an empty young generation: whether a collection falls
        # in its window depends on its own allocations, not on the protocol run before it.
        gc.collect()
        _callgrind_control("-z")
        for index in range(turns):
            await conversation.aturn(index, answers)
        _callgrind_control("-d")
        # The client's share of that window (encoding each request, reading each answer),
        # counted on its own to be taken off: an AG-UI client resends the whole
        # conversation, so encoding it grows with the conversation, and it is not the
        # server's cost.
        replay = _AsyncConversation(client, protocol)
        gc.collect()
        _callgrind_control("-z")
        replay.replay_client(answers)
        _callgrind_control("-d")


def _instructions(dump: Path) -> int:
    """The instruction count a callgrind dump sums up."""
    found = re.search(rb"^summary: (\d+)", dump.read_bytes(), re.M)
    if found is None:
        raise RuntimeError(f"{dump} has no summary line: is it a callgrind dump?")
    return int(found.group(1))


def _run_callgrind(turns: int, keep: str | None = None) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as out:
        subprocess.run(
            [
                "valgrind",
                "--tool=callgrind",
                f"--callgrind-out-file={out}/callgrind.out",
                sys.executable,
                __file__,
                "--callgrind-child",
                "--turns",
                str(turns),
            ],
            env={**os.environ, "PYTHONPATH": str(ROOT / "src")},
            check=True,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        dumps = sorted(Path(out).glob("callgrind.out.*"), key=lambda p: int(p.suffix[1:]))
        counts = [_instructions(dump) for dump in dumps]
        if keep is not None:  # the dumps, for callgrind_annotate
            Path(keep).mkdir(parents=True, exist_ok=True)
            names = ["empty"] + [f"{p}.{part}" for p in PROTOCOLS for part in ("turns", "client")]
            for name, dump in zip(names, dumps, strict=True):
                shutil.copy(dump, Path(keep) / f"callgrind.{name}")
    empty, *measured = counts
    per_turn: dict[str, float] = {}
    client: dict[str, float] = {}
    for index, protocol in enumerate(PROTOCOLS):
        whole, replayed = measured[2 * index] - empty, measured[2 * index + 1] - empty
        per_turn[protocol] = (whole - replayed) / turns
        client[protocol] = replayed / turns
    result: dict[str, Any] = {"turns": turns, "protocols": {}}
    for protocol in PROTOCOLS:
        result["protocols"][protocol] = {
            "instructions_per_turn": round(per_turn[protocol]),
            "ratio_to_run_sse": round(per_turn[protocol] / per_turn["run_sse"], 3),
            "client_instructions_per_turn": round(client[protocol]),
        }
    return result


def _run(turns: int, rounds: int) -> dict[str, Any]:
    import httpx

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    proc = subprocess.Popen(
        [sys.executable, __file__, "--serve", str(port)],
        env={**os.environ, "PYTHONPATH": str(ROOT / "src")},
    )
    try:
        url = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 60
        with httpx.Client(base_url=url, timeout=60) as client:
            while True:
                try:
                    client.get("/health").raise_for_status()
                    break
                except httpx.TransportError:
                    if time.monotonic() > deadline:
                        raise
                    time.sleep(0.05)
            cpu: dict[str, list[float]] = {p: [] for p in PROTOCOLS}
            wall: dict[str, list[float]] = {p: [] for p in PROTOCOLS}
            for protocol in PROTOCOLS:  # warm-up: imports, first-use costs
                warm = _Conversation(client, protocol)
                for index in range(3):
                    warm.turn(index)
            for _ in range(rounds):
                for protocol in PROTOCOLS:
                    conversation = _Conversation(client, protocol)
                    cpu_before = _cpu_seconds(proc.pid)
                    started = time.perf_counter()
                    for index in range(turns):
                        conversation.turn(index)
                    wall[protocol].append((time.perf_counter() - started) / turns)
                    cpu[protocol].append((_cpu_seconds(proc.pid) - cpu_before) / turns)
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    result: dict[str, Any] = {"turns_per_round": turns, "rounds": rounds, "protocols": {}}
    for protocol in PROTOCOLS:
        result["protocols"][protocol] = {
            "server_cpu_ms_per_turn": round(statistics.median(cpu[protocol]) * 1000, 3),
            "wall_ms_per_turn": round(statistics.median(wall[protocol]) * 1000, 3),
            "cpu_ratio_to_run_sse": round(
                statistics.median(
                    c / b for c, b in zip(cpu[protocol], cpu["run_sse"], strict=True)
                ),
                3,
            ),
            "wall_ratio_to_run_sse": round(
                statistics.median(
                    w / b for w, b in zip(wall[protocol], wall["run_sse"], strict=True)
                ),
                3,
            ),
        }
    return result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--serve", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--turns", type=int, default=20)
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--in-process", action="store_true")
    parser.add_argument("--callgrind", action="store_true")
    parser.add_argument("--keep", metavar="DIR", help="with --callgrind: keep the dumps here")
    parser.add_argument("--callgrind-child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve is not None:
        _serve(args.serve)
        return 0
    if args.callgrind_child:
        asyncio.run(_callgrind_child(args.turns))
        return 0
    if args.callgrind:
        result = _run_callgrind(args.turns, args.keep)
        if args.json:
            print(json.dumps(result, indent=2))
            return 0
        print(f"{'protocol':<10} {'instructions/turn':>18} {'ratio':>7} {'client/turn':>13}")
        for protocol, figures in result["protocols"].items():
            print(
                f"{protocol:<10} {figures['instructions_per_turn'] / 1e6:>15.3f} M "
                f"{figures['ratio_to_run_sse']:>7.3f} "
                f"{figures['client_instructions_per_turn'] / 1e6:>10.3f} M"
            )
        return 0
    if args.in_process:
        result = asyncio.run(_run_in_process(args.turns, args.rounds))
        if args.json:
            print(json.dumps(result, indent=2))
            return 0
        print(f"{'protocol':<10} {'CPU/turn':>11} {'ratio':>7}")
        for protocol, figures in result["protocols"].items():
            print(
                f"{protocol:<10} {figures['cpu_ms_per_turn']:>8.3f} ms "
                f"{figures['cpu_ratio_to_run_sse']:>7.3f}"
            )
        return 0
    result = _run(args.turns, args.rounds)
    if args.json:
        print(json.dumps(result, indent=2))
        return 0
    print(f"{'protocol':<10} {'server CPU/turn':>16} {'ratio':>7} {'wall/turn':>11} {'ratio':>7}")
    for protocol, figures in result["protocols"].items():
        print(
            f"{protocol:<10} {figures['server_cpu_ms_per_turn']:>13.3f} ms "
            f"{figures['cpu_ratio_to_run_sse']:>7.3f} {figures['wall_ms_per_turn']:>8.3f} ms "
            f"{figures['wall_ratio_to_run_sse']:>7.3f}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
