"""The any-provider example app, run against a local OpenAI-compatible server."""

from __future__ import annotations

import pytest
from examples.any_provider.agent import build_agent, get_weather

from tests.agents.llm_helpers import start, turn
from tests.event_summary import summarize
from tests.models.fake_provider_servers import FakeProviderServer, Reply
from tests.models.test_openai_llm import completion


async def test_example_runs_on_a_local_openai_compatible_server(
    server: FakeProviderServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """EVENTIDE_MODEL picks the model; OPENAI_BASE_URL points at the local server (no key)."""
    monkeypatch.setenv("EVENTIDE_MODEL", "openai/local-llama")
    monkeypatch.setenv("OPENAI_BASE_URL", f"{server.url}/v1")
    call = {
        "id": "call_1",
        "type": "function",
        "function": {"name": "get_weather", "arguments": '{"city": "Oslo"}'},
    }
    server.add(
        Reply(body=completion({"role": "assistant", "tool_calls": [call]}, "tool_calls")),
        Reply(body=completion({"role": "assistant", "content": "Snow in Oslo, -3C."})),
    )
    runner, session_id = await start(build_agent())
    events = await turn(runner, session_id, "Weather in Oslo?")
    await runner.close()
    assert summarize(events) == [
        ("weather_assistant", "call", (("get_weather", (("city", "Oslo"),)),)),
        (
            "weather_assistant",
            "response",
            (
                (
                    "get_weather",
                    (("city", "Oslo"), ("condition", "snow"), ("status", "ok"), ("temp_c", -3)),
                ),
            ),
        ),
        ("weather_assistant", "text", "Snow in Oslo, -3C."),
    ]
    assert server.bodies[0]["model"] == "local-llama"
    assert server.bodies[0]["tools"][0]["function"]["name"] == "get_weather"


def test_unknown_city_lists_the_known_ones() -> None:
    assert get_weather("Atlantis") == {
        "status": "unknown city",
        "known": ["Lisbon", "Oslo", "Paris"],
    }


@pytest.mark.parametrize(
    ("model", "connector"),
    [
        ("gemini-2.5-flash", "GeminiLlm"),
        ("gpt-4.1-mini", "OpenAILlm"),
        ("claude-sonnet-4-5", "AnthropicLlm"),
        ("ollama/llama3.2", "OpenAILlm"),
        ("litellm/mistral/mistral-large-latest", "LiteLlm"),
    ],
)
def test_one_string_switches_the_provider(model: str, connector: str) -> None:
    assert type(build_agent(model).canonical_model).__name__ == connector


def test_module_entry_point_prints_the_turn(server: FakeProviderServer) -> None:
    """``python -m examples.any_provider`` in a real process, model on the local server."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    call = {
        "id": "call_1",
        "type": "function",
        "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'},
    }
    server.add(
        Reply(body=completion({"role": "assistant", "tool_calls": [call]}, "tool_calls")),
        Reply(body=completion({"role": "assistant", "content": "Cloudy, 11C."})),
    )
    env = {
        **os.environ,
        "EVENTIDE_MODEL": "openai/local",
        "OPENAI_BASE_URL": f"{server.url}/v1",
    }
    env.pop("OPENAI_API_KEY", None)
    result = subprocess.run(
        [sys.executable, "-m", "examples.any_provider", "Paris?"],
        cwd=Path(__file__).resolve().parents[2],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    assert result.stdout.splitlines() == [
        "[tool call] get_weather({'city': 'Paris'})",
        "[tool result] {'status': 'ok', 'city': 'Paris', 'condition': 'cloudy', 'temp_c': 11}",
        "Cloudy, 11C.",
    ]
