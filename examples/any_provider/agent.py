"""An assistant with a function tool that runs on any provider: change one string.

The model comes from the environment variable ``EVENTIDE_MODEL`` (default
``gemini-2.5-flash``), with the provider's key in its usual variable::

    EVENTIDE_MODEL=gemini-2.5-flash      GOOGLE_API_KEY=...      (or GEMINI_API_KEY)
    EVENTIDE_MODEL=gpt-4.1-mini          OPENAI_API_KEY=...
    EVENTIDE_MODEL=claude-sonnet-4-5     ANTHROPIC_API_KEY=...
    EVENTIDE_MODEL=litellm/mistral/mistral-large-latest   MISTRAL_API_KEY=...

A local model behind an OpenAI-compatible server needs no key::

    ollama serve & ollama pull llama3.2
    EVENTIDE_MODEL=ollama/llama3.2                      (OLLAMA_BASE_URL if not on :11434)

    vllm serve Qwen/Qwen2.5-7B-Instruct --enable-auto-tool-choice --tool-call-parser hermes
    EVENTIDE_MODEL=openai/Qwen/Qwen2.5-7B-Instruct OPENAI_BASE_URL=http://localhost:8000/v1

``root_agent`` is what ``eventide run examples/any_provider`` and the server load.
"""

from __future__ import annotations

import os

from eventide import LlmAgent
from eventide.tools.function_tool import FunctionTool

DEFAULT_MODEL = "gemini-2.5-flash"

# A fixed table, so the example answers the same everywhere and needs no network itself.
_FORECASTS = {
    "oslo": {"condition": "snow", "temp_c": -3},
    "paris": {"condition": "cloudy", "temp_c": 11},
    "lisbon": {"condition": "sunny", "temp_c": 19},
}


def get_weather(city: str) -> dict[str, object]:
    """Today's weather in a city.

    Args:
        city: the city's name, e.g. "Oslo".
    """
    forecast = _FORECASTS.get(city.strip().lower())
    if forecast is None:
        return {"status": "unknown city", "known": sorted(c.title() for c in _FORECASTS)}
    return {"status": "ok", "city": city, **forecast}


def build_agent(model: str | None = None) -> LlmAgent:
    """The assistant, on ``model`` or else ``EVENTIDE_MODEL`` (default gemini-2.5-flash)."""
    return LlmAgent(
        name="weather_assistant",
        model=model or os.environ.get("EVENTIDE_MODEL") or DEFAULT_MODEL,
        instruction=(
            "You answer questions about today's weather. Always call get_weather for each "
            "city asked about, then answer in one short sentence per city."
        ),
        tools=[FunctionTool(get_weather)],
    )


root_agent = build_agent()
