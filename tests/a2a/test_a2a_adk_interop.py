"""Interop with google-adk 2.13 (its own venv, with a2a-sdk 1.3.0), both directions:

- google-adk's ``RemoteA2aAgent`` calls an Eventide app served by ``to_a2a`` and gets the
  same answer Eventide's ``RemoteA2aAgent`` gets;
- Eventide's ``RemoteA2aAgent`` calls an agent served by google-adk's ``to_a2a``.
"""

from __future__ import annotations

import asyncio
import json
import os
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from eventide import InMemoryRunner, LlmAgent
from eventide.a2a import RemoteA2aAgent, to_a2a
from eventide.testing import ScriptedModel, tool_call_response
from tests.a2a.a2a_harness import serving
from tests.a2a.adk_a2a_env import adk_a2a_python

pytestmark = pytest.mark.slow

ADK_SIDE = Path(__file__).parent / "adk_side"
CARD = "/.well-known/agent-card.json"


def get_weather(city: str) -> dict[str, str]:
    """Look up the weather.

    Args:
        city: the city.
    """
    return {"forecast": f"sunny in {city}"}


async def _eventide_answer(card_url: str, message: str) -> list[str]:
    agent = RemoteA2aAgent(name="remote", agent_card=card_url)
    runner = InMemoryRunner(agent, app_name="eventide_side")
    session = await runner.session_service.create_session(app_name="eventide_side", user_id="u")
    texts: list[str] = []
    async for event in runner.run_async(user_id="u", session_id=session.id, new_message=message):
        assert event.error_message is None, event.error_message
        if event.is_final_response() and event.text:
            texts.append(event.text)
    await runner.close()
    return texts


async def test_google_adks_client_gets_the_answer_eventides_client_gets() -> None:
    python = adk_a2a_python()
    one_turn = [tool_call_response(("get_weather", {"city": "Paris"})), "It is sunny in Paris."]
    model = ScriptedModel(responses=one_turn * 2)
    agent = LlmAgent(
        name="weather", description="Tells the weather.", model=model, tools=[get_weather]
    )
    async with serving(to_a2a(agent)) as url:
        adk = await asyncio.to_thread(
            subprocess.run,
            [str(python), str(ADK_SIDE / "adk_client_turn.py"), url + CARD, "Weather in Paris?"],
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert adk.returncode == 0, adk.stderr[-3000:]
        adk_result: dict[str, Any] = json.loads(adk.stdout.strip().splitlines()[-1])
        ours = await _eventide_answer(url + CARD, "Weather in Paris?")
    assert adk_result["errors"] == []
    assert adk_result["texts"][-1] == ours[-1] == "It is sunny in Paris."
    # Both went through the tool: the model saw its result both times.
    results = [
        p.function_response
        for r in model.requests
        for c in r.contents
        for p in c.parts or []
        if p.function_response
    ]
    assert [r.response for r in results if r] == [{"forecast": "sunny in Paris"}] * 2


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@pytest.fixture
def adk_server(tmp_path: Path) -> Iterator[str]:
    python = adk_a2a_python()
    port = _free_port()
    log = tmp_path / "adk.log"
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    with open(log, "wb") as sink:
        server = subprocess.Popen(
            [str(python), str(ADK_SIDE / "adk_server.py"), str(port)],
            stdout=sink,
            stderr=subprocess.STDOUT,
            env=env,
        )
    try:
        url = f"http://localhost:{port}"
        deadline = time.monotonic() + 90
        while True:
            if server.poll() is not None or time.monotonic() > deadline:
                raise AssertionError(
                    f"google-adk's server did not start: {log.read_text()[-3000:]}"
                )
            try:
                if httpx.get(url + CARD, timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                time.sleep(0.3)
        yield url
    finally:
        server.terminate()
        try:
            server.wait(timeout=15)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()


async def test_eventides_client_calls_an_agent_served_by_google_adk(adk_server: str) -> None:
    texts = await _eventide_answer(adk_server + CARD, "Salut")
    assert texts[-1] == "Bonjour from ADK: Salut"
