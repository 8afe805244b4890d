"""Artifact endpoints through a real uvicorn server."""

from __future__ import annotations

import uuid

import httpx


def _run_tools_turn(client: httpx.Client) -> tuple[str, str]:
    user = f"u-{uuid.uuid4().hex[:8]}"
    sid = client.post(f"/apps/tools/users/{user}/sessions").json()["id"]
    body = {
        "app_name": "tools",
        "user_id": user,
        "session_id": sid,
        "new_message": {"role": "user", "parts": [{"text": "report"}]},
    }
    assert client.post("/run", json=body).status_code == 200
    return user, sid


def test_list_get_and_versions(client: httpx.Client) -> None:
    """Spec, artifact_delta: the versions an event records are the ones the service holds."""
    user, sid = _run_tools_turn(client)
    base = f"/apps/tools/users/{user}/sessions/{sid}/artifacts"
    assert client.get(base).json() == ["report.txt"]
    assert client.get(f"{base}/report.txt").json() == {"text": "final report"}
    assert client.get(f"{base}/report.txt", params={"version": 0}).json() == {"text": "first draft"}
    assert client.get(f"{base}/report.txt/versions").json() == [0, 1]
    assert client.get(f"{base}/report.txt/versions/1").json() == {"text": "final report"}


def test_missing_artifacts_sessions_and_bad_versions(client: httpx.Client) -> None:
    user, sid = _run_tools_turn(client)
    base = f"/apps/tools/users/{user}/sessions/{sid}/artifacts"
    missing = client.get(f"{base}/nope.txt")
    assert missing.status_code == 404
    assert missing.json()["detail"].startswith("Artifact 'nope.txt' not found in this session;")
    assert client.get(f"{base}/report.txt", params={"version": 7}).status_code == 404
    # As `adk api_server`: an artifact without versions lists none.
    assert client.get(f"{base}/nope.txt/versions").json() == []
    bad_version = client.get(f"{base}/report.txt", params={"version": "latest"})
    assert bad_version.status_code == 422
    assert bad_version.json()["detail"][0]["loc"] == ["query", "version"]
    no_session = client.get(f"/apps/tools/users/{user}/sessions/nope/artifacts")
    assert no_session.status_code == 404
    assert client.get(f"/apps/nope/users/{user}/sessions/{sid}/artifacts").status_code == 404
