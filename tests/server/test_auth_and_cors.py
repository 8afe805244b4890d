"""Bearer-token auth and CORS headers, through a real uvicorn server."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

from eventide.server import create_app
from tests.server.fixture_agents import fixture_apps
from tests.server.harness import ThreadedServer

TOKEN = "s3cret-token"
ORIGIN = "http://localhost:5173"


@pytest.fixture(scope="module")
def guarded() -> Iterator[ThreadedServer]:
    api = create_app(apps=fixture_apps(), auth_token=TOKEN, cors_origins=[ORIGIN], web=True)
    with ThreadedServer(api) as running:
        yield running


def test_requests_need_the_bearer_token(guarded: ThreadedServer) -> None:
    with httpx.Client(base_url=guarded.url) as client:
        missing = client.get("/list-apps")
        assert missing.status_code == 401
        assert missing.headers["www-authenticate"].startswith("Bearer")
        assert "Authorization: Bearer" in missing.json()["detail"]
        wrong = client.get("/list-apps", headers={"Authorization": "Bearer nope"})
        assert wrong.status_code == 401
        not_bearer = client.get("/list-apps", headers={"Authorization": f"Basic {TOKEN}"})
        assert not_bearer.status_code == 401
        right = client.get("/list-apps", headers={"Authorization": f"Bearer {TOKEN}"})
        assert right.status_code == 200
        assert "echo" in right.json()
        run = client.post("/run_sse", json={})
        assert run.status_code == 401


def test_health_docs_and_dev_ui_stay_open(guarded: ThreadedServer) -> None:
    with httpx.Client(base_url=guarded.url) as client:
        assert client.get("/health").status_code == 200
        assert client.get("/openapi.json").status_code == 200
        assert client.get("/dev-ui/").status_code == 200
        redirect = client.get("/")
        assert (redirect.status_code, redirect.headers["location"]) == (307, "/dev-ui/")


def test_cors_preflight_and_headers_for_allowed_origin(guarded: ThreadedServer) -> None:
    with httpx.Client(base_url=guarded.url) as client:
        preflight = client.options(
            "/run_sse",
            headers={
                "Origin": ORIGIN,
                "Access-Control-Request-Method": "POST",
                "Access-Control-Request-Headers": "authorization,content-type",
            },
        )
        assert preflight.status_code == 200
        assert preflight.headers["access-control-allow-origin"] == ORIGIN
        assert "POST" in preflight.headers["access-control-allow-methods"]
        assert "authorization" in preflight.headers["access-control-allow-headers"].lower()

        simple = client.get(
            "/list-apps", headers={"Origin": ORIGIN, "Authorization": f"Bearer {TOKEN}"}
        )
        assert simple.headers["access-control-allow-origin"] == ORIGIN
        # A refused request still carries CORS headers, so the browser shows the 401.
        refused = client.get("/list-apps", headers={"Origin": ORIGIN})
        assert refused.status_code == 401
        assert refused.headers["access-control-allow-origin"] == ORIGIN


def test_cors_refuses_other_origins(guarded: ThreadedServer) -> None:
    with httpx.Client(base_url=guarded.url) as client:
        preflight = client.options(
            "/list-apps",
            headers={"Origin": "http://evil.example", "Access-Control-Request-Method": "GET"},
        )
        assert preflight.status_code == 400
        assert "access-control-allow-origin" not in preflight.headers
        plain = client.get(
            "/list-apps",
            headers={"Origin": "http://evil.example", "Authorization": f"Bearer {TOKEN}"},
        )
        assert "access-control-allow-origin" not in plain.headers


def test_no_cors_headers_unless_configured(server: ThreadedServer) -> None:
    with httpx.Client(base_url=server.url) as client:
        response = client.get("/list-apps", headers={"Origin": ORIGIN})
        assert response.status_code == 200
        assert "access-control-allow-origin" not in response.headers
