"""The server against a hostile web page (issue 33), through a real uvicorn server without a
bearer token, as a developer runs it locally.

Each test is an attack a page the developer visits could make: a websocket or a write with
its own ``Origin`` (cross-site websocket hijacking, CSRF), a ``text/plain`` form post, a
``Host`` it controls (DNS rebinding), a slow body; and what a failing app must not leak
(tracebacks, file paths). Each is refused before anything is stored.
"""

from __future__ import annotations

import json
import re
import socket
import time
from collections.abc import Iterator
from pathlib import Path
from typing import cast

import httpx
import pytest
from fastapi import FastAPI
from starlette.routing import Route
from websockets.exceptions import InvalidStatus
from websockets.sync.client import connect
from websockets.typing import Origin

from eventide.server import create_app
from tests.server.fixture_agents import fixture_apps
from tests.server.harness import ThreadedServer

EVIL = "https://attacker.example"
FRIEND = "http://localhost:5173"
USER = "guarded-user"


@pytest.fixture(scope="module")
def server() -> Iterator[ThreadedServer]:
    api = create_app(apps=fixture_apps(), cors_origins=[FRIEND], web=True, body_timeout=0.5)
    with ThreadedServer(api) as running:
        yield running


@pytest.fixture
def client(server: ThreadedServer) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=server.url, timeout=30) as http:
        yield http


def _sessions(client: httpx.Client) -> list[str]:
    listed = client.get(f"/apps/echo/users/{USER}/sessions")
    assert listed.status_code == 200, listed.text
    return [s["id"] for s in listed.json()]


def _live_url(server: ThreadedServer, session_id: str) -> str:
    query = httpx.QueryParams(app_name="echo", user_id=USER, session_id=session_id)
    return server.url.replace("http://", "ws://") + f"/run_live?{query}"


def test_a_foreign_origin_cannot_open_the_websocket(
    server: ThreadedServer, client: httpx.Client
) -> None:
    """Cross-site websocket hijacking: the handshake from another site's page is refused."""
    session_id = client.post(f"/apps/echo/users/{USER}/sessions").json()["id"]
    url = _live_url(server, session_id)
    for foreign in (EVIL, "null", server.url.replace("127.0.0.1", "127.0.0.2")):
        with pytest.raises(InvalidStatus) as refused:
            connect(url, origin=Origin(foreign)).close()
        assert refused.value.response.status_code == 403
    # The server's own page (the dev UI), a --cors origin and a client that is not a
    # browser (no Origin) are served.
    for allowed in (Origin(server.url), Origin(FRIEND), None):
        with connect(url, origin=allowed) as ws:
            ws.send(json.dumps({"content": {"role": "user", "parts": [{"text": "hi"}]}}))
            assert json.loads(ws.recv(timeout=30))["author"] == "echo_agent"


def _write_routes(server: ThreadedServer) -> list[tuple[str, str]]:
    api = cast("FastAPI", server.server.config.app)
    routes: list[tuple[str, str]] = []
    for route in api.routes:
        if isinstance(route, Route):
            for method in sorted((route.methods or set()) - {"GET", "HEAD", "OPTIONS"}):
                path = re.sub(r"\{(\w+)(:path)?\}", lambda m: f"x-{m.group(1)}", route.path)
                routes.append((method, path))
    return routes


def test_a_foreign_origin_cannot_write_on_any_route(
    server: ThreadedServer, client: httpx.Client
) -> None:
    """CSRF: every POST, PUT, PATCH and DELETE route refuses another site's Origin with a
    403 that says how to allow it, before the route runs."""
    writes = _write_routes(server)
    assert len(writes) > 20
    for method, path in writes:
        refused = client.request(method, path, json={}, headers={"Origin": EVIL})
        assert refused.status_code == 403, (method, path, refused.text)
        assert f"--cors {EVIL}" in refused.json()["detail"]
    # The same writes from the dev UI's own origin and from the --cors origin pass the guard.
    for origin in (server.url, FRIEND):
        created = client.post(f"/apps/echo/users/{USER}/sessions", headers={"Origin": origin})
        assert created.status_code == 200, created.text
    # Reading stays open to any page the CORS policy lets read.
    assert client.get("/list-apps", headers={"Origin": EVIL}).status_code == 200


