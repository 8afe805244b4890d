"""Real uvicorn servers on 127.0.0.1 for the tests: in a thread, or in a subprocess."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from types import TracebackType
from typing import Any

import httpx
import uvicorn

REPO = Path(__file__).resolve().parents[2]


def _bound_socket() -> socket.socket:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    return sock


def wait_until(condition: Any, *, timeout: float = 30.0, what: str = "condition") -> None:
    """Poll ``condition()`` until it is true; fail after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.01)


class ThreadedServer:
    """Runs an ASGI app with uvicorn in a background thread on a free loopback port."""

    def __init__(self, api: Any, *, graceful_shutdown_timeout: int | None = None) -> None:
        self._sock = _bound_socket()
        self.port: int = self._sock.getsockname()[1]
        self.url = f"http://127.0.0.1:{self.port}"
        config = uvicorn.Config(
            api,
            lifespan="on",
            log_level="warning",
            ws="auto",
            timeout_graceful_shutdown=graceful_shutdown_timeout,
        )
        self.server = uvicorn.Server(config)
        self._thread = threading.Thread(
            target=self.server.run, kwargs={"sockets": [self._sock]}, daemon=True
        )

    def __enter__(self) -> ThreadedServer:
        self._thread.start()
        wait_until(lambda: self.server.started or not self._thread.is_alive(), what="startup")
        if not self.server.started:
            raise RuntimeError("the server thread died during startup")
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.server.should_exit = True
        self._thread.join(timeout=60)
        self._sock.close()


class ServerProcess:
    """``tests/server/server_process.py`` in a subprocess; it prints its port on startup."""

    def __init__(self, *args: str, env: dict[str, str] | None = None) -> None:
        full_env = {**os.environ, "PYTHONPATH": str(REPO), **(env or {})}
        self.proc = subprocess.Popen(
            [sys.executable, str(Path(__file__).with_name("server_process.py")), *args],
            cwd=REPO,
            env=full_env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        if not line:
            _, err = self.proc.communicate(timeout=30)
            raise RuntimeError(f"server process failed to start:\n{err}")
        self.port = int(json.loads(line)["port"])
        self.url = f"http://127.0.0.1:{self.port}"
        with httpx.Client(base_url=self.url) as client:
            wait_until(lambda: _healthy(client), what="health")

    def terminate(self) -> None:
        """Send SIGTERM (a graceful shutdown)."""
        self.proc.send_signal(signal.SIGTERM)

    def wait(self, timeout: float = 60) -> tuple[int, str]:
        """Wait for exit; return the exit code and stderr."""
        _, err = self.proc.communicate(timeout=timeout)
        return self.proc.returncode, err

    def __enter__(self) -> ServerProcess:
        return self

    def __exit__(self, *exc_info: object) -> None:
        if self.proc.poll() is None:
            self.terminate()
            try:
                self.proc.communicate(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.communicate()


def _healthy(client: httpx.Client) -> bool:
    try:
        return client.get("/health").status_code == 200
    except httpx.TransportError:
        return False


def sse_events(response: httpx.Response) -> Iterator[dict[str, Any]]:
    """Parse a ``text/event-stream`` body as it arrives: one dict per ``data:`` frame."""
    data: list[str] = []
    for line in response.iter_lines():
        if line.startswith("data:"):
            data.append(line[5:].lstrip())
        elif line == "" and data:
            yield json.loads("\n".join(data))
            data = []
    if data:
        yield json.loads("\n".join(data))
