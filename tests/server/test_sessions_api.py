"""Session endpoints, app listing and health, through a real uvicorn server."""

from __future__ import annotations

import uuid

import httpx


def _user() -> str:
    return f"u-{uuid.uuid4().hex[:8]}"


def test_health_and_list_apps(client: httpx.Client) -> None:
    assert client.get("/health").json()["status"] == "ok"
    assert client.get("/list-apps").json() == ["chunks", "echo", "failing", "gated", "tools"]


def test_create_session_without_body_then_get_list_delete(client: httpx.Client) -> None:
    user = _user()
    created = client.post(f"/apps/echo/users/{user}/sessions")
    assert created.status_code == 200
    session = created.json()
    assert (session["appName"], session["userId"], session["state"], session["events"]) == (
        "echo",
        user,
        {},
        [],
    )
    sid = session["id"]

    fetched = client.get(f"/apps/echo/users/{user}/sessions/{sid}").json()
    assert fetched["id"] == sid
    listed = client.get(f"/apps/echo/users/{user}/sessions").json()
    assert [s["id"] for s in listed] == [sid]

    deleted = client.delete(f"/apps/echo/users/{user}/sessions/{sid}")
    assert (deleted.status_code, deleted.json()) == (200, None)
    assert client.get(f"/apps/echo/users/{user}/sessions/{sid}").status_code == 404
    assert client.get(f"/apps/echo/users/{user}/sessions").json() == []


def test_create_session_with_initial_state_in_both_shapes(client: httpx.Client) -> None:
    """Spec, state prefixes: temp: keys are never persisted, app:/user: keys are shared."""
    user = _user()
    wrapped = client.post(
        f"/apps/echo/users/{user}/sessions",
        json={"state": {"plan": "gold", "temp:scratch": 1, "user:lang": "fr"}},
    ).json()
    assert wrapped["state"] == {"plan": "gold", "user:lang": "fr"}

    plain = client.post(f"/apps/echo/users/{user}/sessions", json={"plan": "free"}).json()
    # user: keys belong to the user, so the second session sees the first one's.
    assert plain["state"] == {"plan": "free", "user:lang": "fr"}


def test_create_session_with_chosen_id_and_duplicate_is_409(client: httpx.Client) -> None:
    user = _user()
    url = f"/apps/echo/users/{user}/sessions/my-session"
    first = client.post(url, json={"state": {"a": 1}})
    assert first.status_code == 200
    assert (first.json()["id"], first.json()["state"]) == ("my-session", {"a": 1})
    again = client.post(url)
    assert again.status_code == 409
    assert "my-session" in again.json()["detail"]
    via_body = client.post(f"/apps/echo/users/{user}/sessions", json={"session_id": "other"})
    assert via_body.json()["id"] == "other"


def test_unknown_app_is_404_naming_known_apps(client: httpx.Client) -> None:
    response = client.get("/apps/nope/users/u/sessions")
    assert response.status_code == 404
    assert response.json()["detail"] == (
        "App 'nope' not found. Known apps: 'chunks', 'echo', 'failing', 'gated', 'tools'."
    )
    assert client.post("/apps/nope/users/u/sessions").status_code == 404


def test_unknown_session_is_404(client: httpx.Client) -> None:
    response = client.get("/apps/echo/users/u/sessions/missing")
    assert response.status_code == 404
    assert "'missing'" in response.json()["detail"]


def test_malformed_create_body_is_422(client: httpx.Client) -> None:
    user = _user()
    bad_json = client.post(
        f"/apps/echo/users/{user}/sessions",
        content=b'{"state": ',
        headers={"content-type": "application/json"},
    )
    assert bad_json.status_code == 422
    assert bad_json.json()["detail"][0]["type"] == "json_invalid"
    not_object = client.post(f"/apps/echo/users/{user}/sessions", json=[1, 2])
    assert not_object.status_code == 422
    assert "expected a JSON object, got list" in not_object.json()["detail"][0]["msg"]


def test_openapi_spec_lists_every_endpoint(client: httpx.Client) -> None:
    spec = client.get("/openapi.json").json()
    assert set(spec["paths"]) >= {
        "/health",
        "/list-apps",
        "/apps/{app_name}/users/{user_id}/sessions",
        "/apps/{app_name}/users/{user_id}/sessions/{session_id}",
        "/run",
        "/run_sse",
        "/apps/{app_name}/users/{user_id}/sessions/{session_id}/artifacts",
        "/apps/{app_name}/users/{user_id}/sessions/{session_id}/artifacts/{name}",
        "/apps/{app_name}/users/{user_id}/sessions/{session_id}/artifacts/{name}/versions",
        "/debug/model_request/{event_id}",
    }
    # Records are documented with the camelCase names the API sends.
    assert "appName" in spec["components"]["schemas"]["Session"]["properties"]
    assert "newMessage" in spec["components"]["schemas"]["RunAgentRequest"]["properties"]
