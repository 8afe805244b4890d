"""``/run`` and ``/run_sse`` through a real uvicorn server, SSE parsed by a real client."""

from __future__ import annotations

import uuid
from typing import Any

import httpx

from tests.server.harness import sse_events


def _session(
    client: httpx.Client, app: str, state: dict[str, Any] | None = None
) -> tuple[str, str]:
    user = f"u-{uuid.uuid4().hex[:8]}"
    sid = client.post(f"/apps/{app}/users/{user}/sessions", json=state).json()["id"]
    return user, sid


def _body(app: str, user: str, sid: str, text: str, **extra: Any) -> dict[str, Any]:
    return {
        "app_name": app,
        "user_id": user,
        "session_id": sid,
        "new_message": {"role": "user", "parts": [{"text": text}]},
        **extra,
    }


def _compact(event: dict[str, Any]) -> tuple[Any, ...]:
    """An event as (author, text or part kinds, state_delta, partial)."""
    parts = (event.get("content") or {}).get("parts") or []
    kinds = tuple(p.get("text") or next(iter(k for k in p if k != "thought")) for p in parts)
    return (event["author"], kinds, event["actions"].get("stateDelta", {}), event.get("partial"))


def test_run_returns_the_turns_events_and_commits_them(client: httpx.Client) -> None:
    """Spec, event loop: the Runner commits each event (state_delta included) before it goes
    upstream, so the events /run returns are in the session's log with their state."""
    user, sid = _session(client, "echo")
    response = client.post("/run", json=_body("echo", user, sid, "hi", state_delta={"mood": "ok"}))
    assert response.status_code == 200
    events = response.json()
    assert [_compact(e) for e in events] == [("echo_agent", ("echo: hi",), {"turns": 1}, None)]

    session = client.get(f"/apps/echo/users/{user}/sessions/{sid}").json()
    assert [e["author"] for e in session["events"]] == ["user", "echo_agent"]
    assert session["events"][0]["actions"]["stateDelta"] == {"mood": "ok"}
    assert session["events"][1]["id"] == events[0]["id"]
    assert session["state"] == {"mood": "ok", "turns": 1}


def test_run_accepts_camel_case_and_answers_in_camel_case(client: httpx.Client) -> None:
    """ADK's request spelling is accepted; events come back in ADK's camelCase."""
    user, sid = _session(client, "echo")
    body = {
        "appName": "echo",
        "userId": user,
        "sessionId": sid,
        "newMessage": {"role": "user", "parts": [{"text": "yo"}]},
        "stateDelta": {"k": "v"},
    }
    events = client.post("/run", json=body).json()
    assert events[0]["invocationId"]
    assert events[0]["actions"]["stateDelta"] == {"turns": 1}
    assert client.get(f"/apps/echo/users/{user}/sessions/{sid}").json()["state"]["k"] == "v"


def test_run_sse_streams_one_frame_per_event(client: httpx.Client) -> None:
    """Spec, tool call walkthrough: call, response (with state and artifact deltas), answer,
    each yielded after its commit; only the answer is the final response."""
    user, sid = _session(client, "tools")
    with client.stream("POST", "/run_sse", json=_body("tools", user, sid, "report")) as response:
        assert response.status_code == 200
        assert response.headers["content-type"].startswith("text/event-stream")
        events = list(sse_events(response))
    assert [_compact(e) for e in events] == [
        ("tool_agent", ("functionCall",), {}, None),
        ("tool_agent", ("functionResponse",), {"report_ready": True}, None),
        ("tool_agent", ("Report saved.",), {}, None),
    ]
    assert events[1]["actions"]["artifactDelta"] == {"report.txt": 1}
    stored = client.get(f"/apps/tools/users/{user}/sessions/{sid}").json()["events"]
    assert [e["id"] for e in stored[1:]] == [e["id"] for e in events]


def test_run_sse_streaming_sends_partial_chunks_that_are_never_stored(client: httpx.Client) -> None:
    """Spec, streaming: partial events are forwarded at once and never committed; the
    complete, non-partial event is the one stored."""
    user, sid = _session(client, "chunks")
    body = _body("chunks", user, sid, "hi", streaming=True)
    with client.stream("POST", "/run_sse", json=body) as response:
        events = list(sse_events(response))
    assert [_compact(e) for e in events] == [
        ("chunk_agent", ("Hello",), {}, True),
        ("chunk_agent", (" from",), {}, True),
        ("chunk_agent", (" the stream",), {}, True),
        ("chunk_agent", ("Hello from the stream",), {}, None),
    ]
    stored = client.get(f"/apps/chunks/users/{user}/sessions/{sid}").json()["events"]
    assert [_compact(e) for e in stored] == [
        ("user", ("hi",), {}, None),
        ("chunk_agent", ("Hello from the stream",), {}, None),
    ]


