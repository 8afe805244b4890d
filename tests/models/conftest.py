"""Fixtures of the connector tests: a fake provider server and a request using every feature."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from eventide import types
from eventide.models.llm_request import LlmRequest
from tests.models.fake_provider_servers import FakeProviderServer

GOLDEN_DIR = Path(__file__).parent / "golden"

_PROVIDER_ENV = [
    "OPENAI_API_KEY",
    "OPENAI_BASE_URL",
    "ANTHROPIC_API_KEY",
    "ANTHROPIC_BASE_URL",
    "GOOGLE_API_KEY",
    "GEMINI_API_KEY",
    "GOOGLE_GENAI_USE_VERTEXAI",
    "GOOGLE_CLOUD_PROJECT",
    "OLLAMA_BASE_URL",
    "OLLAMA_HOST",
]


@pytest.fixture(autouse=True)
def _no_provider_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """Connectors never see the developer's real keys or endpoints."""
    for name in _PROVIDER_ENV:
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def server() -> Iterator[FakeProviderServer]:
    fake = FakeProviderServer().start()
    try:
        yield fake
    finally:
        fake.stop()


def assert_golden(name: str, data: Any) -> None:
    """Compare ``data`` with ``golden/<name>.json`` (EVENTIDE_UPDATE_GOLDEN=1 rewrites it)."""
    path = GOLDEN_DIR / f"{name}.json"
    text = json.dumps(data, indent=2, sort_keys=True, ensure_ascii=False) + "\n"
    if os.environ.get("EVENTIDE_UPDATE_GOLDEN") == "1":
        GOLDEN_DIR.mkdir(exist_ok=True)
        path.write_text(text)
    assert path.exists(), f"golden file {path} missing; run with EVENTIDE_UPDATE_GOLDEN=1"
    assert json.loads(text) == json.loads(path.read_text())


WEATHER_SCHEMA = {
    "type": "object",
    "properties": {"city": {"type": "string", "description": "City name"}},
    "required": ["city"],
}


def rich_request() -> LlmRequest:
    """A request that uses every translated feature once.

    History: a user message with text, an inline PNG and an image by URI; a model turn
    with a thought, text and two parallel calls (the second without an id, as Gemini may
    send); the user's two function responses (the second without an id); a follow-up.
    """
    return LlmRequest(
        model="test-model",
        contents=[
            types.Content(
                role="user",
                parts=[
                    types.Part(text="Weather in Paris and Oslo? See the map."),
                    types.Part.from_bytes(data=b"\x89PNG-fake", mime_type="image/png"),
                    types.Part(
                        file_data=types.FileData(
                            file_uri="https://example.invalid/map.jpg", mime_type="image/jpeg"
                        )
                    ),
                ],
            ),
            types.Content(
                role="model",
                parts=[
                    types.Part(text="Two lookups needed.", thought=True),
                    types.Part(text="Checking both."),
                    types.Part(
                        function_call=types.FunctionCall(
                            id="call_a", name="get_weather", args={"city": "Paris"}
                        )
                    ),
                    types.Part(
                        function_call=types.FunctionCall(name="get_weather", args={"city": "Oslo"})
                    ),
                ],
            ),
            types.Content(
                role="user",
                parts=[
                    types.Part(
                        function_response=types.FunctionResponse(
                            id="call_a", name="get_weather", response={"temp_c": 18}
                        )
                    ),
                    types.Part(
                        function_response=types.FunctionResponse(
                            name="get_weather", response={"temp_c": 4}
                        )
                    ),
                ],
            ),
            types.Content(role="user", parts=[types.Part(text="Answer as JSON.")]),
        ],
        config=types.GenerateContentConfig(
            system_instruction="You are a weather bot.",
            tools=[
                types.Tool(
                    function_declarations=[
                        types.FunctionDeclaration(
                            name="get_weather",
                            description="Current weather of a city.",
                            parameters_json_schema=WEATHER_SCHEMA,
                        ),
                        types.FunctionDeclaration(name="get_time"),
                    ]
                )
            ],
            tool_config=types.ToolConfig(mode="ANY", allowed_function_names=["get_weather"]),
            temperature=0.2,
            top_p=0.9,
            max_output_tokens=256,
            stop_sequences=["END"],
            seed=7,
            response_mime_type="application/json",
            response_json_schema={
                "type": "object",
                "properties": {"summary": {"type": "string"}},
            },
        ),
    )


def simple_request(text: str = "Hi") -> LlmRequest:
    """One user message, one declared tool."""
    return LlmRequest(
        model="test-model",
        contents=[types.Content(role="user", parts=[types.Part(text=text)])],
        config=types.GenerateContentConfig(
            tools=[
                types.Tool(
                    function_declarations=[
                        types.FunctionDeclaration(
                            name="get_weather", parameters_json_schema=WEATHER_SCHEMA
                        )
                    ]
                )
            ]
        ),
    )


async def collect(agen: Any) -> list[Any]:
    """All responses of a ``generate_content_async`` call."""
    return [r async for r in agen]


def compact(responses: list[Any]) -> list[dict[str, Any]]:
    """Responses as compact JSON (unset fields dropped), for whole-sequence asserts."""
    return [r.model_dump(mode="json", exclude_none=True) for r in responses]


def text(response: Any) -> str | None:
    """A response's non-thought text."""
    return response.content.text if response.content is not None else None
