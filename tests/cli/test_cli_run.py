"""``eventide new`` and ``eventide run`` end to end, in real subprocesses."""

from __future__ import annotations

import asyncio
import textwrap
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import ClassVar

import pytest

from tests.cli.conftest import run_cli

DEMO_LINE = "Using the offline demo model"


@pytest.fixture
def app_dir(tmp_path: Path, cli_env: dict[str, str]) -> Path:
    """A fresh app made by `eventide new weather_bot`."""
    result = run_cli(["new", "weather_bot"], cwd=tmp_path, env=cli_env)
    assert result.returncode == 0, result.stderr
    assert "eventide run weather_bot" in result.stdout
    return tmp_path / "weather_bot"


def test_new_then_run_query_uses_the_demo_model_and_the_real_tool(
    app_dir: Path, cli_env: dict[str, str]
) -> None:
    """A tool-call turn: the call, its result, the tool's state change and the final
    answer are shown, and the first line names the demo model."""
    assert sorted(p.name for p in app_dir.iterdir()) == [".gitignore", "__init__.py", "agent.py"]

    result = run_cli(
        ["run", "weather_bot", "--query", "What is the weather in Tokyo?"],
        cwd=app_dir.parent,
        env=cli_env,
    )

    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0].startswith(DEMO_LINE)
    assert "GOOGLE_API_KEY" in lines[0] and "EVENTIDE_MODEL" in lines[0]
    assert lines[1].startswith("app weather_bot · session ")
    assert "(new session)" in lines[1]
    assert lines[2:] == [
        '  → get_weather(city="Tokyo")',
        '  ← get_weather: {"city": "Tokyo", "forecast": "cloudy, 18°C"}',
        "  · state last_city = Tokyo",
        'weather_bot › get_weather returned: {"city": "Tokyo", "forecast": "cloudy, 18°C"}',
    ]
    assert (app_dir / ".eventide" / "sessions.db").is_file()
    assert result.stderr == ""


@pytest.mark.slow
def test_session_resumes_across_two_processes_from_the_sqlite_file(
    app_dir: Path, cli_env: dict[str, str]
) -> None:
    """The log is the truth: a second process resuming the session sees the first one's
    events and state (committed to the SQLite file in the app folder)."""
    first = run_cli(
        ["run", str(app_dir), "--session", "trip", "--user", "ana", "-q", "weather in Paris"],
        cwd=app_dir.parent,
        env=cli_env,
    )
    assert first.returncode == 0, first.stderr
    assert "session trip (new session) · user ana" in first.stdout

    second = run_cli(
        ["run", str(app_dir), "--session", "trip", "--user", "ana", "-q", "weather in London"],
        cwd=app_dir.parent,
        env=cli_env,
    )
    assert second.returncode == 0, second.stderr
    assert "session trip (resumed session, 4 events)" in second.stdout
    assert '  → get_weather(city="London")' in second.stdout

    from eventide.sessions.sql_session_service import SqlSessionService

    async def read() -> tuple[list[str], dict[str, object]]:
        service = SqlSessionService(f"sqlite+aiosqlite:///{app_dir / '.eventide' / 'sessions.db'}")
        try:
            session = await service.get_session(
                app_name="weather_bot", user_id="ana", session_id="trip"
            )
            assert session is not None
            return [e.author for e in session.events], session.state
        finally:
            await service.close()

    authors, state = asyncio.run(read())
    assert authors == ["user", "weather_bot", "weather_bot", "weather_bot"] * 2
    assert state == {"last_city": "London"}


def test_trace_prints_spans_to_stderr(app_dir: Path, cli_env: dict[str, str]) -> None:
    result = run_cli(
        ["run", "weather_bot", "--trace", "--session-db", "memory:", "-q", "weather in Oslo"],
        cwd=app_dir.parent,
        env=cli_env,
    )
    assert result.returncode == 0, result.stderr
    names = [line.split()[1:3] for line in result.stderr.splitlines()]
    assert names == [
        ["chat", "eventide-demo"],
        ["execute_tool", "get_weather"],
        ["chat", "eventide-demo"],
        ["invoke_agent", "weather_bot"],
        ["invocation", "weather_bot"],
    ]
    assert result.stdout.splitlines()[0].startswith(DEMO_LINE)


def write_app(folder: Path, agent_py: str) -> Path:
    folder.mkdir(parents=True)
    (folder / "agent.py").write_text(textwrap.dedent(agent_py), encoding="utf-8")
    return folder


