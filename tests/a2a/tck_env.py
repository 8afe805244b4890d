"""The A2A TCK (``shared/third_party/a2a-tck``), run from a temporary copy in a venv of its own.

The TCK is not part of this repository: it is read from ``EVENTIDE_A2A_TCK`` or the shared
folder beside the repository, copied to a temporary folder (it writes reports and a pytest
cache where it runs) and run with an interpreter from a venv made once per machine under
``~/.cache/eventide/a2a-tck-venv-<key>`` (its requirements plus what its imports need; about a
minute, then reused). Without the TCK or the venv the tests skip, and fail under ``CI=true``.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest

from tests.conftest import IN_CI

REPO = Path(__file__).resolve().parents[2]
# What the TCK imports beyond its requirements.txt (measured: see shared/third_party/README).
_EXTRA = ["python-dotenv", "grpcio-status", "proto-plus", "pyOpenSSL", "aiohttp"]


def _missing(reason: str) -> None:
    if IN_CI:
        pytest.fail(f"{reason}; CI=true needs the A2A TCK tests to run")
    pytest.skip(reason)


def tck_source() -> Path:
    """The TCK's folder (skips, or fails in CI, when it is not there)."""
    named = os.environ.get("EVENTIDE_A2A_TCK")
    candidates = [Path(named)] if named else []
    for parent in REPO.parents:
        candidates.append(parent / "shared" / "third_party" / "a2a-tck")
    for candidate in candidates:
        if (candidate / "run_tck.py").is_file():
            return candidate
    _missing("the A2A TCK is not there (set EVENTIDE_A2A_TCK to its folder)")
    raise AssertionError("unreachable")


def tck_python(source: Path) -> Path:
    """A Python with the TCK's requirements, made once per machine and reused."""
    requirements = (source / "requirements.txt").read_text()
    key = hashlib.sha256((requirements + " ".join(_EXTRA)).encode()).hexdigest()[:12]
    cache = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "eventide"
    venv = cache / f"a2a-tck-venv-{key}"
    python = venv / "bin" / "python"
    stamp = venv / ".complete"
    cache.mkdir(parents=True, exist_ok=True)
    with open(cache / f"a2a-tck-venv-{key}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not stamp.exists():
            try:
                shutil.rmtree(venv, ignore_errors=True)
                subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=300)
                subprocess.run(
                    [str(python), "-m", "pip", "install", "-q", "-r", "/dev/stdin", *_EXTRA],
                    input=requirements,
                    text=True,
                    check=True,
                    timeout=1200,
                )
                stamp.write_text("ok")
            except (OSError, subprocess.SubprocessError) as exc:
                _missing(f"could not make the A2A TCK's venv in {venv}: {exc}")
    return python


def tck_copy(source: Path) -> Path:
    """A fresh copy of the TCK in a temporary folder (it writes where it runs)."""
    target = Path(tempfile.mkdtemp(prefix="eventide-a2a-tck-")) / "a2a-tck"
    shutil.copytree(
        source,
        target,
        ignore=shutil.ignore_patterns("reports", ".pytest_cache", "__pycache__", "*.pyc"),
    )
    return target


def free_port() -> int:
    """A TCP port free on 127.0.0.1 now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@contextmanager
def api_server(apps_dir: Path, log: Path, *options: str) -> Iterator[str]:
    """``eventide api-server APPS_DIR --a2a OPTIONS`` on a fresh in-memory database; yields
    the base URL once the host's agent card answers."""
    port = free_port()
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO / "src"), str(REPO)])}
    command = [
        sys.executable, "-m", "eventide.cli", "api-server", str(apps_dir), "--a2a",
        "--session-db", "memory:", "--port", str(port), "--log-level", "warning", *options,
    ]  # fmt: skip
    with open(log, "wb") as sink:
        server = subprocess.Popen(command, env=env, stdout=sink, stderr=subprocess.STDOUT)
    try:
        url = f"http://localhost:{port}"
        deadline = time.monotonic() + 60
        while True:
            if server.poll() is not None or time.monotonic() > deadline:
                raise AssertionError(f"the server did not start: {log.read_text()[-2000:]}")
            try:
                if httpx.get(url + "/.well-known/agent-card.json", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                time.sleep(0.2)
        yield url
    finally:
        server.terminate()
        try:
            server.wait(timeout=15)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()


MANDATORY_MARKERS = ("mandatory", "mandatory_protocol", "mandatory_jsonrpc")


def run_tck(python: Path, tck: Path, sut: str, tests: str, *markers: str) -> dict[str, str]:
    """Run the TCK's pytest on ``tests`` against ``sut`` (the agent's JSON-RPC URL); the
    outcome of each test (``passed``, ``failed``, ``skipped``) by name."""
    report = tck / f"report-{len(list(tck.glob('report-*')))}.xml"
    command = [
        str(python), "-m", "pytest", tests, f"--sut-url={sut}", "--test-scope=all",
        f"--junitxml={report}", "-q", "-p", "no:cacheprovider",
    ]  # fmt: skip
    if markers:
        command += ["-m", " or ".join(markers)]
    env = {
        **os.environ,
        "TCK_STREAMING_TIMEOUT": "2.0",
        "A2A_AUTH_HEADERS": json.dumps({"A2A-Version": "1.0"}),
    }
    env.pop("PYTHONPATH", None)
    subprocess.run(command, cwd=tck, env=env, capture_output=True, timeout=900)
    outcomes: dict[str, str] = {}
    for case in ET.parse(report).iter("testcase"):
        name = case.get("name", "")
        if case.find("failure") is not None or case.find("error") is not None:
            outcomes[name] = "failed"
        elif case.find("skipped") is not None:
            outcomes[name] = "skipped"
        else:
            outcomes[name] = "passed"
    return outcomes
