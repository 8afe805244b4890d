"""``eventide migrate`` maps every import form google-adk apps use (issue 34): module imports
(``from google.adk.agents import llm_agent``, ``import google.adk.runners as r``), dotted
uses after ``import google.adk...``, ``google.adk.workflow`` (Eventide's ``eventide.workflow``
has google-adk's names) and the 2.x top-level names; what it cannot map it reports with the
line and why, and leaves as it was."""

from __future__ import annotations

import textwrap
from pathlib import Path

from click.testing import CliRunner

from eventide.cli.main import cli
from eventide.cli.migrate import migrate_source

_APP = textwrap.dedent(
    """\
    from google.adk.agents import llm_agent
    from google.adk.tools import function_tool as ft
    from google.adk.sessions import in_memory_session_service
    import google.adk.runners as runners_module
    import google.adk.agents
    from google.adk.tools import mcp_tool


    def shout(text: str) -> str:
        return text.upper()


    helper = llm_agent.LlmAgent(name="helper", model="gemini-2.5-flash", tools=[ft.FunctionTool(shout)])
    root_agent = google.adk.agents.SequentialAgent(name="root", sub_agents=[helper])
    toolset_class = mcp_tool.MCPToolset
    runner = runners_module.InMemoryRunner(agent=root_agent, app_name="app")
    sessions = in_memory_session_service.InMemorySessionService()
    """
)


def test_module_imports_and_dotted_uses_become_eventides_and_the_app_runs(tmp_path: Path) -> None:
    report = migrate_source(_APP)
    assert report.unmapped == []
    assert report.new_source is not None
    lines = report.new_source.splitlines()
    assert lines[:6] == [
        "from eventide.agents import llm_agent",
        "from eventide.tools import function_tool as ft",
        "from eventide.sessions import in_memory_session_service",
        "import eventide as runners_module",
        "import eventide",
        "import eventide as mcp_tool",
    ]
    assert "root_agent = eventide.SequentialAgent(" in report.new_source
    assert "toolset_class = mcp_tool.McpToolset" in report.new_source  # renamed at the use
    assert "google.adk" not in report.new_source
    namespace: dict[str, object] = {}
    exec(compile(report.new_source, "agent.py", "exec"), namespace)  # noqa: S102 - the migrated app
    import eventide

    assert isinstance(namespace["root_agent"], eventide.SequentialAgent)
    assert isinstance(namespace["runner"], eventide.InMemoryRunner)
    assert isinstance(namespace["sessions"], eventide.InMemorySessionService)


def test_the_workflow_and_the_2x_top_level_names() -> None:
    source = textwrap.dedent(
        """\
        from google.adk import Agent, Event, Workflow, Context
        from google.adk.workflow import START, DEFAULT_ROUTE, node, FunctionNode, JoinNode
        from google.adk.workflow import Edge, RetryConfig, NodeTimeoutError, BaseNode, Node
        from google.adk import workflow
        import google.adk.workflow

        graph = workflow.Workflow(name="w", edges=[(workflow.START, Agent(name="a"))])
        join = google.adk.workflow.JoinNode
        """
    )
    report = migrate_source(source)
    assert report.unmapped == []
    assert report.new_source == textwrap.dedent(
        """\
        from eventide import Agent, Event, Workflow, Context
        from eventide.workflow import START, DEFAULT_ROUTE, node, FunctionNode, JoinNode
        from eventide.workflow import Edge, RetryConfig, NodeTimeoutError, BaseNode, Node
        from eventide import workflow
        import eventide
        import eventide.workflow

        graph = workflow.Workflow(name="w", edges=[(workflow.START, Agent(name="a"))])
        join = eventide.workflow.JoinNode
        """
    )


def test_request_input_and_node_tool_come_from_the_workflow_package() -> None:
    """google-adk 2.x apps import these from its events and tools packages; Eventide keeps
    them with the workflow. The migrated imports run."""
    source = textwrap.dedent(
        """\
        from google.adk.events import RequestInput
        from google.adk.events.request_input import RequestInput as Ask
        from google.adk.tools._node_tool import NodeTool
        """
    )
    report = migrate_source(source)
    assert report.unmapped == []
    assert report.new_source == textwrap.dedent(
        """\
        from eventide.workflow import RequestInput
        from eventide.workflow import RequestInput as Ask
        from eventide.workflow import NodeTool
        """
    )
    namespace: dict[str, object] = {}
    exec(report.new_source, namespace)  # noqa: S102 - the migrated imports must run
    assert namespace["Ask"] is namespace["RequestInput"]


def test_what_cannot_be_mapped_is_reported_and_left_as_it_was() -> None:
    source = textwrap.dedent(
        """\
        from google.adk.tools import bash_tool
        import google.adk.agents as agents_module
        import google.adk.runners
        from google.adk.workflow import NotAWorkflowName

        tool = bash_tool.ExecuteBashTool()
        agent = agents_module.NoSuchAgent
        runner = google.adk.runners.Runner
        cache = google.adk.runners.NoSuchCache
        """
    )
    report = migrate_source(source)
    reasons = {(u.line, u.code): u.reason for u in report.unmapped}
    assert (
        "Eventide has no ExecuteBashTool" in reasons[(1, "from google.adk.tools import bash_tool")]
    )
    assert (
        "Eventide has no NoSuchAgent" in reasons[(2, "import google.adk.agents as agents_module")]
    )
    assert "google.adk.runners.NoSuchCache" in reasons[(3, "import google.adk.runners")]
    assert (4, "from google.adk.workflow import NotAWorkflowName") in reasons
    assert "a name Eventide lacks" in reasons[(9, "google.adk.runners.NoSuchCache")]
    assert len(report.unmapped) == 5
    assert report.new_source is not None
    lines = report.new_source.splitlines()
    # Every unmappable import is left as it was; `import eventide` joins the one whose other
    # dotted uses it takes.
    assert lines[:5] == [
        "from google.adk.tools import bash_tool",
        "import google.adk.agents as agents_module",
        "import eventide",
        "import google.adk.runners",
        "from google.adk.workflow import NotAWorkflowName",
    ]
    assert "runner = eventide.Runner" in report.new_source
    assert "cache = google.adk.runners.NoSuchCache" in report.new_source


def test_the_cli_reports_module_imports_it_mapped(tmp_path: Path) -> None:
    app = tmp_path / "app"
    app.mkdir()
    (app / "agent.py").write_text(_APP)
    result = CliRunner().invoke(cli, ["migrate", str(app)])
    assert result.exit_code == 0, result.output
    assert "google.adk" not in (app / "agent.py").read_text()
    again = CliRunner().invoke(cli, ["migrate", str(app), "--check"])
    assert again.exit_code == 0 and "0 would change" in again.output