def test_model_error_event_exits_1(tmp_path: Path, cli_env: dict[str, str]) -> None:
    """Error events: a model error becomes an error event; the CLI shows it and exits 1."""
    write_app(
        tmp_path / "flaky",
        """
        from eventide import LlmResponse
        from eventide.agents import LlmAgent
        from eventide.testing import ScriptedModel

        failing = LlmResponse(error_code="RESOURCE_EXHAUSTED", error_message="quota used up")
        root_agent = LlmAgent(name="flaky", model=ScriptedModel(responses=[failing]))
        """,
    )
    result = run_cli(
        ["run", "flaky", "--session-db", "memory:", "-q", "hi"], cwd=tmp_path, env=cli_env
    )
    assert result.returncode == 1
    assert result.stdout.splitlines()[0] == "Model: scripted"
    assert "✗ flaky: RESOURCE_EXHAUSTED: quota used up" in result.stdout


def test_run_prepares_the_model_in_a_background_thread(
    tmp_path: Path, cli_env: dict[str, str]
) -> None:
    """Rule (first call): `eventide run` prepares the app's model (SDK import, client) in a
    background thread as soon as the app is loaded, not in the first turn."""
    write_app(
        tmp_path / "prepared",
        """
        import threading
        from pathlib import Path

        from eventide import LlmResponse
        from eventide.agents import LlmAgent
        from eventide.testing import ScriptedModel

        class Prepared(ScriptedModel):
            def prepare(self) -> None:
                marker = Path(__file__).with_name("prepared.txt")
                marker.write_text(threading.current_thread().name)

        answer = LlmResponse.model_validate(
            {"content": {"role": "model", "parts": [{"text": "hello"}]}}
        )
        root_agent = LlmAgent(name="prepared", model=Prepared(responses=[answer]))
        """,
    )
    result = run_cli(
        ["run", "prepared", "--session-db", "memory:", "-q", "hi"], cwd=tmp_path, env=cli_env
    )
    assert result.returncode == 0, result.stderr
    assert "prepared › hello" in result.stdout
    marker = tmp_path / "prepared" / "prepared.txt"
    assert marker.read_text() == "eventide-prepare-models"


def test_broken_app_exits_2_and_shows_its_traceback(
    tmp_path: Path, cli_env: dict[str, str]
) -> None:
    write_app(tmp_path / "typo", "from eventide.agents import LlmAgnt\n")
    result = run_cli(["run", "typo", "-q", "hi"], cwd=tmp_path, env=cli_env)
    assert result.returncode == 2
    assert "App 'typo' failed while importing" in result.stderr
    assert 'agent.py", line 1, in <module>' in result.stderr
    assert "ImportError: cannot import name 'LlmAgnt'" in result.stderr


class _Collector(BaseHTTPRequestHandler):
    """An OTLP/HTTP receiver: keeps each POSTed body (protobuf) by path."""

    received: ClassVar[list[tuple[str, bytes]]] = []

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        self.received.append((self.path, body))
        self.send_response(200)
        self.send_header("Content-Type", "application/x-protobuf")
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, format: str, *args: object) -> None:
        return None


def test_otel_environment_exports_spans_over_otlp(app_dir: Path, cli_env: dict[str, str]) -> None:
    """Without --trace, OTEL_EXPORTER_OTLP_ENDPOINT alone turns tracing on: the spans of the
    turn reach a local OTLP/HTTP receiver (stdout stays free of traces)."""
    pytest.importorskip("opentelemetry.exporter.otlp.proto.http")
    _Collector.received = []
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Collector)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        env = {
            **cli_env,
            "OTEL_EXPORTER_OTLP_ENDPOINT": f"http://127.0.0.1:{server.server_port}",
            "OTEL_SERVICE_NAME": "weather-cli-test",
        }
        result = run_cli(
            ["run", "weather_bot", "--session-db", "memory:", "-q", "weather in Oslo"],
            cwd=app_dir.parent,
            env=env,
        )
    finally:
        server.shutdown()
        thread.join()
        server.server_close()
    assert result.returncode == 0, result.stderr
    assert "[trace]" not in result.stdout + result.stderr
    paths = {path for path, _ in _Collector.received}
    assert paths == {"/v1/traces"}
    payload = b"".join(body for _, body in _Collector.received)
    for name in (b"invocation weather_bot", b"invoke_agent weather_bot", b"chat eventide-demo"):
        assert name in payload
    assert b"execute_tool get_weather" in payload
    assert b"weather-cli-test" in payload


def test_eventide_model_without_its_key_is_an_error_naming_the_variable(
    tmp_path: Path, cli_env: dict[str, str]
) -> None:
    """Rule: EVENTIDE_MODEL names a real model, so its missing key is an error that says
    which variable to set, not a silent switch to the demo model (issue 33)."""
    assert run_cli(["new", "bot"], cwd=tmp_path, env=cli_env).returncode == 0
    env = {**cli_env, "EVENTIDE_MODEL": "gpt-4o"}
    result = run_cli(["run", "bot", "-q", "hi"], cwd=tmp_path, env=env)
    assert result.returncode == 2, result.stdout + result.stderr
    assert "EVENTIDE_MODEL=gpt-4o needs a key and none is set: set OPENAI_API_KEY" in " ".join(
        result.stderr.split()
    )
    assert "demo model" not in result.stdout
