"""A weather bot written for google-adk, unchanged: run `eventide migrate` on this folder,
then `eventide run` it (see README.md)."""

from typing import Any

from google.adk.agents import LlmAgent
from google.adk.tools import ToolContext
from google.adk.tools.base_tool import BaseTool

FORECASTS = {"paris": ("sunny", 24), "oslo": ("rain", 11), "lima": ("cloudy", 19)}


def get_weather(city: str, tool_context: ToolContext) -> dict[str, Any]:
    """Get the current weather of a city.

    Args:
        city: the city's name, e.g. Paris.
    """
    conditions, temp_c = FORECASTS.get(city.lower(), ("unknown", 0))
    tool_context.state["last_city"] = city
    return {"city": city, "conditions": conditions, "temp_c": temp_c}


def block_atlantis(tool: BaseTool, args: dict[str, Any], tool_context: ToolContext) -> Any:
    """A guard in google-adk's style: it returns a plain string to refuse a call."""
    if str(args.get("city", "")).lower() == "atlantis":
        return "Atlantis is not a real city; no forecast."
    return None


root_agent = LlmAgent(
    name="weather_bot",
    model="gemini-2.5-flash",
    description="Answers questions about the weather.",
    instruction="Answer weather questions with get_weather. Be brief.",
    tools=[get_weather],
    before_tool_callback=block_atlantis,
    output_key="last_answer",
)
