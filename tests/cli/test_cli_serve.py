"""``eventide api-server`` / ``eventide web``: the command starts a real uvicorn server."""

from __future__ import annotations

import signal
import socket
import subprocess
import time
from pathlib import Path

import httpx
import pytest

from tests.cli.conftest import eventide_command, run_cli


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def wait_until_healthy(process: subprocess.Popen[str], base: str) -> None:
    """Poll /health until it answers (or the process died); no fixed sleep."""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if process.poll() is not None:
            out, err = process.communicate()
            pytest.fail(f"server exited with {process.returncode}:\n{out}\n{err}")
        try:
            if httpx.get(f"{base}/health", timeout=1).status_code == 200:
                return
        except httpx.TransportError:
            time.sleep(0.05)  # polling interval for a condition, not a timing assumption
    pytest.fail("server did not become healthy")


def _start(args: list[str], cwd: Path, env: dict[str, str]) -> subprocess.Popen[str]:
    """``eventide ARGS`` in a subprocess, its output captured."""
    return subprocess.Popen(
        [*eventide_command(), *args],
        cwd=cwd,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


@pytest.mark.slow
@pytest.mark.parametrize("command", ["api-server", "web"])
def test_server_serves_a_new_app_on_the_demo_model_and_stops_on_sigint(
    command: str, tmp_path: Path, cli_env: dict[str, str]
) -> None:
    """A turn through /run on an app made by `eventide new`, with no model configured: the
    CLI gave the app the demo model, so the real tool runs; SIGINT stops the server with 0."""
    assert run_cli(["new", "weather_bot"], cwd=tmp_path, env=cli_env).returncode == 0
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    process = _start(
        [command, str(tmp_path), "--port", str(port), "--auth-token", "t0k"], tmp_path, cli_env
    )
    try:
        wait_until_healthy(process, base)
        headers = {"Authorization": "Bearer t0k"}
        assert httpx.get(f"{base}/list-apps", timeout=10).status_code == 401
        assert httpx.get(f"{base}/list-apps", headers=headers, timeout=10).json() == ["weather_bot"]
        created = httpx.post(
            f"{base}/apps/weather_bot/users/u/sessions", headers=headers, json={}, timeout=10
        )
        session_id = created.json()["id"]
        events = httpx.post(
            f"{base}/run",
            headers=headers,
            json={
                "app_name": "weather_bot",
                "user_id": "u",
                "session_id": session_id,
                "new_message": {"role": "user", "parts": [{"text": "weather in Paris"}]},
            },
            timeout=30,
        ).json()
        texts = [p.get("text") for e in events for p in e["content"]["parts"] if p.get("text")]
        assert texts == ['get_weather returned: {"city": "Paris", "forecast": "sunny, 21°C"}']
        if command == "web":
            page = httpx.get(f"{base}/dev-ui/", timeout=10, follow_redirects=True)
            assert page.status_code == 200
    finally:
        process.send_signal(signal.SIGINT)
        out, err = process.communicate(timeout=60)
    assert process.returncode == 0, err
    first = out.splitlines()[0]
    assert first.startswith("Using the offline demo model for weather_bot")
    assert f"Serving 1 app(s) from {tmp_path.resolve()} at {base}" in out
    assert (tmp_path / ".eventide" / "sessions.db").is_file()


@pytest.mark.slow
def test_serving_every_interface_without_a_token_warns_and_allowed_host_adds_a_name(
    tmp_path: Path, cli_env: dict[str, str]
) -> None:
    """Binding 0.0.0.0 without --auth-token opens the agents to the network: the command
    says so at start-up. --allowed-host adds a name the Host check serves (issue 33)."""
    assert run_cli(["new", "bot"], cwd=tmp_path, env=cli_env).returncode == 0
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    process = _start(
        ["api-server", str(tmp_path), "--host", "0.0.0.0", "--port", str(port)]
        + ["--allowed-host", "agents.internal"],
        tmp_path,
        cli_env,
    )
    try:
        wait_until_healthy(process, base)
        named = httpx.get(f"{base}/list-apps", headers={"Host": "agents.internal"}, timeout=10)
        assert named.json() == ["bot"]
        other = httpx.get(f"{base}/list-apps", headers={"Host": "attacker.example"}, timeout=10)
        assert other.status_code == 403
    finally:
        process.send_signal(signal.SIGINT)
        out, err = process.communicate(timeout=60)
    assert process.returncode == 0, err
    warning = " ".join(out.split())
    assert "Warning: serving on 0.0.0.0 without --auth-token" in warning
    assert "Set --auth-token (or EVENTIDE_AUTH_TOKEN)" in warning


@pytest.mark.slow
def test_the_readme_examples_folder_starts_clean(cli_env: dict[str, str]) -> None:
    """`eventide api-server examples/` on a fresh clone (no google-adk installed): no
    traceback, every app loads, the ones written for google-adk with their imports mapped
    to Eventide's (one line says which), and a turn of one of them runs on Eventide's demo
    model, its tool's state write committed (issue 33)."""
    examples = Path(__file__).resolve().parents[2] / "examples"
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    process = _start(["api-server", str(examples), "--port", str(port)], examples, cli_env)
    try:
        wait_until_healthy(process, base)
        loading = httpx.get(f"{base}/list-apps?detailed=true", timeout=30).json()["apps"]
        info = httpx.get(f"{base}/apps/adk_weather_bot/app-info", timeout=30)
        user = f"readme-{port}"
        created = httpx.post(
            f"{base}/apps/adk_weather_bot/users/{user}/sessions", json={}, timeout=30
        )
        session_id = created.json()["id"]
        events = httpx.post(
            f"{base}/run",
            json={
                "app_name": "adk_weather_bot",
                "user_id": user,
                "session_id": session_id,
                "new_message": {"role": "user", "parts": [{"text": "weather in Paris"}]},
            },
            timeout=60,
        )
        session = httpx.get(
            f"{base}/apps/adk_weather_bot/users/{user}/sessions/{session_id}", timeout=30
        ).json()
    finally:
        process.send_signal(signal.SIGINT)
        out, err = process.communicate(timeout=60)
    assert "Traceback" not in out + err
    assert "will not load" not in out
    mapped = [line for line in out.splitlines() if "Written for google-adk" in line]
    assert len(mapped) == 1, out
    assert "adk_refund_desk, adk_review_loop, adk_weather_bot" in mapped[0]
    assert {app["name"] for app in loading} == {
        "adk_refund_desk",
        "adk_review_loop",
        "adk_weather_bot",
        "any_provider",
        "support_desk",
    }
    assert info.status_code == 200, info.text
    assert events.status_code == 200, events.text
    calls = [
        part["functionCall"]["name"]
        for event in events.json()
        for part in event["content"]["parts"]
        if part.get("functionCall")
    ]
    assert calls == ["get_weather"]
    assert session["state"]["last_city"] == "Paris"
