"""``eventide new NAME``: write an app folder that runs at once, offline or with a real model."""

from __future__ import annotations

from pathlib import Path

from eventide.errors import UsageError

__all__ = ["create_app_folder"]

_INIT = '''"""The {name} agent app: `eventide run {name}` chats with it."""

from . import agent

__all__ = ["agent"]
'''

_AGENT = '''"""The {name} agent app.

Run it with `eventide run {name}` (add `--query "weather in Paris"` for one turn), or serve it
with `eventide web .` from the folder above this one.

The model: set `model="gemini-2.5-flash"` (or any name Eventide knows) below, or leave it out
and set EVENTIDE_MODEL or a provider key (GOOGLE_API_KEY, OPENAI_API_KEY, ANTHROPIC_API_KEY)
in the environment. With none of them, the CLI runs the app on its offline demo model, which
calls the tools below by matching words of your message.
"""

from eventide import Agent, ToolContext

_FORECASTS = {{
    "paris": "sunny, 21°C",
    "london": "light rain, 15°C",
    "tokyo": "cloudy, 18°C",
}}


def get_weather(city: str, tool_context: ToolContext) -> dict[str, str]:
    """Get today's weather forecast for a city.

    Args:
        city: the city's name, e.g. "Paris".
    """
    forecast = _FORECASTS.get(city.strip().lower(), "clear skies, 20°C")
    # State written by a tool is committed with the tool's result event.
    tool_context.state["last_city"] = city
    return {{"city": city, "forecast": forecast}}


root_agent = Agent(
    name="{name}",
    description="Answers questions about the weather.",
    instruction=(
        "You help people with the weather. Use get_weather for any question about a "
        "city's weather, then answer in one friendly sentence."
    ),
    tools=[get_weather],
)
'''

_GITIGNORE = """# Local sessions and artifacts written by `eventide run`.
.eventide/
__pycache__/
"""


def create_app_folder(name: str, parent: Path) -> Path:
    """Create ``parent/name`` with ``__init__.py``, ``agent.py`` and ``.gitignore``.

    Raises:
        UsageError: ``name`` is not a Python identifier, or the folder already exists.
    """
    if not name.isidentifier() or name == "user":
        raise UsageError(
            f"App name {name!r} must be a Python identifier other than 'user' (letters, digits "
            "and underscores, not starting with a digit), e.g. 'weather_agent'."
        )
    folder = parent / name
    if folder.exists():
        raise UsageError(
            f"{str(folder)!r} already exists; choose another name or remove the folder."
        )
    folder.mkdir(parents=True)
    (folder / "__init__.py").write_text(_INIT.format(name=name), encoding="utf-8")
    (folder / "agent.py").write_text(_AGENT.format(name=name), encoding="utf-8")
    (folder / ".gitignore").write_text(_GITIGNORE, encoding="utf-8")
    return folder
