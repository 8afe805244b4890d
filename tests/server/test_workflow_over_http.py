"""A graph workflow served over HTTP (issue 31, front ends): ``/run_sse`` streams its events
with google-adk's ``nodeInfo`` (camelCase) and ``output``; a ``RequestInput`` answered in a
second request continues the run."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Iterator
from typing import Any

import httpx
import pytest

from eventide import Event, Workflow
from eventide.apps import App
from eventide.server import create_app
from eventide.workflow import RequestInput
from tests.server.harness import ThreadedServer, sse_events


def plan(node_input: str) -> Iterator[Event]:
    yield Event(route="ask", state={"topic": node_input})
    yield Event(output={"topic_name": node_input})


async def ask(node_input: Any) -> AsyncIterator[RequestInput]:
    yield RequestInput(interrupt_id="go-ahead", message="Proceed?", payload=node_input)


def finish(node_input: Any, topic: str) -> dict[str, Any]:
    return {"answer": node_input, "topic": topic}


@pytest.fixture(scope="module")
def client() -> Iterator[httpx.Client]:
    workflow = Workflow(name="planner", edges=[("START", plan, {"ask": ask}), (ask, finish)])
    apps = {"planner": App(name="planner", root_agent=workflow)}
    with (
        ThreadedServer(create_app(apps=apps)) as running,
        httpx.Client(base_url=running.url, timeout=30) as http,
    ):
        yield http


def _message(parts: list[dict[str, Any]]) -> dict[str, Any]:
    return {"role": "user", "parts": parts}


def _stream(client: httpx.Client, body: dict[str, Any]) -> list[dict[str, Any]]:
    with client.stream("POST", "/run_sse", json=body) as response:
        assert response.status_code == 200
        return list(sse_events(response))


def test_run_sse_streams_node_info_and_continues_from_the_answer(client: httpx.Client) -> None:
    user = f"u-{uuid.uuid4().hex[:8]}"
    sid = client.post(f"/apps/planner/users/{user}/sessions").json()["id"]
    body = {"appName": "planner", "userId": user, "sessionId": sid}
    first = _stream(client, {**body, "newMessage": _message([{"text": "tides"}])})
    assert [(e["author"], e["nodeInfo"]["path"]) for e in first] == [
        ("planner", "planner@1/plan@1"),
        ("planner", "planner@1/plan@1"),
        ("planner", "planner@1/ask@1"),
    ]
    assert first[0]["actions"]["route"] == "ask"
    assert first[1]["output"] == {"topic_name": "tides"}  # data keys keep their spelling
    assert first[1]["nodeInfo"]["outputFor"] == ["planner@1/plan@1"]
    call = first[2]["content"]["parts"][0]["functionCall"]
    assert (call["name"], call["id"], call["args"]["message"]) == (
        "adk_request_input",
        "go-ahead",
        "Proceed?",
    )
    assert first[2]["longRunningToolIds"] == ["go-ahead"]

    answer = {"functionResponse": {"id": "go-ahead", "name": "adk_request_input",
                                   "response": {"result": "yes"}}}  # fmt: skip
    second = _stream(client, {**body, "newMessage": _message([answer])})
    assert [(e["nodeInfo"]["path"], e.get("output")) for e in second] == [
        ("planner@1/finish@1", {"answer": "yes", "topic": "tides"})
    ]
    assert second[0]["nodeInfo"]["outputFor"] == ["planner@1/finish@1", "planner@1"]


def test_the_event_graph_lights_up_the_node_that_made_the_event(client: httpx.Client) -> None:
    user = f"u-{uuid.uuid4().hex[:8]}"
    sid = client.post(f"/apps/planner/users/{user}/sessions").json()["id"]
    body = {"appName": "planner", "userId": user, "sessionId": sid}
    events = _stream(client, {**body, "newMessage": _message([{"text": "tides"}])})
    asked = events[-1]
    path = f"/dev/apps/planner/users/{user}/sessions/{sid}/events/{asked['id']}/graph"
    dot = client.get(path).json()["dotSrc"]
    lit = [line for line in dot.splitlines() if "fillcolor" in line]
    assert sorted(line.split()[0] for line in lit) == ['"planner"', '"planner.ask"']
