"""Apps written for google-adk load as they are (``eventide.cli.adk_apps``): their imports
mapped to Eventide's in memory, with or without google-adk installed (issue 33)."""

from __future__ import annotations

import os
import subprocess
import sys
import sysconfig
import textwrap
from pathlib import Path

import pytest

from eventide.agents.llm_agent import LlmAgent
from eventide.agents.sequential_agent import SequentialAgent
from eventide.cli.adk_apps import load_any_app
from eventide.errors import AppLoadError
from tests.adk_env import adk_python

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"

_WEATHER = """\
from google.adk.agents import LlmAgent
from google.adk.tools import ToolContext

from . import helpers


def get_weather(city: str, tool_context: ToolContext) -> dict:
    \"\"\"The weather of a city.\"\"\"
    return {"city": city, "forecast": helpers.FORECAST}


root_agent = LlmAgent(name="bot", model="gemini-2.5-flash", tools=[get_weather])
"""


def _app(folder: Path, agent_source: str, **more: str) -> Path:
    folder.mkdir()
    (folder / "__init__.py").write_text("from . import agent\n")
    (folder / "agent.py").write_text(agent_source)
    for name, text in more.items():
        (folder / f"{name}.py").write_text(text)
    return folder


def test_the_adk_examples_load_as_eventide_agents() -> None:
    """The three examples of the README's `eventide web examples/`, unchanged on disk."""
    kinds = {
        "adk_weather_bot": LlmAgent,
        "adk_refund_desk": LlmAgent,
        "adk_review_loop": SequentialAgent,
    }
    for name, kind in kinds.items():
        loaded = load_any_app(EXAMPLES / name)
        assert loaded.written_for_adk, name
        assert isinstance(loaded.app.root_agent, kind), name
        assert "google.adk" in (EXAMPLES / name / "agent.py").read_text()


def test_an_eventide_app_is_loaded_as_it_is() -> None:
    loaded = load_any_app(EXAMPLES / "support_desk")
    assert not loaded.written_for_adk
    assert isinstance(loaded.app.root_agent, LlmAgent)


def test_only_the_apps_own_modules_are_rewritten_and_nothing_is_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A module of the app that does not mention google-adk is imported as usual; the
    rewritten one gets no bytecode (its cached code would be the rewritten text's)."""
    monkeypatch.setattr(sys, "dont_write_bytecode", False)
    folder = _app(tmp_path / "weather_adk", _WEATHER, helpers='FORECAST = "sunny"\n')
    before = (folder / "agent.py").read_text()
    loaded = load_any_app(folder)
    agent = loaded.app.root_agent
    assert isinstance(agent, LlmAgent)
    assert [getattr(tool, "__name__", None) for tool in agent.tools] == ["get_weather"]
    assert (folder / "agent.py").read_text() == before
    cached = [p.name for p in (folder / "__pycache__").glob("*.pyc")]
    assert any(name.startswith("helpers.") for name in cached)
    assert not any(name.startswith("agent.") for name in cached)
    module = sys.modules["weather_adk.agent"]
    assert module.__file__ == str(folder / "agent.py")
    assert module.get_weather("Oslo", None) == {"city": "Oslo", "forecast": "sunny"}


def test_a_use_eventide_lacks_is_one_line_naming_it(tmp_path: Path) -> None:
    source = "from google.adk.tools import bash_tool\nroot_agent = bash_tool.ExecuteBashTool()\n"
    folder = _app(tmp_path / "bash_adk", source)
    with pytest.raises(AppLoadError) as caught:
        load_any_app(folder)
    message = str(caught.value)
    assert "\n" not in message
    assert message.startswith("App 'bash_adk' is written for google-adk and uses what")
    assert "agent.py line 1" in message and "ExecuteBashTool" in message


def test_the_examples_load_with_google_adk_installed() -> None:
    """In google-adk 2.13's environment (Eventide's CLI dependencies it lacks added after
    its own packages): the apps still run on Eventide, and google.adk is not imported."""
    python = adk_python()
    probe = textwrap.dedent(
        """\
        import site, sys
        site.addsitedir(sys.argv[1])
        import importlib.metadata
        assert importlib.metadata.version("google-adk") == "2.13.0"
        from eventide.cli.adk_apps import load_any_app
        for name in ("adk_weather_bot", "adk_refund_desk", "adk_review_loop"):
            loaded = load_any_app(sys.argv[2] + "/" + name)
            print(name, loaded.written_for_adk, type(loaded.app.root_agent).__module__)
        print("google.adk imported:", "google.adk" in sys.modules)
        """
    )
    done = subprocess.run(
        [str(python), "-c", probe, sysconfig.get_paths()["purelib"], str(EXAMPLES)],
        env={**os.environ, "PYTHONPATH": str(ROOT / "src")},
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.splitlines() == [
        "adk_weather_bot True eventide.agents.llm_agent",
        "adk_refund_desk True eventide.agents.llm_agent",
        "adk_review_loop True eventide.agents.sequential_agent",
        "google.adk imported: False",
    ]
