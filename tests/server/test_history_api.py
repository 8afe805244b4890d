"""The history endpoints (turns, rewind, fork) through a real uvicorn server."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from eventide import App, LlmAgent
from eventide.server import create_app
from eventide.testing import FunctionModel
from tests.history.helpers import answer, remember
from tests.server.harness import ThreadedServer

SESSIONS = "/apps/keeper/users/{user}/sessions"


@pytest.fixture(scope="module")
def server() -> Iterator[ThreadedServer]:
    agent = LlmAgent(name="keeper", model=FunctionModel(function=answer), tools=[remember])
    with ThreadedServer(create_app(apps={"keeper": App(name="keeper", root_agent=agent)})) as up:
        yield up


@pytest.fixture
def client(server: ThreadedServer) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=server.url, timeout=30) as http:
        yield http


def run_turn(client: httpx.Client, user: str, sid: str, text: str) -> list[dict[str, Any]]:
    body = {
        "app_name": "keeper",
        "user_id": user,
        "session_id": sid,
        "new_message": {"role": "user", "parts": [{"text": text}]},
    }
    response = client.post("/run", json=body)
    assert response.status_code == 200, response.text
    events: list[dict[str, Any]] = response.json()
    return events


def new_session(client: httpx.Client) -> tuple[str, str, str]:
    user = f"u-{uuid.uuid4().hex[:8]}"
    base = SESSIONS.format(user=user)
    sid = client.post(base).json()["id"]
    for text in ("one", "two", "three"):
        run_turn(client, user, sid, text)
    return user, sid, f"{base}/{sid}"


def test_turns_then_rewind_then_a_new_turn(client: httpx.Client) -> None:
    """Rule: POST .../rewind appends the rewind event and returns it; the turns listing and
    the next model request leave the rewound turns out; the log keeps them."""
    user, sid, url = new_session(client)
    turns = client.get(f"{url}/turns").json()
    assert [(t["number"], t["text"]) for t in turns] == [(1, "one"), (2, "two"), (3, "three")]

    response = client.post(
        f"{url}/rewind", json={"rewindBeforeInvocationId": turns[1]["invocationId"]}
    )

    assert response.status_code == 200, response.text
    event = response.json()
    assert event["author"] == "user"
    assert event["actions"]["rewindBeforeInvocationId"] == turns[1]["invocationId"]
    assert event["actions"]["stateDelta"] == {"last": "one"}
    session = client.get(url).json()
    assert session["state"]["last"] == "one"
    assert len(session["events"]) == 13
    assert [t["text"] for t in client.get(f"{url}/turns").json()] == ["one"]

    events = run_turn(client, user, sid, "four")
    request = client.get(f"/debug/model_request/{events[0]['id']}").json()
    texts = [p.get("text") for c in request["contents"] for p in c["parts"] if p.get("text")]
    assert texts == ["one", "ok one", "four"]


def test_rewind_bad_input(client: httpx.Client) -> None:
    """Rule: an unknown invocation is a 422 naming it, a missing session a 404, a body
    without the id a 422; nothing is written."""
    user, _, url = new_session(client)
    before = len(client.get(url).json()["events"])

    unknown = client.post(f"{url}/rewind", json={"rewind_before_invocation_id": "nope"})
    missing = client.post(
        SESSIONS.format(user=user) + "/gone/rewind", json={"rewind_before_invocation_id": "x"}
    )
    empty = client.post(f"{url}/rewind", json={})

    assert unknown.status_code == 422
    assert "'nope' is not in session" in unknown.json()["detail"]
    assert missing.status_code == 404
    assert empty.status_code == 422
    assert len(client.get(url).json()["events"]) == before


def test_fork_then_diverge(client: httpx.Client) -> None:
    """Rule: POST .../fork returns the new session with the events up to the chosen one; a
    turn in the fork leaves the source alone; a taken id is a 409, an unknown event a 422."""
    user, sid, url = new_session(client)
    source_events = client.get(url).json()["events"]
    cut = source_events[3]["id"]  # "ok one"

    response = client.post(f"{url}/fork", json={"up_to_event_id": cut, "new_session_id": "alt"})

    assert response.status_code == 200, response.text
    fork = response.json()
    assert fork["id"] == "alt"
    assert [e["id"] for e in fork["events"]] == [e["id"] for e in source_events[:4]]
    assert fork["state"]["last"] == "one"
    assert fork["state"]["eventide:forked_from"] == {"session_id": sid, "event_id": cut}
    run_turn(client, user, "alt", "branch")
    assert client.get(SESSIONS.format(user=user) + "/alt").json()["state"]["last"] == "branch"
    assert client.get(url).json()["state"]["last"] == "three"

    taken = client.post(f"{url}/fork", json={"new_session_id": "alt"})
    unknown = client.post(f"{url}/fork", json={"up_to_event_id": "nope"})
    whole = client.post(f"{url}/fork")
    assert taken.status_code == 409
    assert unknown.status_code == 422
    assert whole.status_code == 200
    assert len(whole.json()["events"]) == len(source_events)
    assert sid != whole.json()["id"]
