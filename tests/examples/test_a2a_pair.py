"""The A2A example pair (``examples/a2a_pair``): ``eventide api-server remote_apps --a2a``
serves the trivia agent, and the concierge app, run in process from its folder as ``eventide
run`` loads it, hands a country question to it over A2A, offline on the demo model. The
agent graph (``eventide web``) shows the remote agent with its URL."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from eventide import Runner
from eventide.apps.demo_model import prepare_models
from eventide.apps.loader import load_app
from eventide.server.agent_graph import build_agent_graph
from eventide.sessions.in_memory_session_service import InMemorySessionService

ROOT = Path(__file__).resolve().parents[2]
PAIR = ROOT / "examples" / "a2a_pair"

pytestmark = pytest.mark.slow


@pytest.fixture
def trivia_url(tmp_path: Path) -> Iterator[str]:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    env = {
        k: v
        for k, v in os.environ.items()
        if k
        not in (
            "GOOGLE_API_KEY",
            "GEMINI_API_KEY",
            "OPENAI_API_KEY",
            "ANTHROPIC_API_KEY",
            "EVENTIDE_MODEL",
        )
    }
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT / "src"), str(ROOT)])
    log = tmp_path / "server.log"
    command = [
        sys.executable, "-m", "eventide.cli", "api-server", str(PAIR / "remote_apps"), "--a2a",
        "--port", str(port), "--session-db", "memory:", "--log-level", "warning",
    ]  # fmt: skip
    with open(log, "wb") as sink:
        server = subprocess.Popen(command, env=env, stdout=sink, stderr=subprocess.STDOUT)
    try:
        url = f"http://localhost:{port}/a2a/trivia"
        deadline = time.monotonic() + 60
        while True:
            if server.poll() is not None or time.monotonic() > deadline:
                raise AssertionError(log.read_text()[-2000:])
            try:
                if httpx.get(url + "/.well-known/agent-card.json", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                time.sleep(0.2)
        yield url
    finally:
        server.terminate()
        server.wait(timeout=20)


async def test_the_concierge_asks_the_remote_trivia_agent(
    trivia_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TRIVIA_A2A_URL", trivia_url)
    for key in (
        "GOOGLE_API_KEY",
        "GEMINI_API_KEY",
        "OPENAI_API_KEY",
        "ANTHROPIC_API_KEY",
        "EVENTIDE_MODEL",
    ):
        monkeypatch.delenv(key, raising=False)
    app = load_app(PAIR / "local_apps" / "concierge")
    setup = prepare_models(app.root_agent)
    assert setup.uses_demo_model
    runner = Runner(
        app_name="concierge", agent=app.root_agent, session_service=InMemorySessionService()
    )
    session = await runner.session_service.create_session(app_name="concierge", user_id="u")
    answers = []
    async for event in runner.run_async(
        user_id="u", session_id=session.id, new_message="What is the capital of France?"
    ):
        assert event.error_message is None, event.error_message
        if event.author == "trivia" and not event.partial:
            answers.append(event.text or "")
    await runner.close()
    setup.restore()
    assert any("Paris" in answer for answer in answers), answers

    graph = build_agent_graph(app.root_agent).to_json()
    [remote] = [n for n in graph["nodes"] if n["id"] == "trivia"]
    assert remote["type"] == "RemoteA2aAgent"
    assert remote["detail"] == f"A2A: {trivia_url}"
    assert {"source": "concierge", "target": "trivia", "kind": "transfer", "label": ""} in (
        graph["edges"]
    )
