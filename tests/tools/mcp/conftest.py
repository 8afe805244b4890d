"""Fixtures that start real MCP server processes (``mcp_test_server.py``)."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from eventide.tools.mcp_toolset import StdioConnectionParams
from tests.conftest import IN_CI

if not IN_CI:
    # Without the mcp extra these tests are skipped locally; in CI they must run.
    pytest.importorskip("mcp")

SERVER_SCRIPT = Path(__file__).with_name("mcp_test_server.py")


def stdio_params() -> StdioConnectionParams:
    """Connection parameters that start the test server over stdio."""
    return StdioConnectionParams(command=sys.executable, args=[str(SERVER_SCRIPT), "stdio"])


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


class HttpMcpServer:
    """The test server as a streamable-HTTP process on 127.0.0.1; restartable on its port."""

    def __init__(self, *, api_key: str | None = None) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}/mcp"
        self.process: subprocess.Popen[bytes] | None = None
        # With an API key, requests without ``X-Api-Key: <api_key>`` get 401.
        self.mode = (
            ["http", str(self.port)] if api_key is None else ["http-key", str(self.port), api_key]
        )

    def start(self) -> None:
        self.process = subprocess.Popen(
            [sys.executable, str(SERVER_SCRIPT), *self.mode],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"the MCP test server exited with {self.process.returncode}")
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=0.2).close()
                return
            except OSError:
                time.sleep(0.05)
        raise RuntimeError(f"the MCP test server did not listen on port {self.port} in 60 s")

    def kill(self) -> None:
        if self.process is not None:
            self.process.kill()
            self.process.wait()
            self.process = None


@pytest.fixture(scope="session")
def http_server() -> Iterator[HttpMcpServer]:
    """One HTTP MCP server shared by the MCP tests."""
    server = HttpMcpServer()
    server.start()
    yield server
    server.kill()


@pytest.fixture
def own_http_server() -> Iterator[HttpMcpServer]:
    """An HTTP MCP server of the test's own (for tests that kill it)."""
    server = HttpMcpServer()
    server.start()
    yield server
    server.kill()
