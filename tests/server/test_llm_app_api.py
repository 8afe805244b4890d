"""An LlmAgent app (scripted model, a real tool) served over HTTP: streaming, the model
request behind each model event, and apps loaded from an apps folder."""

from __future__ import annotations

import textwrap
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from eventide import LlmAgent, ToolContext
from eventide.apps import App
from eventide.server import create_app
from eventide.testing import ScriptedModel, tool_call_response
from tests.server.harness import ThreadedServer, sse_events


def get_weather(city: str, tool_context: ToolContext) -> dict[str, Any]:
    """The weather in a city."""
    tool_context.state["last_city"] = city
    return {"city": city, "forecast": "sunny"}


@pytest.fixture
def weather_server() -> Iterator[ThreadedServer]:
    model = ScriptedModel(
        responses=[tool_call_response(("get_weather", {"city": "Lyon"})), "Sunny in Lyon."],
        stream_chunk_size=4,
    )
    agent = LlmAgent(
        name="forecaster",
        model=model,
        instruction="You give weather forecasts.",
        tools=[get_weather],
    )
    with ThreadedServer(create_app(apps={"weather": App(name="weather", root_agent=agent)})) as s:
        yield s


def _kind(event: dict[str, Any]) -> str:
    parts = event["content"]["parts"]
    if "functionCall" in parts[0]:
        return "call"
    if "functionResponse" in parts[0]:
        return "response"
    return ("partial:" if event.get("partial") else "text:") + str(parts[0]["text"])


def test_streamed_tool_turn_and_the_model_request_of_each_event(
    weather_server: ThreadedServer,
) -> None:
    """Spec, tool-call walkthrough and streaming: call, tool response (state_delta), then
    the answer in partial chunks followed by the complete event; each model event links to
    the request the model was sent (the second one carries the tool's result)."""
    user = f"u-{uuid.uuid4().hex[:6]}"
    with httpx.Client(base_url=weather_server.url, timeout=30) as client:
        sid = client.post(f"/apps/weather/users/{user}/sessions").json()["id"]
        body = {
            "app_name": "weather",
            "user_id": user,
            "session_id": sid,
            "new_message": {"role": "user", "parts": [{"text": "Weather in Lyon?"}]},
            "streaming": True,
        }
        with client.stream("POST", "/run_sse", json=body) as response:
            events = list(sse_events(response))
        assert [_kind(e) for e in events] == [
            "call",
            "response",
            "partial:Sunn",
            "partial:y in",
            "partial: Lyo",
            "partial:n.",
            "text:Sunny in Lyon.",
        ]
        assert events[1]["actions"]["stateDelta"] == {"last_city": "Lyon"}

        first = client.get(f"/debug/model_request/{events[0]['id']}").json()
        assert first["config"]["systemInstruction"].startswith("You give weather forecasts.")
        assert [d["name"] for d in first["config"]["tools"][0]["functionDeclarations"]] == [
            "get_weather"
        ]
        assert [c["role"] for c in first["contents"]] == ["user"]

        final = client.get(f"/debug/model_request/{events[-1]['id']}").json()
        assert [c["role"] for c in final["contents"]] == ["user", "model", "user"]
        tool_result = final["contents"][2]["parts"][0]["functionResponse"]
        assert tool_result["response"] == {"city": "Lyon", "forecast": "sunny"}
        # Partial chunks come from the same model call.
        assert client.get(f"/debug/model_request/{events[2]['id']}").json() == final

        # A tool's result is not model output: it has no model request.
        missing = client.get(f"/debug/model_request/{events[1]['id']}")
        assert missing.status_code == 404
        assert "only events produced by a model call" in missing.json()["detail"]


def test_apps_folder_is_discovered_loaded_once_and_stored_in_sqlite(tmp_path: Path) -> None:
    """Apps in a folder are served by name; sessions default to SQLite in
    <apps_dir>/.eventide/sessions.db, so they outlive the server."""
    app_dir = tmp_path / "greeter"
    app_dir.mkdir()
    (app_dir / "agent.py").write_text(
        textwrap.dedent(
            """
            from tests.server.fixture_agents import EchoAgent

            root_agent = EchoAgent(name="greeter_agent")
            """
        )
    )
    (tmp_path / "not_an_app").mkdir()
    body: dict[str, Any] = {
        "app_name": "greeter",
        "user_id": "ann",
        "new_message": {"role": "user", "parts": [{"text": "hello"}]},
    }
    with ThreadedServer(create_app(apps_dir=tmp_path)) as server:
        with httpx.Client(base_url=server.url, timeout=30) as client:
            assert client.get("/list-apps").json() == ["greeter"]
            sid = client.post("/apps/greeter/users/ann/sessions").json()["id"]
            body["session_id"] = sid
            answer = client.post("/run", json=body).json()
            assert answer[0]["content"]["parts"][0]["text"] == "echo: hello"
    assert (tmp_path / ".eventide" / "sessions.db").is_file()

    with ThreadedServer(create_app(apps_dir=tmp_path)) as server:
        with httpx.Client(base_url=server.url, timeout=30) as client:
            again = client.post("/run", json=body).json()
            assert again[0]["actions"]["stateDelta"] == {"turns": 2}


def test_an_app_that_fails_to_load_is_a_500_naming_it(tmp_path: Path) -> None:
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "agent.py").write_text("root_agent = undefined_name\n")
    body = {
        "app_name": "broken",
        "user_id": "u",
        "session_id": "s",
        "new_message": {"role": "user", "parts": [{"text": "hi"}]},
    }
    with ThreadedServer(create_app(apps_dir=tmp_path)) as server:
        with httpx.Client(base_url=server.url, timeout=30) as client:
            assert client.get("/list-apps").json() == ["broken"]
            response = client.post("/run", json=body)
            assert response.status_code == 500
            detail = response.json()["detail"]
            assert "App 'broken' failed to load (error id " in detail
            assert "NameError: name 'undefined_name' is not defined" in detail
            assert "Traceback" not in detail and str(tmp_path) not in detail