def test_text_plain_bodies_are_refused_and_store_nothing(client: httpx.Client) -> None:
    """A cross-site <form> can post text/plain without a preflight: JSON routes take JSON
    only (415), so neither a session, an artifact nor an eval set is written."""
    session_id = client.post(f"/apps/echo/users/{USER}/sessions").json()["id"]
    before = _sessions(client)
    plain = {"Content-Type": "text/plain"}
    posts = {
        f"/apps/echo/users/{USER}/sessions": json.dumps({"state": {"pwned": True}}),
        f"/apps/echo/users/{USER}/sessions/{session_id}/artifacts": json.dumps(
            {"filename": "x.txt", "artifact": {"text": "pwned"}}
        ),
        "/dev/apps/echo/eval-sets": json.dumps({"evalSetId": "pwned"}),
        "/run": json.dumps(
            {
                "appName": "echo",
                "userId": USER,
                "sessionId": session_id,
                "newMessage": {"role": "user", "parts": [{"text": "pwned"}]},
            }
        ),
    }
    for path, body in posts.items():
        for headers in (plain, {"Content-Type": "application/x-www-form-urlencoded"}, {}):
            refused = client.post(path, content=body, headers=headers)
            assert refused.status_code == 415, (path, headers, refused.text)
            assert "Content-Type: application/json" in refused.json()["detail"]
    assert _sessions(client) == before
    names = client.get(f"/apps/echo/users/{USER}/sessions/{session_id}/artifacts")
    assert names.json() == []
    assert "pwned" not in client.get("/dev/apps/echo/eval-sets").text
    session = client.get(f"/apps/echo/users/{USER}/sessions/{session_id}").json()
    assert session["events"] == []
    # application/json with a charset, and +json types, are JSON.
    ok = client.post(
        f"/apps/echo/users/{USER}/sessions",
        content=b"{}",
        headers={"Content-Type": "application/json; charset=utf-8"},
    )
    assert ok.status_code == 200


def test_a_foreign_host_is_refused(server: ThreadedServer, client: httpx.Client) -> None:
    """DNS rebinding: a name the attacker controls, resolved to 127.0.0.1, reads nothing."""
    for host in ("attacker.example", f"attacker.example:{server.port}", "localhost.evil.com"):
        refused = client.get("/list-apps", headers={"Host": host})
        assert refused.status_code == 403, host
        assert "--allowed-host" in refused.json()["detail"]
        assert client.get("/dev-ui/", headers={"Host": host}).status_code == 403
    for host in (
        f"localhost:{server.port}",
        f"127.0.0.1:{server.port}",
        f"[::1]:{server.port}",
        "app.localhost",
        "192.168.1.20:8000",
    ):
        assert client.get("/list-apps", headers={"Host": host}).status_code == 200, host
    with pytest.raises(InvalidStatus) as hijack:
        connect(_live_url(server, "s"), additional_headers={"Host": "attacker.example"}).close()
    assert hijack.value.response.status_code == 403


def test_allowed_hosts_add_names() -> None:
    api = create_app(apps=fixture_apps(), allowed_hosts=["agents.internal"])
    with ThreadedServer(api) as running, httpx.Client(base_url=running.url) as client:
        assert client.get("/health", headers={"Host": "agents.internal:8000"}).status_code == 200
        assert client.get("/health", headers={"Host": "other.internal"}).status_code == 403
    anything = create_app(apps=fixture_apps(), allowed_hosts=["*"])
    with ThreadedServer(anything) as running, httpx.Client(base_url=running.url) as client:
        assert client.get("/health", headers={"Host": "other.internal"}).status_code == 200


def test_a_slow_body_is_cut_off_with_a_408(server: ThreadedServer) -> None:
    """A client that declares a body and never sends it gets a 408 once the server's body
    timeout passes, instead of holding the route forever."""
    with socket.create_connection(("127.0.0.1", server.port), timeout=30) as sock:
        sock.sendall(
            f"POST /apps/echo/users/{USER}/sessions HTTP/1.1\r\nHost: 127.0.0.1\r\n"
            "Content-Type: application/json\r\nContent-Length: 100\r\n\r\n{".encode()
        )
        started = time.monotonic()
        answer = b""
        while b"}" not in answer:
            chunk = sock.recv(4096)
            assert chunk, answer
            answer += chunk
        text = answer.decode()
    assert text.startswith("HTTP/1.1 408"), text
    assert "send the whole body at once" in text
    assert time.monotonic() - started < 25


