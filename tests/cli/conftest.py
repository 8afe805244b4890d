"""Running the real ``eventide`` command in subprocesses, with no model keys set."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

_KEYS = (
    "GOOGLE_API_KEY",
    "GEMINI_API_KEY",
    "GOOGLE_GENAI_USE_VERTEXAI",
    "OPENAI_API_KEY",
    "OPENAI_BASE_URL",
    "ANTHROPIC_API_KEY",
    "EVENTIDE_MODEL",
    "EVENTIDE_SESSION_DB",
    "EVENTIDE_AUTH_TOKEN",
    "OTEL_EXPORTER_OTLP_ENDPOINT",
    "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
)


def eventide_command() -> list[str]:
    """The installed console script next to this interpreter, else ``python -m``."""
    script = Path(sys.executable).parent / "eventide"
    if script.is_file():
        return [str(script)]
    return [sys.executable, "-m", "eventide.cli"]


@pytest.fixture
def cli_env() -> dict[str, str]:
    """The environment of a person with no model configured, and no colours."""
    env = {k: v for k, v in os.environ.items() if k not in _KEYS}
    env["NO_COLOR"] = "1"
    env["COLUMNS"] = "200"
    env["PYTHONUNBUFFERED"] = "1"
    return env


@pytest.fixture
def invoke(monkeypatch: pytest.MonkeyPatch) -> Callable[..., Result]:
    """Run the CLI in this process (fast), from ``cwd``, with no model keys set."""
    from eventide.cli.main import cli

    def run(args: list[str], *, cwd: Path, input_text: str | None = None) -> Result:
        monkeypatch.chdir(cwd)
        saved = list(sys.path)
        env: dict[str, str | None] = {key: None for key in _KEYS}
        env |= {"NO_COLOR": "1", "COLUMNS": "200"}
        try:
            return CliRunner(env=env).invoke(cli, args, input=input_text, catch_exceptions=False)
        finally:
            sys.path[:] = saved

    return run


def run_cli(
    args: list[str], *, cwd: Path, env: dict[str, str], input_text: str | None = None
) -> subprocess.CompletedProcess[str]:
    """Run ``eventide ARGS`` to completion."""
    return subprocess.run(
        [*eventide_command(), *args],
        cwd=cwd,
        env=env,
        input=input_text,
        capture_output=True,
        text=True,
        timeout=120,
    )
