"""``eventide mcp-server`` driven by the official ``mcp`` client, over stdio (the command
launched as a subprocess) and streamable HTTP: the agents listed as tools, a call, the same
session continued, progress notifications, artifacts as resources, clean tool errors."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters

from tests.server.harness import REPO, wait_until

AGENT = textwrap.dedent(
    '''
    """Echoes with a turn count; saves a note artifact; fails when asked to."""

    from eventide import BaseAgent, CallbackContext, Event, EventActions, types


    class Notary(BaseAgent):
        async def _run_async_impl(self, ctx):
            text = ctx.user_content.text if ctx.user_content else ""
            if text == "fail":
                yield Event(author=self.name, invocation_id=ctx.invocation_id,
                            content=types.Content(role="model", parts=[types.Part(text="trying")]))
                raise RuntimeError("the notary's ledger is locked")
            turns = int(ctx.session.state.get("turns", 0)) + 1
            callback = CallbackContext(ctx)
            await callback.save_artifact(f"note-{turns}.txt", types.Part(text=f"noted: {text}"))
            yield Event(author=self.name, invocation_id=ctx.invocation_id,
                        content=types.Content(role="model", parts=[types.Part(text=f"noted {text!r} (turn {turns})")]),
                        actions=EventActions(state_delta={"turns": turns},
                                             artifact_delta=callback.actions.artifact_delta))


    root_agent = Notary(name="notary", description="Takes notes and keeps them as files.")
    '''
)


@pytest.fixture
def apps_dir(tmp_path: Path) -> Path:
    folder = tmp_path / "apps" / "notes"
    folder.mkdir(parents=True)
    (folder / "agent.py").write_text(AGENT)
    return tmp_path / "apps"


def _env() -> dict[str, str]:
    src = str(REPO / "src")
    return {**os.environ, "PYTHONPATH": f"{src}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"}


async def _conversation(client: Client) -> None:
    tools = await client.list_tools()
    assert [(t.name, t.description) for t in tools.tools] == [
        ("notes", "Takes notes and keeps them as files.")
    ]
    assert tools.tools[0].input_schema["required"] == ["request"]
    reports: list[tuple[float, str | None]] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        reports.append((progress, message))

    first = await client.call_tool("notes", {"request": "buy milk"}, progress_callback=on_progress)
    assert not first.is_error
    assert first.structured_content is not None
    session_id = first.structured_content["session_id"]
    assert first.structured_content["response"] == "noted 'buy milk' (turn 1)"
    assert [c.text for c in first.content if c.type == "text"] == ["noted 'buy milk' (turn 1)"]
    links = [c for c in first.content if c.type == "resource_link"]
    assert [link.name for link in links] == ["note-1.txt"]
    assert reports == [(1.0, "notary: answered")]

    second = await client.call_tool("notes", {"request": "call mom", "session_id": session_id})
    assert second.structured_content == {
        "response": "noted 'call mom' (turn 2)",
        "session_id": session_id,
    }

    resources = await client.list_resources()
    uris = sorted(str(r.uri) for r in resources.resources)
    assert uris == [
        f"eventide://apps/notes/sessions/{session_id}/artifacts/note-1.txt",
        f"eventide://apps/notes/sessions/{session_id}/artifacts/note-2.txt",
    ]
    read = await client.read_resource(uris[1])
    assert [getattr(c, "text", None) for c in read.contents] == ["noted: call mom"]

    failed = await client.call_tool("notes", {"request": "fail", "session_id": session_id})
    assert failed.is_error
    text = failed.content[0].text  # type: ignore[union-attr]
    assert "the notary's ledger is locked" in text and session_id in text
    missing = await client.call_tool("notes", {})
    assert missing.is_error and "'request' is required" in missing.content[0].text  # type: ignore[union-attr]
    unknown = await client.call_tool("nope", {"request": "x"})
    assert unknown.is_error and "No tool named 'nope'" in unknown.content[0].text  # type: ignore[union-attr]


@pytest.mark.slow
async def test_stdio(apps_dir: Path) -> None:
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "eventide.cli.main", "mcp-server", str(apps_dir)],
        env=_env(),
        cwd=str(REPO),
    )
    async with Client(params, read_timeout_seconds=60) as client:
        await _conversation(client)


@pytest.fixture
def http_server(apps_dir: Path) -> Iterator[str]:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "eventide.cli.main",
            "mcp-server",
            str(apps_dir),
            "--http",
            str(port),
        ],
        env=_env(),
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    url = f"http://127.0.0.1:{port}/mcp"

    def listening() -> bool:
        if proc.poll() is not None:
            raise AssertionError(f"mcp-server exited: {proc.communicate()[1]}")
        try:
            httpx.get(url, timeout=1)
        except httpx.TransportError:
            return False
        return True

    try:
        wait_until(listening, what="the MCP server to listen")
        yield url
    finally:
        proc.terminate()
        proc.communicate(timeout=30)


@pytest.mark.slow
async def test_streamable_http(http_server: str) -> None:
    async with Client(http_server, read_timeout_seconds=60) as client:
        await _conversation(client)
