"""Run one workflow source on Eventide and on google-adk 2.13, and compare what they did.

A scenario is Python source that defines ``wf`` (a workflow) and writes its imports with
the placeholders ``ADK`` (the package: ``eventide`` or ``google.adk``) and ``TYPES`` (the
module of ``Content``). :func:`play_here` runs it in this process on Eventide;
:func:`play_on_adk` runs the same source in the google-adk virtualenv. Both return the same
normalized record: per event its node path, author, branch, output, route and state delta
(ids and timestamps left out), the function calls asking the user, and the final state.
"""

from __future__ import annotations

import json
import subprocess
import textwrap
from typing import Any

from tests.adk_env import adk_python

# Runs in either environment: ``ADK``/``TYPES`` are substituted before it runs.
_PLAYER = """
import asyncio, json
from ADK import Event
try:
    from google.adk.runners import InMemoryRunner
except ImportError:
    from eventide import InMemoryRunner
from TYPES import Content, Part, FunctionResponse

def _record(e):
    calls = [c.name for c in e.get_function_calls()]
    return {
        "path": e.node_info.path,
        "author": e.author,
        "branch": e.branch,
        "output": e.output,
        "route": e.actions.route,
        "state": dict(e.actions.state_delta),
        "calls": calls,
        "error": e.error_code,
    }

async def _play(wf, turns):
    runner = InMemoryRunner(agent=wf, app_name="app")
    session = await runner.session_service.create_session(app_name="app", user_id="u")
    played = []
    pending = []
    for turn in turns:
        if isinstance(turn, dict):
            parts = [Part(function_response=FunctionResponse(id=pending.pop(0), name=turn.get("name", "adk_request_input"), response=turn["answer"]))]
        else:
            parts = [Part(text=turn)]
        events = []
        async for e in runner.run_async(user_id="u", session_id=session.id, new_message=Content(role="user", parts=parts)):
            events.append(_record(e))
            for c in e.get_function_calls():
                if e.long_running_tool_ids and c.id in e.long_running_tool_ids:
                    pending.append(c.id)
        played.append(events)
    session = await runner.session_service.get_session(app_name="app", user_id="u", session_id=session.id)
    return {"turns": played, "state": dict(session.state)}
"""


def _source(scenario: str, turns: list[Any], package: str, types_module: str) -> str:
    body = textwrap.dedent(scenario) + _PLAYER
    body = body.replace("TYPES", types_module).replace("ADK", package)
    return body + f"\nprint(json.dumps(asyncio.run(_play(wf, {turns!r})), default=str))\n"


def play_here(scenario: str, turns: list[Any]) -> dict[str, Any]:
    """The scenario run on Eventide (in a subprocess of this interpreter, like ADK's)."""
    import sys

    return _run(sys.executable, _source(scenario, turns, "eventide", "eventide.types"))


def play_on_adk(scenario: str, turns: list[Any]) -> dict[str, Any]:
    """The scenario run on google-adk 2.13 (skipped when its venv is missing, failing in CI)."""
    return _run(str(adk_python()), _source(scenario, turns, "google.adk", "google.genai.types"))


def _run(python: str, source: str) -> dict[str, Any]:
    import os

    env = {**os.environ, "PYTHONWARNINGS": "ignore"}
    done = subprocess.run(
        [python, "-c", source], capture_output=True, text=True, timeout=300, env=env
    )
    if done.returncode != 0:
        raise AssertionError(f"scenario failed on {python}:\n{done.stderr[-4000:]}")
    played: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return played


def normalized(played: dict[str, Any]) -> dict[str, Any]:
    """The record with a join's dict outputs compared regardless of key order (google-adk
    builds them from a set) and empty fields dropped.

    The user message an LlmAgent node gets its input in is left out: Eventide commits it
    (so a resumed run's model sees it too), google-adk only puts it in its in-memory copy
    of the session, so it never reaches the stream; everything else must be the same."""
    turns = [
        [
            {k: v for k, v in event.items() if v not in (None, [], {})}
            for event in events
            if not (event["author"] == "user" and event["path"])
        ]
        for events in played["turns"]
    ]
    return {"turns": json.loads(json.dumps(turns, sort_keys=True)), "state": played["state"]}
