"""An app folder for the eval tests: an LlmAgent with a weather tool and a scripted model.

``write_weather_app(parent)`` creates ``parent/weather/`` (agent.py, __init__.py). The model
calls ``get_weather(city=...)`` when asked about "weather in <City>", then answers from the
tool's result; anything else it echoes. "explode" makes the tool raise.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

AGENT_SOURCE = '''
from eventide import LlmAgent
from eventide.testing import FunctionModel, text_response, tool_call_response


def get_weather(city: str) -> dict:
    """The forecast for a city."""
    if city == "Explode":
        raise RuntimeError("the weather service is down")
    return {"city": city, "forecast": "sunny"}


def answer(request):
    last = request.contents[-1]
    for part in last.parts or ():
        if part.function_response is not None:
            city = part.function_response.response["city"]
            return text_response(f"It is sunny in {city}.")
    text = last.text or ""
    if "weather in " in text:
        city = text.split("weather in ", 1)[1].strip(" ?.")
        return tool_call_response(("get_weather", {"city": city}))
    return text_response(f"You said: {text}")


root_agent = LlmAgent(
    name="weather",
    model=FunctionModel(function=answer),
    instruction="Answer questions about the weather.",
    tools=[get_weather],
)
'''


def write_weather_app(parent: Path, name: str = "weather") -> Path:
    """Create the app folder ``parent/name`` and return it."""
    folder = parent / name
    folder.mkdir(parents=True)
    (folder / "__init__.py").write_text("from . import agent\n")
    (folder / "agent.py").write_text(AGENT_SOURCE)
    return folder


def turn(text: str, answer: str | None, calls: list[tuple[str, dict[str, str]]]) -> dict[str, Any]:
    """One expected invocation in the hand-written (tool_uses) shape."""
    return {
        "user_content": {"role": "user", "parts": [{"text": text}]},
        "final_response": None
        if answer is None
        else {"role": "model", "parts": [{"text": answer}]},
        "intermediate_data": {
            "tool_uses": [{"name": name, "args": args} for name, args in calls],
            "tool_responses": [],
            "intermediate_responses": [],
        },
    }