def test_run_with_streaming_lists_the_partial_chunks_too(client: httpx.Client) -> None:
    """Spec, streaming: with streaming asked for, /run returns the partial chunks it
    forwarded as well as the complete event; only the complete one is stored."""
    user, sid = _session(client, "chunks")
    events = client.post("/run", json=_body("chunks", user, sid, "hi", streaming=True)).json()
    assert [e.get("partial") for e in events] == [True, True, True, None]
    stored = client.get(f"/apps/chunks/users/{user}/sessions/{sid}").json()["events"]
    assert [e.get("partial") for e in stored] == [None, None]


def test_run_sse_without_streaming_sends_no_partials(client: httpx.Client) -> None:
    user, sid = _session(client, "chunks")
    with client.stream("POST", "/run_sse", json=_body("chunks", user, sid, "hi")) as response:
        events = list(sse_events(response))
    assert [_compact(e) for e in events] == [("chunk_agent", ("Hello from the stream",), {}, None)]


def test_run_sse_failure_ends_with_an_error_frame(client: httpx.Client) -> None:
    """Spec, error events: a failure is reported as error_code/error_message; what was
    committed before it stays committed."""
    user, sid = _session(client, "failing")
    with client.stream("POST", "/run_sse", json=_body("failing", user, sid, "go")) as response:
        assert response.status_code == 200
        frames = list(sse_events(response))
    assert frames[0]["content"]["parts"][0]["text"] == "working on it"
    # google-adk 2.13's api_server frame (error, error_details) plus ADK's UI fields.
    [error] = frames[1:]
    details = error.pop("error_details")
    assert error == {
        "error": "RuntimeError: the warehouse API is down",
        "errorCode": "RuntimeError",
        "errorMessage": "the warehouse API is down",
    }
    assert details["error_type"] == "RuntimeError"
    assert details["error_message"] == "the warehouse API is down"
    assert isinstance(details["timestamp"], float)
    stored = client.get(f"/apps/failing/users/{user}/sessions/{sid}").json()["events"]
    assert [e["id"] for e in stored[1:]] == [frames[0]["id"]]


def test_run_failure_is_500_with_the_events_so_far(client: httpx.Client) -> None:
    user, sid = _session(client, "failing")
    response = client.post("/run", json=_body("failing", user, sid, "go"))
    assert response.status_code == 500
    detail = response.json()["detail"]
    assert (detail["errorCode"], detail["errorMessage"]) == (
        "RuntimeError",
        "the warehouse API is down",
    )
    assert [e["content"]["parts"][0]["text"] for e in detail["events"]] == ["working on it"]


def test_run_unknown_app_and_session_are_404(client: httpx.Client) -> None:
    unknown_app = client.post("/run", json=_body("nope", "u", "s", "hi"))
    assert unknown_app.status_code == 404
    assert "Known apps: 'chunks', 'echo'" in unknown_app.json()["detail"]
    for path in ("/run", "/run_sse"):
        unknown_session = client.post(path, json=_body("echo", "u", "missing", "hi"))
        assert unknown_session.status_code == 404
        assert "'missing'" in unknown_session.json()["detail"]


def test_bad_run_bodies_are_422_naming_the_field(client: httpx.Client) -> None:
    malformed = client.post(
        "/run", content=b'{"app_name": "echo",', headers={"content-type": "application/json"}
    )
    assert malformed.status_code == 422
    assert malformed.json()["detail"][0]["type"] == "json_invalid"

    missing = client.post("/run_sse", json={"app_name": "echo", "user_id": "u"})
    assert missing.status_code == 422
    locs = {tuple(err["loc"]) for err in missing.json()["detail"]}
    assert locs == {("body", "session_id"), ("body", "new_message")}

    bad_content = client.post("/run", json=_body("echo", "u", "s", "x") | {"new_message": 7})
    assert bad_content.status_code == 422
    assert bad_content.json()["detail"][0]["loc"][:2] == ["body", "new_message"]

    bad_delta = client.post("/run", json=_body("echo", "u", "s", "x", state_delta=[1]))
    assert bad_delta.status_code == 422
    assert bad_delta.json()["detail"][0]["loc"][:2] == ["body", "state_delta"]
