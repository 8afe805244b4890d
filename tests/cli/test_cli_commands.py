"""The CLI's options, messages and exit codes, run in this process (click's runner)."""

from __future__ import annotations

import textwrap
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import Result

from eventide import LlmAgent

DEMO_LINE = "Using the offline demo model"
Invoke = Callable[..., Result]


@pytest.fixture
def app_dir(tmp_path: Path, invoke: Invoke) -> Path:
    result = invoke(["new", "weather_bot"], cwd=tmp_path)
    assert result.exit_code == 0, result.output
    return tmp_path / "weather_bot"


def write_app(folder: Path, agent_py: str) -> Path:
    folder.mkdir(parents=True)
    (folder / "agent.py").write_text(textwrap.dedent(agent_py), encoding="utf-8")
    return folder


def test_new_writes_an_app_the_loader_accepts(app_dir: Path) -> None:
    from eventide.apps.loader import discover_apps, load_app

    assert list(discover_apps(app_dir.parent)) == ["weather_bot"]
    app = load_app(app_dir)
    assert app.name == "weather_bot"
    assert isinstance(app.root_agent, LlmAgent)
    assert app.root_agent.model == ""  # the model comes from the environment, or the demo


def test_session_db_option_stores_sessions_elsewhere(
    app_dir: Path, invoke: Invoke, tmp_path: Path
) -> None:
    db = tmp_path / "elsewhere.db"
    result = invoke(
        ["run", "weather_bot", "--session-db", f"sqlite:///{db}", "-q", "weather in Rome"],
        cwd=app_dir.parent,
    )
    assert result.exit_code == 0, result.output
    assert f"sessions in sqlite:///{db}" in result.stdout
    assert db.is_file()
    assert not (app_dir / ".eventide" / "sessions.db").exists()


def test_run_without_trace_prints_nothing_on_stderr(app_dir: Path, invoke: Invoke) -> None:
    result = invoke(
        ["run", "weather_bot", "--session-db", "memory:", "-q", "hello"], cwd=app_dir.parent
    )
    assert (result.exit_code, result.stderr) == (0, "")
    assert result.stdout.splitlines()[0].startswith(DEMO_LINE)
    assert "[demo model]" in result.stdout


def test_no_stream_prints_the_same_answer(app_dir: Path, invoke: Invoke) -> None:
    result = invoke(
        ["run", "weather_bot", "--no-stream", "--session-db", "memory:", "-q", "weather in Oslo"],
        cwd=app_dir.parent,
    )
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines()[-1] == (
        'weather_bot › get_weather returned: {"city": "Oslo", "forecast": "clear skies, 20°C"}'
    )


def test_configured_model_is_named_on_the_first_line(tmp_path: Path, invoke: Invoke) -> None:
    write_app(
        tmp_path / "scripted_app",
        """
        from eventide.agents import LlmAgent
        from eventide.testing import ScriptedModel

        root_agent = LlmAgent(name="bot", model=ScriptedModel(responses=["Hi there."]))
        """,
    )
    result = invoke(["run", "scripted_app", "--session-db", "memory:", "-q", "hi"], cwd=tmp_path)
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines()[0] == "Model: scripted"
    assert result.stdout.splitlines()[-1] == "bot › Hi there."


def test_app_code_failing_during_a_turn_exits_1(tmp_path: Path, invoke: Invoke) -> None:
    write_app(
        tmp_path / "crashy",
        """
        from eventide.agents import LlmAgent
        from eventide.testing import ScriptedModel

        root_agent = LlmAgent(name="crashy", model=ScriptedModel(responses=[RuntimeError("boom")]))
        """,
    )
    result = invoke(["run", "crashy", "--session-db", "memory:", "-q", "hi"], cwd=tmp_path)
    assert result.exit_code == 1
    assert "Error: RuntimeError in the app: boom" in result.stderr


def test_unconfigured_model_name_is_a_usage_error(tmp_path: Path, invoke: Invoke) -> None:
    write_app(
        tmp_path / "odd_model",
        """
        from eventide.agents import LlmAgent

        root_agent = LlmAgent(name="odd", model="no-such-model-family")
        """,
    )
    result = invoke(["run", "odd_model", "--session-db", "memory:", "-q", "hi"], cwd=tmp_path)
    assert result.exit_code == 2, result.output
    assert "No model connector serves 'no-such-model-family'" in result.stderr


@pytest.mark.parametrize(
    "args, message",
    [
        (["run", "no_such_app"], "Cannot find app 'no_such_app'"),
        (["run", "./missing_dir"], "App folder './missing_dir' does not exist"),
        (["run", "weather_bot", "--session-db", "mysql://x/y", "-q", "hi"], "unsupported scheme"),
        (["run"], "Missing argument 'APP'"),
        (["run", "weather_bot", "--bogus"], "No such option '--bogus'"),
        (["new", "weather_bot"], "already exists"),
        (["new", "bad-name"], "must be a Python identifier"),
        (["api-server", "no_such_dir"], "does not exist or is not a folder"),
    ],
)
def test_usage_errors_exit_2_with_a_readable_message(
    args: list[str], message: str, app_dir: Path, invoke: Invoke
) -> None:
    result = invoke(args, cwd=app_dir.parent)
    assert result.exit_code == 2, result.output
    assert message in result.stderr
    assert "Traceback" not in result.stderr


def test_help_documents_exit_codes_and_models(tmp_path: Path, invoke: Invoke) -> None:
    for command in (["--help"], ["run", "--help"], ["api-server", "--help"]):
        result = invoke(command, cwd=tmp_path)
        assert result.exit_code == 0
        assert "Exit codes: 0 ok; 1 runtime error" in result.stdout
        assert "2 usage error" in result.stdout
        assert "offline demo model" in result.stdout


def test_end_of_input_ends_an_interactive_run_cleanly(app_dir: Path, invoke: Invoke) -> None:
    """Interactive mode reading a pipe: a message, a blank line (ignored), then `exit`."""
    result = invoke(
        ["run", "weather_bot", "--session-db", "memory:"],
        cwd=app_dir.parent,
        input_text="weather in Paris\n\nexit\nnever sent\n",
    )
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines()[0].startswith(DEMO_LINE)
    assert '  → get_weather(city="Paris")' in result.stdout
    assert "never sent" not in result.stdout


@pytest.mark.parametrize(
    "url, shown",
    [
        ("postgresql://bob:s3cret@db:5432/app", "postgresql://bob:***@db:5432/app"),
        ("postgresql+asyncpg://bob@db/app", "postgresql+asyncpg://bob@db/app"),
        ("sqlite+aiosqlite:////tmp/x.db", "sqlite+aiosqlite:////tmp/x.db"),
    ],
)
def test_database_passwords_are_never_printed(url: str, shown: str) -> None:
    from eventide.cli.run_command import redact_password

    assert redact_password(url) == shown


def test_the_support_desk_example_runs_offline_on_the_demo_model(invoke: Invoke) -> None:
    """The shipped example runs with no key: triage transfers to tech, which calls its real
    tool with an argument taken from the message."""
    repo = Path(__file__).resolve().parents[2]
    example = repo / "examples" / "support_desk"
    result = invoke(
        ["run", str(example), "--session-db", "memory:", "-q", "the api seems down"], cwd=repo
    )
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[0].startswith(DEMO_LINE)
    assert lines[2:4] == ["  ⇢ transfer to tech", '  → check_service_status(service="api")']
