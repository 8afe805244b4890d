"""``/run_live``, google-adk's websocket for live conversations, served by Eventide for text:
ADK's query parameters and ``LiveRequest`` frames in, each committed event out as camelCase
JSON, partial chunks included; what Eventide cannot do (audio/video, bad frames, unknown app
or session, a missing bearer token) is refused with a close code and a reason, and nothing is
stored. Through a real uvicorn server and the ``websockets`` client."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from websockets.exceptions import ConnectionClosed, InvalidStatus
from websockets.sync.client import ClientConnection, connect

from eventide.server import create_app
from tests.server.fixture_agents import fixture_apps
from tests.server.harness import ThreadedServer


def _session(client: httpx.Client, app: str) -> tuple[str, str]:
    user = f"u-{uuid.uuid4().hex[:8]}"
    created = client.post(f"/apps/{app}/users/{user}/sessions")
    assert created.status_code == 200, created.text
    return user, created.json()["id"]


def _ws_url(server: ThreadedServer, **query: str) -> str:
    params = httpx.QueryParams(query)
    return server.url.replace("http://", "ws://") + f"/run_live?{params}"


def _message(text: str) -> str:
    return json.dumps({"content": {"role": "user", "parts": [{"text": text}]}})


def _events_until_final(ws: ClientConnection) -> list[dict[str, Any]]:
    """Frames up to the first non-partial event (or an error frame)."""
    frames: list[dict[str, Any]] = []
    while True:
        frame = json.loads(ws.recv(timeout=30))
        frames.append(frame)
        if "error" in frame or not frame.get("partial"):
            return frames


def _closed(ws: ClientConnection) -> ConnectionClosed:
    with pytest.raises(ConnectionClosed) as closed:
        ws.recv(timeout=30)
    return closed.value


def test_text_turns_stream_events_and_commit_them(server: ThreadedServer) -> None:
    """Two content messages on one socket: two turns, each streamed (three partial chunks,
    then the whole answer) in ADK's camelCase, committed to the session; close ends it."""
    with httpx.Client(base_url=server.url) as client:
        user, sid = _session(client, "chunks")
        url = _ws_url(server, app_name="chunks", user_id=user, session_id=sid, modalities="TEXT")
        with connect(url) as ws:
            for turn in range(2):
                ws.send(_message(f"hello {turn}"))
                frames = _events_until_final(ws)
                texts = [f["content"]["parts"][0]["text"] for f in frames]
                assert texts == ["Hello", " from", " the stream", "Hello from the stream"]
                assert [bool(f.get("partial")) for f in frames] == [True, True, True, False]
                assert frames[-1]["author"] == "chunk_agent" and "invocationId" in frames[-1]
            ws.send(json.dumps({"close": True}))
            assert _closed(ws).rcvd is not None
        stored = client.get(f"/apps/chunks/users/{user}/sessions/{sid}").json()["events"]
    assert [e["content"]["parts"][0]["text"] for e in stored] == [
        "hello 0",
        "Hello from the stream",
        "hello 1",
        "Hello from the stream",
    ]


def test_a_failing_turn_sends_an_error_frame_and_the_socket_stays_open(
    server: ThreadedServer,
) -> None:
    with httpx.Client(base_url=server.url) as client:
        user, sid = _session(client, "failing")
        with connect(_ws_url(server, app_name="failing", user_id=user, session_id=sid)) as ws:
            for _ in range(2):
                ws.send(_message("go"))
                first = json.loads(ws.recv(timeout=30))
                assert first["content"]["parts"][0]["text"] == "working on it"
                error = json.loads(ws.recv(timeout=30))
                assert error["errorCode"] == "RuntimeError"
                assert "warehouse API is down" in error["errorMessage"]


@pytest.mark.parametrize(
    ("query", "frame", "code", "reason"),
    [
        ({"modalities": "AUDIO"}, None, 1003, "text only"),
        ({}, json.dumps({"blob": {"mimeType": "audio/pcm", "data": ""}}), 1003, "text only"),
        ({}, "not json", 1008, "not JSON"),
        ({}, json.dumps(["content"]), 1008, "JSON object"),
        ({}, json.dumps({"text": "hi"}), 1008, "Unknown LiveRequest field"),
        ({}, json.dumps({"content": {"parts": "hi"}}), 1008, "content is not a Content"),
        ({"app_name": "nope"}, None, 1008, "nope"),
        ({"session_id": "missing"}, None, 1008, "not found"),
        ({"user_id": ""}, None, 1008, "are required"),
    ],
)
def test_what_cannot_be_done_is_refused_with_a_reason_and_stores_nothing(
    server: ThreadedServer, query: dict[str, str], frame: str | None, code: int, reason: str
) -> None:
    with httpx.Client(base_url=server.url) as client:
        user, sid = _session(client, "echo")
        params = {"app_name": "echo", "user_id": user, "session_id": sid, **query}
        with connect(_ws_url(server, **params)) as ws:
            if frame is not None:
                ws.send(frame)
            closed = _closed(ws)
        assert closed.rcvd is not None
        assert (closed.rcvd.code, reason in closed.rcvd.reason) == (code, True), closed.rcvd
        stored = client.get(f"/apps/echo/users/{user}/sessions/{sid}").json()
    assert stored["events"] == []


@pytest.fixture
def authed_server() -> Iterator[ThreadedServer]:
    with ThreadedServer(create_app(apps=fixture_apps(), auth_token="s3cret")) as running:
        yield running


def test_bearer_token_guards_the_websocket_too(authed_server: ThreadedServer) -> None:
    """With auth on, a handshake without the token, or with a wrong one, is refused (HTTP 403)
    before any turn; with it, the socket works."""
    bearer = {"Authorization": "Bearer s3cret"}
    with httpx.Client(base_url=authed_server.url, headers=bearer) as client:
        user, sid = _session(client, "echo")
        url = _ws_url(authed_server, app_name="echo", user_id=user, session_id=sid)
        for headers in ({}, {"Authorization": "Bearer wrong"}):
            with pytest.raises(InvalidStatus) as refused:
                connect(url, additional_headers=headers)
            assert refused.value.response.status_code == 403
        assert client.get(f"/apps/echo/users/{user}/sessions/{sid}").json()["events"] == []
        with connect(url, additional_headers=bearer) as ws:
            ws.send(_message("hi"))
            (answer,) = _events_until_final(ws)
        assert answer["content"]["parts"][0]["text"] == "echo: hi"
