"""``TurnRoutes``: well-formed ``/run`` and ``/run_sse`` requests are served without FastAPI,
with the answers FastAPI's routes give; anything else goes on to FastAPI unchanged."""

from __future__ import annotations

import json
import re
import uuid
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from starlette.types import Receive, Scope, Send

from eventide.server import create_app
from eventide.server.run_routes import TurnRoutes
from tests.server.fixture_agents import fixture_apps
from tests.server.harness import ThreadedServer

# FastAPI parses any application/...+json body as JSON; TurnRoutes takes only
# application/json, so this content type makes the same request take FastAPI's route.
FASTAPI = {"content-type": "application/turn+json"}
FAST = {"content-type": "application/json"}


class _Spy:
    """Sits behind TurnRoutes: records the turn requests that reached FastAPI."""

    def __init__(self, app: Any) -> None:
        self.app = app
        self.reached: list[str] = []

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope["path"] in ("/run", "/run_sse"):
            self.reached.append(scope["path"])
        await self.app(scope, receive, send)


@pytest.fixture(scope="module")
def spied() -> Iterator[tuple[ThreadedServer, _Spy]]:
    api = create_app(apps=fixture_apps())
    stack = api.build_middleware_stack()
    layer: Any = stack
    while not isinstance(layer, TurnRoutes):
        layer = layer.app
    spy = _Spy(layer.app)
    layer.app = spy
    api.middleware_stack = stack
    with ThreadedServer(api) as server:
        yield server, spy


@pytest.fixture
def http(spied: tuple[ThreadedServer, _Spy]) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=spied[0].url, timeout=30) as client:
        yield client


def _turn(http: httpx.Client, app: str, **extra: Any) -> dict[str, Any]:
    user = f"u-{uuid.uuid4().hex[:8]}"
    sid = http.post(f"/apps/{app}/users/{user}/sessions").json()["id"]
    message = {"role": "user", "parts": [{"text": "hi"}]}
    return {"appName": app, "userId": user, "sessionId": sid, "newMessage": message, **extra}


def _post(http: httpx.Client, path: str, body: Any, headers: dict[str, str]) -> httpx.Response:
    content = body if isinstance(body, bytes) else json.dumps(body).encode()
    return http.post(path, content=content, headers=headers)


_VOLATILE = re.compile(rb'"(id|invocationId|timestamp|userId|sessionId)": ?("[^"]*"|[0-9.e+-]+)')


def _stable(body: bytes) -> bytes:
    """The body with the values that differ between two runs of the same turn masked."""
    return _VOLATILE.sub(rb'"\1":_', body)


def _headers(response: httpx.Response, *, sized: bool = True) -> list[tuple[str, str]]:
    """The headers but the date (and the length's value unless ``sized``), in order."""
    return [
        (k, v if sized or k != "content-length" else "_")
        for k, v in response.headers.multi_items()
        if k != "date"
    ]


@pytest.mark.parametrize("path", ["/run", "/run_sse"])
@pytest.mark.parametrize("app", ["echo", "chunks", "tools", "failing"])
def test_a_turn_is_answered_as_fastapis_route_answers_it(
    spied: tuple[ThreadedServer, _Spy], http: httpx.Client, path: str, app: str
) -> None:
    """Same status, headers and body (but ids and times) on both paths, errors included;
    the application/json request never reached FastAPI."""
    spy = spied[1]
    answers = []
    for headers in (FASTAPI, FAST):
        spy.reached.clear()
        answers.append(_post(http, path, _turn(http, app, streaming=True), headers))
        assert spy.reached == ([path] if headers is FASTAPI else [])
    slow, fast = answers
    # Ids and times differ in length from one turn to the next.
    assert (fast.status_code, _headers(fast, sized=False)) == (
        slow.status_code,
        _headers(slow, sized=False),
    )
    assert _stable(fast.content) == _stable(slow.content)
    assert fast.content  # the comparison compared something


@pytest.mark.parametrize("path", ["/run", "/run_sse"])
def test_unknown_apps_and_sessions_are_fastapis_404s(
    spied: tuple[ThreadedServer, _Spy], http: httpx.Client, path: str
) -> None:
    spy = spied[1]
    known = _turn(http, "echo")
    for body in ({**known, "appName": "nope"}, {**known, "sessionId": "missing"}):
        spy.reached.clear()
        slow = _post(http, path, body, FASTAPI)
        fast = _post(http, path, body, FAST)
        assert spy.reached == [path]
        assert slow.status_code == 404
        assert (fast.status_code, _headers(fast), fast.content) == (
            slow.status_code,
            _headers(slow),
            slow.content,
        )


