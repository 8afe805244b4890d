"""``GET /list-apps?detailed=true`` answers as ``adk api_server`` 2.13 does (the expected body
below is google-adk's, from the same two app folders served side by side): ``{"apps": [...]}``
with each app that loads, in camelCase; an app that fails to load is left out (and logged),
and the plain ``/list-apps`` still lists every folder's name."""

from __future__ import annotations

import logging
from pathlib import Path

import httpx
import pytest

from eventide.server import create_app
from tests.server.harness import ThreadedServer

_GREETER = """
from eventide import LlmAgent
from eventide.testing import ScriptedModel

root_agent = LlmAgent(
    name="greeter", model=ScriptedModel(responses=[]), description="Says hello.",
    instruction="Greet.",
)
"""


def test_detailed_list_describes_each_app_that_loads(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    (tmp_path / "hello").mkdir()
    (tmp_path / "hello" / "agent.py").write_text(_GREETER)
    (tmp_path / "broken").mkdir()
    (tmp_path / "broken" / "agent.py").write_text("raise RuntimeError('boom')\nroot_agent = None\n")
    with ThreadedServer(create_app(apps_dir=tmp_path)) as server:
        with httpx.Client(base_url=server.url) as client:
            assert client.get("/list-apps").json() == ["broken", "hello"]
            assert client.get("/list-apps", params={"detailed": "false"}).json() == [
                "broken",
                "hello",
            ]
            with caplog.at_level(logging.ERROR, logger="eventide.server"):
                detailed = client.get("/list-apps", params={"detailed": "true"})
    assert detailed.status_code == 200
    assert detailed.json() == {
        "apps": [
            {
                "name": "hello",
                "rootAgentName": "greeter",
                "description": "Says hello.",
                "language": "python",
                "isComputerUse": False,
                "agents": None,
            }
        ]
    }
    assert any("broken" in record.getMessage() for record in caplog.records)
