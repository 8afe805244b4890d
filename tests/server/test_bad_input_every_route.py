"""Bad input on every route of the server, table-driven: malformed JSON, wrong types, an
unknown app, session, artifact or eval set, an oversize body, a path-traversal artifact name
and a missing bearer token. Each gets a 4xx whose ``detail`` says what is wrong, and nothing
is stored: after all of them, the one session the test made is as it was, with no artifact,
eval set or result.

The table is checked against the server's own route table, so a new route must get its rows
here (``test_the_table_covers_every_route``).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from starlette.routing import Route

from eventide.server import create_app
from tests.server.fixture_agents import fixture_apps
from tests.server.harness import ThreadedServer

TOKEN = "t0ken"
AUTH = {"Authorization": f"Bearer {TOKEN}"}
MAX_BODY = 4096
APP = "tools"
USER = "bad-input-user"

# Routes that need no token and take no input to get wrong (docs, health, UI files).
_OPEN = {"/health", "/docs", "/docs/oauth2-redirect", "/redoc", "/openapi.json", "/", "/dev-ui"}
_OPEN_PREFIX = "/dev-ui/"

# Which path parameters name something that must exist, and a value that does not.
_UNKNOWN = {
    "app_name": ("app", "no_such_app"),
    "session_id": ("session", "no-such-session"),
    "name": ("artifact", "no-such-file.txt"),
    "eval_set_id": ("eval set", "no_such_set"),
    "eval_case_id": ("eval case", "no_such_case"),
    "eval_result_id": ("eval result", "no_such_result"),
    "event_id": ("event", "no-such-event"),
}

# Routes whose answer for an unknown thing is not a 404, and why.
_NOT_404 = {
    # Lists are empty, not missing, for an unknown session's artifact name (as google-adk).
    (
        "GET",
        "/apps/{app_name}/users/{user_id}/sessions/{session_id}/artifacts/{name:path}/versions",
        "name",
    ),
    (
        "GET",
        "/apps/{app_name}/users/{user_id}/sessions/{session_id}/artifacts/{name:path}/versions/metadata",
        "name",
    ),
    # Deleting what is not there is not an error (as google-adk, checked side by side).
    ("DELETE", "/apps/{app_name}/users/{user_id}/sessions/{session_id}", "session_id"),
    (
        "DELETE",
        "/apps/{app_name}/users/{user_id}/sessions/{session_id}/artifacts/{name:path}",
        "name",
    ),
    # Creating a session under a new id, or an eval set under a new id, is what POST does.
    ("POST", "/apps/{app_name}/users/{user_id}/sessions/{session_id}", "session_id"),
    ("POST", "/dev/apps/{app_name}/eval_sets/{eval_set_id}", "eval_set_id"),
    # Upserting a case creates it.
    (
        "PUT",
        "/dev/apps/{app_name}/eval-sets/{eval_set_id}/eval-cases/{eval_case_id}",
        "eval_case_id",
    ),
    ("PUT", "/dev/apps/{app_name}/eval_sets/{eval_set_id}/evals/{eval_case_id}", "eval_case_id"),
    # A trace is empty when none was recorded (the UI asks for every session and event;
    # google-adk answers [] too).
    ("GET", "/dev/apps/{app_name}/debug/trace/session/{session_id}", "session_id"),
    ("GET", "/dev/apps/{app_name}/debug/trace/{event_id}", "event_id"),
}

# Bodies of the wrong shape, per route that reads a JSON body (any other route ignores it).
_WRONG_TYPE: dict[tuple[str, str], Any] = {
    ("POST", "/run"): {"appName": APP, "userId": USER, "sessionId": 5, "newMessage": "hi"},
    ("POST", "/run_sse"): {"appName": APP, "userId": USER, "sessionId": 5, "newMessage": "hi"},
    # (an object is a state, or ADK's {"state", "sessionId", "events"}: only a non-object is
    # wrong here)
    ("POST", "/apps/{app_name}/users/{user_id}/sessions"): ["not", "an", "object"],
    ("POST", "/apps/{app_name}/users/{user_id}/sessions/{session_id}"): ["x"],
    ("PATCH", "/apps/{app_name}/users/{user_id}/sessions/{session_id}"): {"stateDelta": [1]},
    ("POST", "/apps/{app_name}/users/{user_id}/sessions/{session_id}/artifacts"): {
        "filename": ["a"],
        "artifact": {"text": "x"},
    },
    ("PATCH", "/apps/{app_name}/users/{user_id}/memory"): {"sessionId": 7},
    ("POST", "/apps/{app_name}/users/{user_id}/sessions/{session_id}/rewind"): {
        "rewindBeforeInvocationId": 3
    },
    ("POST", "/apps/{app_name}/users/{user_id}/sessions/{session_id}/fork"): {"upToEventId": 5},
    ("POST", "/config/telemetry"): {"telemetry": "maybe"},
    ("POST", "/dev/apps/{app_name}/eval-sets"): {"evalSet": "x"},
    ("POST", "/dev/apps/{app_name}/eval-sets/{eval_set_id}/add-session"): {"evalId": 1},
    ("POST", "/dev/apps/{app_name}/eval_sets/{eval_set_id}/add_session"): {"evalId": 1},
    ("PUT", "/dev/apps/{app_name}/eval-sets/{eval_set_id}/eval-cases/{eval_case_id}"): {
        "conversation": "x"
    },
    ("PUT", "/dev/apps/{app_name}/eval_sets/{eval_set_id}/evals/{eval_case_id}"): {
        "conversation": "x"
    },
    ("POST", "/dev/apps/{app_name}/eval-sets/{eval_set_id}/run"): {"evalMetrics": "x"},
    ("POST", "/dev/apps/{app_name}/eval_sets/{eval_set_id}/run_eval"): {"evalMetrics": "x"},
}
_NO_BODY_READ = {
    ("POST", "/dev/apps/{app_name}/eval_sets/{eval_set_id}"),  # the id is in the path
}


def _routes() -> list[tuple[str, str]]:
    api = create_app(apps=fixture_apps(), web=True)
    found: list[tuple[str, str]] = []
    for route in api.routes:
        if not isinstance(route, Route) or route.path in _OPEN:
            continue
        if route.path.startswith(_OPEN_PREFIX):
            continue
        found += [(m, route.path) for m in sorted(route.methods or ()) if m != "HEAD"]
    return found


ROUTES = _routes()
BODY_ROUTES = [(m, p) for m, p in ROUTES if m in ("POST", "PUT", "PATCH")]


@pytest.fixture(scope="module")
def server() -> Iterator[ThreadedServer]:
    api = create_app(apps=fixture_apps(), auth_token=TOKEN, max_body_bytes=MAX_BODY)
    with ThreadedServer(api) as running:
        yield running


@pytest.fixture(scope="module")
def client(server: ThreadedServer) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=server.url, headers=AUTH, timeout=30) as http:
        yield http


@pytest.fixture(scope="module")
def session_id(client: httpx.Client) -> str:
    created = client.post(f"/apps/{APP}/users/{USER}/sessions", json={"state": {"k": 1}})
    assert created.status_code == 200
    return str(created.json()["id"])


def _url(path: str, sid: str, **override: str) -> str:
    values = {
        "app_name": APP,
        "user_id": USER,
        "session_id": sid,
        "name": "notes.txt",
        "version": "0",
        "version_id": "0",
        "eval_set_id": "no_such_set",
        "eval_case_id": "no_such_case",
        "eval_result_id": "no_such_result",
        "event_id": "no-such-event",
        "test_name": "t",
    } | override

    def fill(match: re.Match[str]) -> str:
        return values[match.group(1).split(":")[0]]

    return re.sub(r"\{([^}]+)\}", fill, path)


def _assert_clear_4xx(answer: httpx.Response, status: int | tuple[int, ...], what: str) -> None:
    wanted = status if isinstance(status, tuple) else (status,)
    assert answer.status_code in wanted, (what, answer.status_code, answer.text)
    detail = answer.json()["detail"]
    assert detail and len(str(detail)) > 15, (what, detail)


def test_the_table_covers_every_route() -> None:
    """Each body route has a wrong-typed body here (or reads no body); each path parameter
    is either filled by _url or known."""
    body_paths = {(m, p) for m, p in BODY_ROUTES}
    assert sorted(body_paths - set(_WRONG_TYPE) - _NO_BODY_READ) == []
    assert sorted(set(_WRONG_TYPE) - body_paths) == []
    for _, path in ROUTES:
        _url(path, "s")  # raises KeyError for a parameter nobody fills


@pytest.mark.parametrize(("method", "path"), ROUTES, ids=[f"{m} {p}" for m, p in ROUTES])
def test_no_bearer_token_is_a_401(server: ThreadedServer, method: str, path: str) -> None:
    answer = httpx.request(method, server.url + _url(path, "s"), json={})
    _assert_clear_4xx(answer, 401, f"{method} {path}")
    assert "Bearer" in answer.json()["detail"]


@pytest.mark.parametrize(("method", "path"), BODY_ROUTES, ids=[f"{m} {p}" for m, p in BODY_ROUTES])
def test_malformed_json_and_oversize_bodies(
    client: httpx.Client, session_id: str, method: str, path: str
) -> None:
    url = _url(path, session_id)
    headers = {"content-type": "application/json"}
    if (method, path) not in _NO_BODY_READ:
        answer = client.request(method, url, content=b'{"appName": ', headers=headers)
        _assert_clear_4xx(answer, (400, 404, 422), f"malformed JSON to {method} {path}")
    oversize = b'{"pad": "' + b"x" * MAX_BODY + b'"}'
    answer = client.request(method, url, content=oversize, headers=headers)
    _assert_clear_4xx(answer, 413, f"oversize body to {method} {path}")
    assert str(MAX_BODY) in str(answer.json()["detail"])


@pytest.mark.parametrize(
    ("method", "path"), list(_WRONG_TYPE), ids=[f"{m} {p}" for m, p in _WRONG_TYPE]
)
def test_wrong_types_are_a_422(
    client: httpx.Client, session_id: str, method: str, path: str
) -> None:
    # POST .../sessions/{session_id} creates that session: give it an id not taken yet.
    sid = "fresh-session" if path.endswith("/sessions/{session_id}") else session_id
    answer = client.request(method, _url(path, sid), json=_WRONG_TYPE[(method, path)])
    _assert_clear_4xx(answer, (400, 404, 422), f"wrong types to {method} {path}")


_UNKNOWN_CASES = [
    (m, p, param)
    for m, p in ROUTES
    for param in _UNKNOWN
    if "{" + param in p and (m, p, param) not in _NOT_404
]


@pytest.mark.parametrize(
    ("method", "path", "param"),
    _UNKNOWN_CASES,
    ids=[f"{m} {p} unknown {param}" for m, p, param in _UNKNOWN_CASES],
)
def test_unknown_things_are_a_404(
    client: httpx.Client, session_id: str, method: str, path: str, param: str
) -> None:
    kind, value = _UNKNOWN[param]
    body = _WRONG_TYPE.get((method, path)) if method in ("POST", "PUT", "PATCH") else None
    answer = client.request(method, _url(path, session_id, **{param: value}), json=body or {})
    # 404, or as google-adk answers some eval routes, 400; 422 when the body is refused first.
    _assert_clear_4xx(answer, (400, 404, 422), f"unknown {kind} on {method} {path}")


def test_run_routes_name_unknown_apps_and_sessions(client: httpx.Client, session_id: str) -> None:
    """/run and /run_sse take the app and session in the body."""
    message = {"role": "user", "parts": [{"text": "hi"}]}
    for route in ("/run", "/run_sse"):
        for app, sid in (("no_such_app", session_id), (APP, "no-such-session")):
            body = {"appName": app, "userId": USER, "sessionId": sid, "newMessage": message}
            answer = client.post(route, json=body)
            _assert_clear_4xx(answer, 404, f"{route} with app {app}, session {sid}")


@pytest.mark.parametrize("name", ["../../etc/passwd", "a/../../b", "/abs.txt", "x/./y"])
def test_path_traversal_artifact_names_are_a_400(
    client: httpx.Client, session_id: str, name: str
) -> None:
    base = f"/apps/{APP}/users/{USER}/sessions/{session_id}/artifacts"
    saved = client.post(base, json={"filename": name, "artifact": {"text": "x"}})
    _assert_clear_4xx(saved, 400, f"save {name}")
    quoted = httpx.URL(base + "/" + name.replace("/", "%2F"))
    for method in ("GET", "DELETE"):
        _assert_clear_4xx(client.request(method, quoted), 400, f"{method} {name}")


def test_nothing_was_stored(client: httpx.Client, session_id: str) -> None:
    """Runs last in this module: every refused request above left no trace."""
    sessions = client.get(f"/apps/{APP}/users/{USER}/sessions").json()
    assert [s["id"] for s in sessions] == [session_id]
    stored = client.get(f"/apps/{APP}/users/{USER}/sessions/{session_id}").json()
    assert (stored["events"], stored["state"]) == ([], {"k": 1})
    base = f"/apps/{APP}/users/{USER}/sessions/{session_id}/artifacts"
    assert client.get(base).json() == []
    assert client.get(f"/dev/apps/{APP}/eval-sets").json() == {"evalSetIds": []}
    assert client.get(f"/dev/apps/{APP}/eval-results").json() == {"evalResultIds": []}
    assert client.get("/config/telemetry").json() == {"telemetry": None}
