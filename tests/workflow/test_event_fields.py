"""google-adk 2.x's Event fields for workflows: ``output``, ``actions.route``, ``node_info``
and the ``message=``/``state=``/``route=``/``node_path=`` shorthands (issue 31, step 1):
built, serialized over HTTP (camelCase ``nodeInfo``) and stored as google-adk does."""

from __future__ import annotations

import json
import subprocess
import uuid
from pathlib import Path
from typing import Any

import pytest

from eventide import Event, types
from eventide.events import EventActions, NodeInfo
from eventide.server.camel_json import event_json
from eventide.sessions.sql_session_service import SqlSessionService
from tests.adk_env import adk_python

_SAMPLE: dict[str, Any] = dict(
    message="hi",
    state={"seen": 1},
    route=["a", "b"],
    node_path="wf@1/step@2",
    output={"snake_key": {"inner_key": [1, 2]}},
)


def _sample() -> Event:
    return Event(**_SAMPLE)


def test_shorthands_fill_the_fields_they_stand_for() -> None:
    event = _sample()
    assert event.content == types.Content(role="user", parts=[types.Part(text="hi")])
    assert event.message is event.content
    assert event.actions.state_delta == {"seen": 1}
    assert event.actions.route == ["a", "b"]
    assert event.node_info == NodeInfo(path="wf@1/step@2")
    assert (event.node_info.name, event.node_info.run_id, event.node_info.parent_run_id) == (
        "step",
        "2",
        "1",
    )
    assert event.node_name == "step"
    assert event.author == ""  # filled in by the workflow, as google-adk does


def test_message_and_content_together_is_refused() -> None:
    with pytest.raises(ValueError, match="'message' and 'content' are mutually exclusive"):
        Event(message="a", content=types.Content(parts=[types.Part(text="b")]))


def test_message_can_be_set_like_content() -> None:
    event = Event(author="wf")
    event.message = [types.Part(text="a"), "b"]
    assert event.content == types.Content(
        role="user", parts=[types.Part(text="a"), types.Part(text="b")]
    )
    event.message = None
    assert event.content is None


def test_shorthands_keep_other_actions() -> None:
    event = Event(actions=EventActions(escalate=True), state={"k": "v"})
    assert event.actions.escalate is True
    assert event.actions.state_delta == {"k": "v"}


def test_route_counts_as_an_action() -> None:
    assert not EventActions(route="x").is_empty()
    merged = EventActions()
    merged.merge(EventActions(route=3))
    assert merged.route == 3


def test_http_json_matches_google_adk() -> None:
    """The JSON the API sends (camelCase field names, data keys as stored) is google-adk's
    ``model_dump_json(by_alias=True, exclude_none=True)`` of the same event."""
    ours = json.loads(event_json(_sample()))
    program = (
        "import json\n"
        "from google.adk import Event\n"
        f"e = Event(**{_SAMPLE!r})\n"
        "print(e.model_dump_json(by_alias=True, exclude_none=True))\n"
    )
    done = subprocess.run(
        [str(adk_python()), "-c", program], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    theirs = json.loads(done.stdout)
    for volatile in ("id", "timestamp", "invocationId", "author"):
        ours.pop(volatile, None)
        theirs.pop(volatile, None)
    assert ours == theirs
    assert ours["nodeInfo"] == {"path": "wf@1/step@2"}
    assert ours["output"] == {"snake_key": {"inner_key": [1, 2]}}


@pytest.fixture(params=["sqlite", "postgresql"])
def db_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'sessions.db'}"
    return str(request.getfixturevalue("postgres_sessions_url"))


async def test_workflow_fields_round_trip_through_the_sql_stores(db_url: str) -> None:
    app = f"app_{uuid.uuid4().hex[:8]}"
    service = SqlSessionService(db_url)
    session = await service.create_session(app_name=app, user_id="u")
    event = _sample()
    event.author = "wf"
    event.invocation_id = "inv-1"
    event.node_info.output_for = ["wf@1/step@2", "wf@1"]
    await service.append_event(session, event)
    await service.close()
    reopened = SqlSessionService(db_url)
    stored = await reopened.get_session(app_name=app, user_id="u", session_id=session.id)
    assert stored is not None
    (back,) = stored.events
    assert back.output == event.output
    assert back.actions.route == ["a", "b"]
    assert back.node_info == NodeInfo(path="wf@1/step@2", output_for=["wf@1/step@2", "wf@1"])
    assert back.content == event.content
    await reopened.close()
