"""``eventide migrate``: the codemod that rewrites a google-adk project's imports."""

from __future__ import annotations

import runpy
import textwrap
from pathlib import Path

from click.testing import CliRunner

from eventide.cli.main import cli
from eventide.cli.migrate import migrate_source

# An ADK-style app using every google-adk name Eventide provides for issue 14.
ADK_APP = textwrap.dedent(
    '''\
    """An agent written for google-adk."""
    from google.adk.agents import Agent, LlmAgent, LoopAgent, SequentialAgent  # agents
    from google.adk.agents.invocation_context import InvocationContext
    from google.adk.agents.readonly_context import ReadonlyContext
    from google.adk.agents.run_config import RunConfig
    from google.adk.apps import App, ResumabilityConfig
    from google.adk.artifacts import FileArtifactService, InMemoryArtifactService
    from google.adk.code_executors import BuiltInCodeExecutor
    from google.adk.planners import BuiltInPlanner, PlanReActPlanner
    from google.adk.plugins import BasePlugin, PluginManager
    from google.adk.runners import InMemoryRunner, Runner
    from google.adk.tools import (
        FunctionTool,
        LongRunningFunctionTool,
        ToolContext,
        VertexAiSearchTool,
        exit_loop,
        google_search,
        url_context,
    )
    from google.adk.tools.base_toolset import BaseToolset
    from google.adk.tools.google_search_tool import GoogleSearchTool
    from google.adk.tools.langchain_tool import LangchainTool
    from google.adk.tools.crewai_tool import CrewaiTool
    from google.adk.tools.mcp_tool.mcp_toolset import MCPToolset
    from google.genai import types


    def lookup(city: str, tool_context: ToolContext) -> dict:
        """Look a city up."""
        return {"city": city}


    researcher = LlmAgent(
        name="researcher",
        model="gemini-2.5-flash",
        tools=[google_search, url_context],
        planner=BuiltInPlanner(thinking_config=types.ThinkingConfig(thinking_budget=128)),
        code_executor=BuiltInCodeExecutor(),
    )
    writer = Agent(
        name="writer",
        model=LlmAgent.DEFAULT_MODEL,
        static_instruction="Write clearly.",
        planner=PlanReActPlanner(),
        tools=[FunctionTool(lookup)],
        generate_content_config=types.GenerateContentConfig(temperature=0.2),
    )
    root_agent = SequentialAgent(name="pipeline", sub_agents=[researcher, writer])
    app = App(
        name="pipeline_app",
        root_agent=root_agent,
        resumability_config=ResumabilityConfig(is_resumable=True),
    )
    NAMES = [
        InvocationContext, ReadonlyContext, RunConfig, FileArtifactService,
        InMemoryArtifactService, BasePlugin, PluginManager, InMemoryRunner, Runner,
        LongRunningFunctionTool, VertexAiSearchTool, exit_loop, BaseToolset,
        GoogleSearchTool, LangchainTool, CrewaiTool, MCPToolset, LoopAgent,
    ]
    '''
)


def test_migrate_rewrites_every_name_and_the_result_runs_on_eventide(tmp_path: Path) -> None:
    """Issue 14: `eventide migrate PATH` rewrites each google-adk import (and google.genai's
    types) to Eventide, keeps comments and layout, reports each change, and the migrated
    app imports and builds on Eventide; `--check` exits 1 before and 0 after."""
    app = tmp_path / "pipeline"
    app.mkdir()
    (app / "agent.py").write_text(ADK_APP)
    runner = CliRunner()
    check = runner.invoke(cli, ["migrate", str(app), "--check"])
    assert check.exit_code == 1, check.output
    assert "1 would change" in check.output
    assert (app / "agent.py").read_text() == ADK_APP  # --check changes nothing

    result = runner.invoke(cli, ["migrate", str(app)])
    assert result.exit_code == 0, result.output
    migrated = (app / "agent.py").read_text()
    assert "google.adk" not in migrated and "google.genai" not in migrated
    assert "from eventide import Agent, LlmAgent, LoopAgent, SequentialAgent  # agents" in migrated
    assert "from eventide import McpToolset as MCPToolset" in migrated
    assert "from eventide import types" in migrated
    assert "0 use(s) not mapped" in result.output
    assert "agent.py:2: from google.adk.agents import" in result.output

    namespace = runpy.run_path(str(app / "agent.py"))
    import eventide

    assert isinstance(namespace["app"], eventide.App)
    config = namespace["app"].resumability_config
    assert config is not None and config.is_resumable
    assert isinstance(namespace["root_agent"].sub_agents[0].planner, eventide.BuiltInPlanner)

    again = runner.invoke(cli, ["migrate", str(app), "--check"])
    assert again.exit_code == 0 and "0 would change" in again.output


def test_migrate_reports_what_it_cannot_map() -> None:
    """Issue 14: every use the codemod cannot map is reported with its line and reason; an
    import mixing mapped and unmapped names is split, and google.genai types stay when the
    file uses a type Eventide does not have. Issue 34: a module import or dotted use is
    reported only when it reads a name Eventide lacks."""
    source = textwrap.dedent(
        """\
        from google.adk.tools import google_search, transfer_to_agent
        from google.adk.sessions import VertexAiSessionService
        from google.adk import agents
        import google.adk.runners
        from google.genai import types

        search = types.GoogleSearch()
        runner_class = google.adk.runners.NoSuchRunner
        config = agents.NoSuchConfig
        """
    )
    report = migrate_source(source)
    assert report.new_source is not None
    assert report.new_source.splitlines()[:2] == [
        "from eventide import google_search",
        "from google.adk.tools import transfer_to_agent",
    ]
    assert "from google.genai import types" in report.new_source
    assert "import google.adk.runners" in report.new_source
    reasons = {(u.line, u.code): u.reason for u in report.unmapped}
    assert (
        "remove it from the agent's tools"
        in reasons[(1, "from google.adk.tools import transfer_to_agent")]
    )
    assert (
        "SqlSessionService"
        in reasons[(2, "from google.adk.sessions import VertexAiSessionService")]
    )
    assert "Eventide has no NoSuchConfig" in reasons[(3, "from google.adk import agents")]
    assert "NoSuchRunner" in reasons[(4, "import google.adk.runners")]
    assert (
        "eventide.types has no GoogleSearch"
        in reasons[(5, "from google.genai import types (types.GoogleSearch)")]
    )
    assert "a name Eventide lacks" in reasons[(8, "google.adk.runners.NoSuchRunner")]


def test_migrate_leaves_invalid_python_alone(tmp_path: Path) -> None:
    """Bad input: a file that is not valid Python is reported and left unchanged."""
    broken = tmp_path / "broken.py"
    broken.write_text("from google.adk.agents import (\n")
    result = CliRunner().invoke(cli, ["migrate", str(tmp_path)])
    assert result.exit_code == 0
    assert "not valid Python" in result.output
    assert broken.read_text() == "from google.adk.agents import (\n"
