"""The A2A TCK (shared/third_party/a2a-tck) against ``eventide api-server --a2a``.

The server serves ``tests/a2a/apps`` (the reference app, which behaves as the TCK's reference
agent does: tasks stay working for a while) on a fresh in-memory database, and the TCK runs
from a temporary copy in its own venv (:mod:`tests.a2a.tck_env`), as
``shared/third_party/README.md`` describes.

Gates:

- mandatory JSON-RPC tests: every test passes but the ones that fail on every server,
  a2a-sdk 1.3.0's own included (measured there: 71 passed, 5 failed). Of those five, three
  (ListTasks reading ``pageSize`` differently from a2a-sdk) pass here; the two left are
  listed in :data:`FAIL_ON_EVERY_SERVER` with their reason;
- the capability tests of what the card declares (streaming): all pass or skip.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.a2a.tck_env import REPO, tck_copy, tck_python, tck_source

pytestmark = pytest.mark.slow

FAIL_ON_EVERY_SERVER = {
    # The TCK's own bug: a TypeError inside the test, whatever the server answers.
    "test_push_notification_not_supported_error_32003_enhanced": "TypeError in the TCK's test",
    # An unknown status filter must be -32602, but a2a-sdk's dispatcher parses params with
    # ignore_unknown_fields, which turns an unknown enum value into 0 (no filter) before
    # any handler sees it; every a2a-sdk based server answers the list.
    "test_invalid_status_error": "a2a-sdk maps an unknown status to no filter",
}
A2A_SDK_PASSED = 71  # a2a-sdk 1.3.0's own server, same TCK and setting


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@pytest.fixture
def reference_server(tmp_path: Path) -> Iterator[str]:
    port = _free_port()
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(REPO / "src"), str(REPO)]),
        "EVENTIDE_TCK_WORK_SECONDS": "10",
    }
    command = [
        sys.executable, "-m", "eventide.cli", "api-server", str(REPO / "tests" / "a2a" / "apps"),
        "--a2a", "--a2a-send-wait", "0.1", "--session-db", "memory:", "--port", str(port),
        "--log-level", "warning",
    ]  # fmt: skip
    log = tmp_path / "server.log"
    with open(log, "wb") as sink:
        server = subprocess.Popen(command, env=env, stdout=sink, stderr=subprocess.STDOUT)
    try:
        url = f"http://localhost:{port}"
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if server.poll() is not None:
                raise AssertionError(f"the server exited: {log.read_text()[-2000:]}")
            try:
                if httpx.get(url + "/.well-known/agent-card.json", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                time.sleep(0.2)
        yield url + "/a2a/reference_agent"
    finally:
        server.terminate()
        try:
            server.wait(timeout=15)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()


def _run_tck(python: Path, tck: Path, sut: str, tests: str, *markers: str) -> dict[str, str]:
    """Run the TCK's pytest on ``tests``; the outcome of each test by name."""
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
    subprocess.run(command, cwd=tck, env=env, capture_output=True, timeout=600)
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


def test_the_tck_passes_against_the_api_server(reference_server: str) -> None:
    source = tck_source()
    python = tck_python(source)
    tck = tck_copy(source)

    mandatory = _run_tck(
        python, tck, reference_server, "tests/mandatory",
        "mandatory", "mandatory_protocol", "mandatory_jsonrpc",
    )  # fmt: skip
    failed = {name for name, outcome in mandatory.items() if outcome == "failed"}
    passed = [name for name, outcome in mandatory.items() if outcome == "passed"]
    assert failed <= set(FAIL_ON_EVERY_SERVER), sorted(failed - set(FAIL_ON_EVERY_SERVER))
    assert len(passed) >= A2A_SDK_PASSED, (len(passed), sorted(failed))

    # The card declares streaming: its capability tests must pass (or skip on their own
    # preconditions), never fail.
    streaming = _run_tck(
        python, tck, reference_server, "tests/optional/capabilities/test_streaming_methods.py"
    )
    assert "failed" not in streaming.values(), streaming
    assert streaming.get("test_message_stream_basic") == "passed"
    assert streaming.get("test_tasks_subscribe_nonexistent") == "passed"