def test_an_app_that_fails_to_load_leaks_no_traceback_or_path(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """The 500 names the app, the error's last line and an id; the traceback, with the
    machine's paths, goes to the server log under that id."""
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "agent.py").write_text("import os\nroot_agent = os.undefined_name\n")
    turn = {
        "appName": "broken",
        "userId": "u",
        "sessionId": "s",
        "newMessage": {"role": "user", "parts": [{"text": "hi"}]},
    }
    with ThreadedServer(create_app(apps_dir=tmp_path)) as running:
        with httpx.Client(base_url=running.url, timeout=30) as client:
            answers = [
                client.get("/apps/broken/app-info"),
                client.post("/run", json=turn),
                client.post("/run_sse", json=turn),
                client.get("/dev/apps/broken/graph"),
            ]
    for answer in answers:
        assert answer.status_code == 500, answer.text
        detail = answer.json()["detail"]
        assert "Traceback" not in detail and str(tmp_path) not in detail, detail
        assert "agent.py" not in detail
        assert "AttributeError" in detail and "undefined_name" in detail
        error_id = re.search(r"error id (\w+)", detail)
        assert error_id is not None
        logged = [r.getMessage() for r in caplog.records if error_id.group(1) in r.getMessage()]
        assert logged and "Traceback" in logged[0] and str(tmp_path) in logged[0]


def test_artifact_uris_name_no_server_path(tmp_path: Path) -> None:
    """A file artifact's canonicalUri names the version, not where the server keeps it."""
    (tmp_path / "hello").mkdir()
    (tmp_path / "hello" / "agent.py").write_text(
        "from eventide import LlmAgent\nroot_agent = LlmAgent(name='hello', model='demo')\n"
    )
    with ThreadedServer(create_app(apps_dir=tmp_path)) as running:
        with httpx.Client(base_url=running.url, timeout=30) as client:
            sid = client.post("/apps/hello/users/u/sessions").json()["id"]
            base = f"/apps/hello/users/u/sessions/{sid}/artifacts"
            saved = client.post(base, json={"filename": "a.txt", "artifact": {"text": "x"}})
            assert saved.status_code == 200, saved.text
            listed = client.get(f"{base}/a.txt/versions/metadata").json()
            one = client.get(f"{base}/a.txt/versions/0/metadata").json()
    for described in (saved.json(), *listed, one):
        uri = described["canonicalUri"]
        assert str(tmp_path) not in uri
        assert uri == f"artifact://apps/hello/users/u/sessions/{sid}/artifacts/a.txt/versions/0"


def test_an_unexpected_error_is_a_500_with_an_id_and_no_traceback(
    caplog: pytest.LogCaptureFixture,
) -> None:
    api = create_app(apps=fixture_apps())

    @api.get("/explode")
    async def explode() -> None:
        raise RuntimeError("secret detail at /home/someone/app.py")

    with ThreadedServer(api) as running, httpx.Client(base_url=running.url) as client:
        answer = client.get("/explode")
    assert answer.status_code == 500
    detail = answer.json()["detail"]
    assert "secret detail" not in detail and "Traceback" not in detail
    error_id = re.search(r"error id (\w+)", detail)
    assert error_id is not None
    assert any(
        error_id.group(1) in r.getMessage() and r.exc_info is not None for r in caplog.records
    )


async def test_one_timer_cuts_off_only_the_stalled_body() -> None:
    """The body timeouts of one loop share a timer: of two requests waiting at once, the
    one whose client stalls gets the 408 and the one whose parts keep coming is served;
    a route cancelled for another reason is not answered 408."""
    import asyncio

    from starlette.types import Message, Receive, Scope, Send

    from eventide.server.browser_guard import BrowserGuardMiddleware

    async def echo(scope: Scope, receive: Receive, send: Send) -> None:
        body = b""
        while True:
            message = await receive()
            body += message.get("body", b"")
            if not message.get("more_body", False):
                break
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": body})

    guard = BrowserGuardMiddleware(echo, body_timeout=0.2)
    scope: Scope = {
        "type": "http",
        "method": "POST",
        "path": "/x",
        "headers": [(b"host", b"127.0.0.1"), (b"content-type", b"application/json")]
        + [(b"transfer-encoding", b"chunked")],
    }

    async def request(parts: list[bytes], gap: float) -> list[Message]:
        sent: list[Message] = []
        queue = list(parts)

        async def receive() -> Message:
            await asyncio.sleep(gap)
            part = queue.pop(0)
            return {"type": "http.request", "body": part, "more_body": bool(queue)}

        async def send(message: Message) -> None:
            sent.append(message)

        await guard(scope, receive, send)
        return sent

    trickle = request([b"[1,", b"2,", b"3,", b"4,", b"5]"], 0.1)  # 0.5 s, 0.1 s apart
    stalled = request([b"[1]"], 3600)
    served, cut = await asyncio.gather(trickle, stalled)
    assert [m.get("status") for m in served][0] == 200
    assert served[-1]["body"] == b"[1,2,3,4,5]"
    assert cut[0]["status"] == 408
    assert b"did not arrive within 0.2 seconds" in cut[-1]["body"]
    task = asyncio.ensure_future(request([b"[1]"], 3600))
    await asyncio.sleep(0.05)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