_BAD_BODIES: list[Any] = [
    b"",
    b'{"appName": "echo",',
    b"null",
    b"[1, 2]",
    b"\xff\xfe not utf-8",
    {"appName": "echo", "userId": "u"},
    {"appName": "echo", "userId": "u", "sessionId": 5, "newMessage": "hi"},
    {"appName": "", "userId": "u", "sessionId": "s", "newMessage": {"parts": []}},
]


@pytest.mark.parametrize("path", ["/run", "/run_sse"])
@pytest.mark.parametrize("body", _BAD_BODIES, ids=range(len(_BAD_BODIES)))
def test_bad_bodies_get_fastapis_own_422(
    spied: tuple[ThreadedServer, _Spy], http: httpx.Client, path: str, body: Any
) -> None:
    """A body that is not a valid request is replayed to FastAPI: the same answer."""
    spy = spied[1]
    spy.reached.clear()
    slow = _post(http, path, body, FASTAPI)
    fast = _post(http, path, body, FAST)
    assert spy.reached == [path, path]
    assert slow.status_code == 422
    assert (fast.status_code, _headers(fast), fast.content) == (
        slow.status_code,
        _headers(slow),
        slow.content,
    )


@pytest.mark.parametrize(
    "headers", [{}, {"content-type": "text/plain"}, {"content-type": "application/jsonx"}]
)
def test_other_content_types_are_refused_before_any_route(
    spied: tuple[ThreadedServer, _Spy], http: httpx.Client, headers: dict[str, str]
) -> None:
    """The browser guard answers 415 (a cross-site form posts text/plain): neither the fast
    path nor FastAPI runs the turn."""
    spy = spied[1]
    spy.reached.clear()
    answer = _post(http, "/run", _turn(http, "echo"), headers)
    assert spy.reached == []
    assert answer.status_code == 415


def test_other_json_types_go_to_fastapi(
    spied: tuple[ThreadedServer, _Spy], http: httpx.Client
) -> None:
    spy = spied[1]
    spy.reached.clear()
    answer = _post(http, "/run", _turn(http, "echo"), {"content-type": "application/ld+json"})
    assert spy.reached == ["/run"]
    assert answer.status_code == 200


def test_a_chunked_body_takes_the_fast_path(
    spied: tuple[ThreadedServer, _Spy], http: httpx.Client
) -> None:
    """A body sent in several chunks (no Content-Length) is read whole."""
    spy = spied[1]
    spy.reached.clear()
    raw = json.dumps(_turn(http, "echo")).encode()

    def pieces() -> Iterator[bytes]:
        yield raw[:10]
        yield raw[10:]

    answer = http.post("/run", content=pieces(), headers=FAST)
    assert answer.status_code == 200
    assert answer.json()[0]["content"]["parts"][0]["text"] == "echo: hi"
    assert spy.reached == []


def test_other_methods_and_paths_are_fastapis(
    spied: tuple[ThreadedServer, _Spy], http: httpx.Client
) -> None:
    assert http.get("/run").status_code == 405
    assert http.post("/run/", json={}).status_code in (307, 404, 405)
    assert spied[1].reached == ["/run"]


@pytest.mark.parametrize("kind", ["class", "status", "plain function"])
@pytest.mark.parametrize("path", ["/run", "/run_sse"])
def test_the_apps_own_exception_handlers_answer_the_fast_paths_errors(path: str, kind: str) -> None:
    """A handler registered on the app for HTTPException (by class or by status code, async
    or a plain function) answers a turn's 404 on the fast path as on FastAPI's route."""
    from fastapi import Request
    from fastapi.responses import JSONResponse
    from starlette.exceptions import HTTPException as StarletteHTTPException

    api = create_app(apps=fixture_apps())

    async def mine(_: Request, exc: Exception) -> JSONResponse:
        assert isinstance(exc, StarletteHTTPException)
        return JSONResponse({"mine": exc.detail}, exc.status_code, headers={"x-mine": kind})

    def plain(request: Request, exc: Exception) -> JSONResponse:
        assert isinstance(exc, StarletteHTTPException)
        return JSONResponse({"plain": exc.detail}, 404, headers={"x-mine": kind})

    if kind == "class":
        api.add_exception_handler(StarletteHTTPException, mine)
    elif kind == "status":
        api.add_exception_handler(404, mine)
    else:
        api.add_exception_handler(404, plain)

    with ThreadedServer(api) as server, httpx.Client(base_url=server.url, timeout=30) as http:
        known = _turn(http, "echo")
        for body in ({**known, "appName": "nope"}, {**known, "sessionId": "missing"}):
            slow = _post(http, path, body, FASTAPI)
            fast = _post(http, path, body, FAST)
            assert (slow.status_code, slow.headers["x-mine"]) == (404, kind)
            assert (fast.status_code, _headers(fast), fast.content) == (
                slow.status_code,
                _headers(slow),
                slow.content,
            )
