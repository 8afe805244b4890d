"""The official JavaScript SDK's client (``@a2a-js/sdk`` 1.3.0, run with node) sends, streams
and cancels against Eventide's A2A server.

The SDK is installed from npm into ``~/.cache/eventide/a2a-js-<version>`` on first use (the
test's own folder, outside the repository) and reused; without node/npm the test skips, and
fails under ``CI=true``.
"""

from __future__ import annotations

import asyncio
import fcntl
import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
from a2a.types import a2a_pb2

from eventide import LlmAgent
from eventide.a2a import to_a2a
from eventide.testing import ScriptedModel
from tests.a2a.a2a_harness import serving
from tests.conftest import IN_CI

pytestmark = pytest.mark.slow

JS_SDK = "@a2a-js/sdk@1.3.0"
SCRIPT = Path(__file__).parent / "js_side" / "js_client.mjs"
CARD = "/.well-known/agent-card.json"


def _missing(reason: str) -> None:
    if IN_CI:
        pytest.fail(f"{reason}; CI=true needs the JavaScript interop test to run")
    pytest.skip(reason)


def js_sdk_dir() -> Path:
    """A folder whose node_modules holds the JavaScript SDK (installed once, cached)."""
    node, npm = shutil.which("node"), shutil.which("npm")
    if node is None or npm is None:
        _missing("node and npm are needed for the JavaScript SDK")
    cache = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "eventide"
    folder = cache / f"a2a-js-{JS_SDK.rsplit('@', 1)[-1]}"
    folder.mkdir(parents=True, exist_ok=True)
    with open(cache / "a2a-js.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (folder / "node_modules" / "@a2a-js" / "sdk" / "package.json").exists():
            (folder / "package.json").write_text('{"name": "eventide-a2a-js", "private": true}')
            try:
                subprocess.run(
                    [str(npm), "install", "--silent", "--no-audit", "--no-fund", JS_SDK],
                    cwd=folder,
                    check=True,
                    timeout=600,
                    capture_output=True,
                )
            except (OSError, subprocess.SubprocessError) as exc:
                _missing(f"could not install {JS_SDK} from npm: {exc}")
    return folder


async def _node(base: str, mode: str) -> dict[str, Any]:
    sdk = js_sdk_dir()
    done = await asyncio.to_thread(
        subprocess.run,
        ["node", str(SCRIPT), str(sdk), base, CARD, mode],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


async def test_the_javascript_client_sends_and_streams() -> None:
    model = ScriptedModel(responses=["Sunny and warm."] * 2, stream_chunk_size=6)
    agent = LlmAgent(name="weather", model=model)
    async with serving(to_a2a(agent)) as url:
        sent = await _node(url, "send")
        streamed = await _node(url, "stream")
    assert sent == {"state": a2a_pb2.TASK_STATE_COMPLETED, "texts": ["Sunny and warm."]}
    assert streamed["kinds"][0] == "task"
    assert streamed["kinds"][-1] == "statusUpdate"
    assert streamed["states"][0] == a2a_pb2.TASK_STATE_SUBMITTED
    assert streamed["states"][-1] == a2a_pb2.TASK_STATE_COMPLETED
    assert streamed["texts"] == ["Sunny ", "and wa", "rm.", "Sunny and warm."]


async def test_the_javascript_client_cancels() -> None:
    class _Slow(ScriptedModel):
        async def generate_content_async(self, llm_request: Any, stream: bool = False) -> Any:
            await asyncio.sleep(60)
            async for response in super().generate_content_async(llm_request, stream):
                yield response  # pragma: no cover

    agent = LlmAgent(name="slow", model=_Slow(responses=["never"]))
    async with serving(to_a2a(agent)) as url:
        result = await _node(url, "cancel")
    assert result["before"] in (a2a_pb2.TASK_STATE_SUBMITTED, a2a_pb2.TASK_STATE_WORKING)
    assert result["after"] == a2a_pb2.TASK_STATE_CANCELED
