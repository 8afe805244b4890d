"""The official JavaScript client, ``@ag-ui/client`` from npm, run with node against
``--ag-ui``: it checks the stream's ordering rules itself as it reads (a violation rejects
the run), and keeps messages and state as a front end does."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from eventide.server import create_app
from tests.ag_ui.agents import ag_ui_apps
from tests.ag_ui.node_packages import node_folder, run_node_script
from tests.server.harness import ThreadedServer

AG_UI_CLIENT = "@ag-ui/client@1.0.0"
SCRIPT = Path(__file__).with_name("js") / "ag_ui_client_conversation.mjs"


@pytest.mark.slow
def test_the_official_js_client_runs_a_turn_a_frontend_tool_and_a_state_update() -> None:
    folder = node_folder("ag-ui-client", [AG_UI_CLIENT])
    with ThreadedServer(create_app(apps=ag_ui_apps(), ag_ui=True)) as server:
        output = run_node_script(folder, SCRIPT, f"{server.url}/ag-ui/helper")
    steps = {line["step"]: line for line in map(json.loads, output.splitlines())}
    assert steps["turn"]["text"] == "set_mood said {'mood': 'cheerful'}"
    assert steps["turn"]["state"] == {"mood": "cheerful"}
    assert steps["frontend_tool"]["call"] == {"name": "pick_color", "arguments": '{"hint": "warm"}'}
    assert steps["frontend_tool"]["text"] == "pick_color said {'color': 'teal'}"
    assert steps["state"]["text"] == "The page's theme is solarized."
    assert steps["state"]["state"] == {"mood": "cheerful", "theme": "solarized"}
