"""google-adk's own Python client for its web server (``AdkWebServerClient`` from
google-adk 2.13.0, run in its own environment) passes a scripted conversation against
``eventide``'s server."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from eventide import LlmAgent, ToolContext, types
from eventide.apps import App
from eventide.server import create_app
from eventide.testing import ScriptedModel, tool_call_response
from tests.adk_env import adk_python
from tests.server.harness import ThreadedServer

SCRIPT = Path(__file__).with_name("adk_client_conversation.py")


async def get_weather(city: str, tool_context: ToolContext) -> dict[str, Any]:
    """The weather in a city."""
    tool_context.state["last_city"] = city
    await tool_context.save_artifact("forecast.txt", types.Part(text=f"{city}: sunny"))
    return {"city": city, "forecast": "sunny"}


@pytest.fixture
def weather_server() -> Iterator[ThreadedServer]:
    model = ScriptedModel(
        responses=[
            tool_call_response(("get_weather", {"city": "Lyon"})),
            "Sunny in Lyon.",
            "You are welcome!",
        ],
        stream_chunk_size=5,
    )
    agent = LlmAgent(name="forecaster", model=model, instruction="Forecast.", tools=[get_weather])
    with ThreadedServer(create_app(apps={"weather": App(name="weather", root_agent=agent)})) as s:
        yield s


@pytest.mark.slow
def test_google_adk_client_runs_a_scripted_conversation(weather_server: ThreadedServer) -> None:
    """Sessions, a streamed turn with a tool call, a plain turn, PATCH state, artifact
    version metadata and delete, each parsed by google-adk's own models."""
    python = adk_python()
    run = subprocess.run(
        [str(python), str(SCRIPT), weather_server.url],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert run.returncode == 0, run.stderr[-3000:]
    seen = json.loads(run.stdout.strip().splitlines()[-1])

    assert seen["version"]["language"] == "python"
    assert seen["created"] == ["weather", "ann", {"units": "C"}]
    first, second = seen["turns"]
    assert [(e["calls"], e["responses"]) for e in first if not e["partial"]] == [
        (["get_weather"], []),
        ([], ["get_weather"]),
        ([], []),
    ]
    assert first[1]["state_delta"] == {"last_city": "Lyon"}
    streamed = [e["text"] for e in first if e["partial"]]
    assert "".join(streamed) == "Sunny in Lyon." and len(streamed) > 1
    assert first[-1]["text"] == "Sunny in Lyon."
    assert [(e["author"], e["text"], e["partial"]) for e in second] == [
        ("forecaster", "You are welcome!", False)
    ]
    assert seen["updated_state"] == {"units": "C", "last_city": "Lyon", "mood": "happy"}
    assert seen["authors"] == [
        "user",
        "forecaster",
        "forecaster",
        "forecaster",
        "user",
        "forecaster",
        "user",
    ]
    assert seen["versions"] == [0]
    assert seen["version_0_uri"].endswith("/artifacts/forecast.txt/versions/0")
    assert seen["after_delete"] == 404
