"""The routes ADK front ends call beyond sessions and turns: /version, app-info, the UI's
runtime config, PATCH on a session, session import, saving and deleting artifacts, artifact
version metadata and memory; each with the shapes ``adk api_server`` 2.13 answers (compared
by running both side by side), through a real uvicorn server."""

from __future__ import annotations

import base64
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx

from eventide.server import create_app
from tests.server.harness import ThreadedServer

_ECHO_AGENT = """
from eventide import LlmAgent
from eventide.testing import ScriptedModel

root_agent = LlmAgent(name="echo", model=ScriptedModel(responses=[]), instruction="echo")
"""


def _session(client: httpx.Client, app: str = "tools", **body: object) -> tuple[str, str]:
    user = f"u-{uuid.uuid4().hex[:8]}"
    created = client.post(f"/apps/{app}/users/{user}/sessions", json=body or None)
    assert created.status_code == 200, created.text
    return user, created.json()["id"]


def test_version_app_info_and_ui_config(client: httpx.Client) -> None:
    """ADK's /version, /apps/{app}/app-info and the dev UI's config files."""
    version = client.get("/version").json()
    assert set(version) == {"version", "language", "language_version"}
    assert version["language"] == "python"

    info = client.get("/apps/tools/app-info").json()
    assert (info["name"], info["rootAgentName"], info["language"]) == (
        "tools",
        "tool_agent",
        "python",
    )
    assert info["agents"]["tool_agent"]["sub_agents"] == []
    assert client.get("/apps/nope/app-info").status_code == 404

    assert client.get("/dev-ui/assets/config/runtime-config.json").json() == {
        "backendUrl": "",
        "telemetry": None,
    }
    assert client.get("/config/telemetry").json() == {"telemetry": None}


def test_telemetry_consent_is_asked_once_and_remembered(tmp_path: Path) -> None:
    """As `adk web`: no answer until the UI posts one (with its security header), then the
    answer, kept in the apps folder so a restarted server does not ask again; a post without
    the header or with a non-boolean answer is refused and stores nothing."""
    app_dir = tmp_path / "hello"
    app_dir.mkdir()
    (app_dir / "agent.py").write_text(_ECHO_AGENT)
    header = {"x-adk-telemetry-request": "true"}
    with ThreadedServer(create_app(apps_dir=tmp_path)) as server:
        with httpx.Client(base_url=server.url) as client:
            assert client.get("/config/telemetry").json() == {"telemetry": None}
            refused = client.post("/config/telemetry", json={"telemetry": False})
            assert refused.status_code == 400
            assert "x-adk-telemetry-request" in refused.json()["detail"]
            wrong = client.post("/config/telemetry", json={"telemetry": "no"}, headers=header)
            assert wrong.status_code == 422
            assert client.get("/config/telemetry").json() == {"telemetry": None}
            answered = client.post("/config/telemetry", json={"telemetry": False}, headers=header)
            assert answered.json() == {"telemetry": False}
            assert client.get("/config/telemetry").json() == {"telemetry": False}
    with ThreadedServer(create_app(apps_dir=tmp_path)) as server:
        with httpx.Client(base_url=server.url) as client:
            assert client.get("/config/telemetry").json() == {"telemetry": False}


def test_app_info_lists_function_declarations_in_camel_case() -> None:
    """Tools appear as ``{"functionDeclarations": [...]}`` with camelCase keys, as ADK sends."""
    from eventide import LlmAgent
    from eventide.apps import App
    from eventide.testing import ScriptedModel

    def lookup(order_id: str) -> dict[str, str]:
        """Find an order."""
        return {"order_id": order_id}

    helper = LlmAgent(name="helper", model=ScriptedModel(responses=[]), instruction="help")
    root = LlmAgent(
        name="desk",
        model=ScriptedModel(responses=[]),
        instruction="triage",
        tools=[lookup],
        sub_agents=[helper],
    )
    api = create_app(apps={"desk": App(name="desk", root_agent=root)})
    with ThreadedServer(api) as server, httpx.Client(base_url=server.url) as client:
        info = client.get("/apps/desk/app-info").json()
    desk = info["agents"]["desk"]
    assert (desk["instruction"], desk["sub_agents"]) == ("triage", ["helper"])
    declaration = desk["tools"][0]["functionDeclarations"][0]
    assert (declaration["name"], declaration["description"]) == ("lookup", "Find an order.")
    assert info["agents"]["helper"]["tools"] == []


def test_patch_session_state_records_an_event(client: httpx.Client) -> None:
    """PATCH takes stateDelta (state_delta too), commits it as a user event, answers the
    session; bad bodies and unknown sessions are 4xx and change nothing."""
    user, sid = _session(client, "echo", state={"a": 1})
    url = f"/apps/echo/users/{user}/sessions/{sid}"
    patched = client.patch(url, json={"stateDelta": {"b": 2}})
    assert patched.status_code == 200
    session = patched.json()
    assert session["state"] == {"a": 1, "b": 2}
    assert session["events"][-1]["author"] == "user"
    assert session["events"][-1]["actions"]["stateDelta"] == {"b": 2}
    assert client.patch(url, json={"state_delta": {"c": 3}}).json()["state"]["c"] == 3

    for bad in ({"stateDelta": 5}, {}, {"stateDelta": {}, "extra": 1}, [1]):
        answer = client.patch(url, json=bad)
        assert answer.status_code == 422, bad
        assert answer.json()["detail"][0]["loc"][0] == "body"
    malformed = client.patch(url, content=b"{oops", headers={"content-type": "application/json"})
    assert malformed.status_code == 422
    assert "not valid JSON" in malformed.json()["detail"][0]["msg"]
    missing = client.patch(f"/apps/echo/users/{user}/sessions/nope", json={"stateDelta": {"x": 1}})
    assert missing.status_code == 404
    assert "POST /apps/echo/users/" in missing.json()["detail"]
    assert client.get(url).json()["state"] == {"a": 1, "b": 2, "c": 3}
    assert len(client.get(url).json()["events"]) == 2


def test_export_then_import_round_trip(client: httpx.Client) -> None:
    """ADK's UI exports a session (GET) and imports it as POST {"events", "state"}: the
    new session holds the same conversation and state."""
    user, sid = _session(client)
    run = {
        "appName": "tools",
        "userId": user,
        "sessionId": sid,
        "newMessage": {"role": "user", "parts": [{"text": "report"}]},
    }
    assert client.post("/run", json=run).status_code == 200
    exported = client.get(f"/apps/tools/users/{user}/sessions/{sid}").json()

    imported = client.post(
        f"/apps/tools/users/{user}/sessions",
        json={"events": exported["events"], "state": exported["state"]},
    )
    assert imported.status_code == 200
    new_id = imported.json()["id"]
    assert new_id != sid
    again = client.get(f"/apps/tools/users/{user}/sessions/{new_id}").json()

    def conversation(session: dict[str, object]) -> list[object]:
        events = session["events"]
        assert isinstance(events, list)
        return [(e["author"], e.get("content"), e["actions"]) for e in events]

    assert conversation(again) == conversation(exported)
    assert again["state"] == exported["state"]
    assert {e["id"] for e in again["events"]}.isdisjoint({e["id"] for e in exported["events"]})


def test_import_refuses_bad_events_and_stores_nothing(client: httpx.Client) -> None:
    """An import with a malformed event is a 422 and leaves no half-imported session."""
    user = f"u-{uuid.uuid4().hex[:8]}"
    url = f"/apps/tools/users/{user}/sessions"
    bad = client.post(url, json={"events": [{"author": "user"}, {"content": "nope"}]})
    assert bad.status_code == 422
    assert bad.json()["detail"][0]["loc"][0] == "body"
    not_a_list = client.post(url, json={"events": {"author": "user"}})
    assert not_a_list.status_code == 422
    assert "events must be a list" in not_a_list.json()["detail"][0]["msg"]
    assert client.get(url).json() == []


def test_save_list_metadata_load_and_delete_artifacts(client: httpx.Client) -> None:
    """POST .../artifacts stores a version and answers its metadata; versions/metadata
    lists them; DELETE removes every version (null, 200, as ADK)."""
    user, sid = _session(client)
    base = f"/apps/tools/users/{user}/sessions/{sid}/artifacts"
    data = base64.b64encode(b"hello").decode()
    first = client.post(
        base,
        json={
            "filename": "notes.txt",
            "artifact": {"inlineData": {"mimeType": "text/plain", "data": data}},
        },
    )
    assert first.status_code == 200
    assert first.json()["version"] == 0
    assert first.json()["mimeType"] == "text/plain"
    assert first.json()["canonicalUri"].endswith("/artifacts/notes.txt/versions/0")
    second = client.post(base, json={"filename": "notes.txt", "artifact": {"text": "v2"}})
    assert second.json()["version"] == 1

    assert client.get(base).json() == ["notes.txt"]
    assert client.get(f"{base}/notes.txt").json() == {"text": "v2"}
    assert client.get(f"{base}/notes.txt/versions/0").json() == {
        "inlineData": {"mimeType": "text/plain", "data": data}
    }
    listed = client.get(f"{base}/notes.txt/versions/metadata").json()
    assert [(m["version"], m.get("mimeType")) for m in listed] == [(0, "text/plain"), (1, None)]
    one = client.get(f"{base}/notes.txt/versions/1/metadata").json()
    assert (one["version"], one["customMetadata"]) == (1, {})
    assert set(one) == {"version", "canonicalUri", "customMetadata", "createTime"}
    assert client.get(f"{base}/notes.txt/versions/7/metadata").status_code == 404
    assert client.get(f"{base}/nope.txt/versions/metadata").json() == []

    deleted = client.delete(f"{base}/notes.txt")
    assert (deleted.status_code, deleted.json()) == (200, None)
    assert client.get(base).json() == []
    assert client.delete(f"{base}/notes.txt").status_code == 200


def test_artifact_versions_keep_custom_metadata_in_adks_shape(client: httpx.Client) -> None:
    """customMetadata sent with a save is kept with that version and answered back, with its
    createTime, mimeType and canonicalUri, in the keys `adk api_server` sends (its data keys
    as sent); other versions keep their own."""
    user, sid = _session(client)
    base = f"/apps/tools/users/{user}/sessions/{sid}/artifacts"
    data = base64.b64encode(b"%PDF-1.7").decode()
    saved = client.post(
        base,
        json={
            "filename": "reports/q1.pdf",
            "artifact": {"inlineData": {"mimeType": "application/pdf", "data": data}},
            "customMetadata": {"source_system": "erp", "pages": 3, "tags": ["q1"]},
        },
    ).json()
    assert set(saved) == {"version", "canonicalUri", "customMetadata", "createTime", "mimeType"}
    assert saved["customMetadata"] == {"source_system": "erp", "pages": 3, "tags": ["q1"]}
    assert (saved["version"], saved["mimeType"]) == (0, "application/pdf")
    assert isinstance(saved["createTime"], float)
    client.post(
        base,
        json={"filename": "reports/q1.pdf", "artifact": {"text": "x"}, "custom_metadata": {"a": 1}},
    )
    listed = client.get(f"{base}/reports/q1.pdf/versions/metadata").json()
    assert listed[0] == saved
    assert (listed[1]["customMetadata"], "mimeType" in listed[1]) == ({"a": 1}, False)
    assert client.get(f"{base}/reports/q1.pdf/versions/0/metadata").json() == saved


def test_bad_artifact_requests_are_refused_and_store_nothing(client: httpx.Client) -> None:
    """Path traversal, wrong types, missing fields, metadata that is not an object, unknown
    sessions: each a 4xx saying what to fix, and no artifact is written."""
    user, sid = _session(client)
    base = f"/apps/tools/users/{user}/sessions/{sid}/artifacts"
    cases = [
        ({"filename": "../escape.txt", "artifact": {"text": "x"}}, 400, "path traversal"),
        ({"filename": "/etc/passwd", "artifact": {"text": "x"}}, 400, "absolute"),
        ({"filename": "a.txt"}, 422, "Field required"),
        ({"filename": 5, "artifact": {"text": "x"}}, 422, "string"),
        ({"filename": "a.txt", "artifact": {}}, 422, "must hold text"),
        (
            {"filename": "a.txt", "artifact": {"text": "x"}, "customMetadata": ["k"]},
            422,
            "dictionary",
        ),
    ]
    for body, status, words in cases:
        answer = client.post(base, json=body)
        assert answer.status_code == status, (body, answer.text)
        assert words in str(answer.json()["detail"]), (body, answer.text)
    assert client.get(f"{base}/..%2Fescape.txt").status_code == 400
    assert client.delete(f"{base}/a%2F..%2F..%2Fx").status_code == 400
    unknown = client.post(
        f"/apps/tools/users/{user}/sessions/nope/artifacts",
        json={"filename": "a.txt", "artifact": {"text": "x"}},
    )
    assert unknown.status_code == 404
    assert client.get(base).json() == []


def test_memory_route_indexes_a_session(client: httpx.Client) -> None:
    """PATCH /apps/{app}/users/{user}/memory adds the session (null, 200); an unknown
    session is a 404, a body without sessionId a 422."""
    user, sid = _session(client, "echo")
    run = {
        "app_name": "echo",
        "user_id": user,
        "session_id": sid,
        "new_message": {"role": "user", "parts": [{"text": "remember pineapples"}]},
    }
    assert client.post("/run", json=run).status_code == 200
    added = client.patch(f"/apps/echo/users/{user}/memory", json={"sessionId": sid})
    assert (added.status_code, added.json()) == (200, None)
    assert (
        client.patch(f"/apps/echo/users/{user}/memory", json={"sessionId": "nope"}).status_code
        == 404
    )
    assert client.patch(f"/apps/echo/users/{user}/memory", json={}).status_code == 422
    assert (
        client.patch(f"/apps/nope/users/{user}/memory", json={"sessionId": sid}).status_code == 404
    )


def test_oversize_bodies_are_refused_before_anything_is_stored() -> None:
    """A body over max_body_bytes is a 413 saying the limit, declared or chunked."""
    from tests.server.fixture_agents import fixture_apps

    api = create_app(apps=fixture_apps(), max_body_bytes=1000)
    with ThreadedServer(api) as server, httpx.Client(base_url=server.url) as client:
        user, sid = _session(client)
        base = f"/apps/tools/users/{user}/sessions/{sid}/artifacts"
        big = client.post(base, json={"filename": "big.txt", "artifact": {"text": "x" * 2000}})
        assert big.status_code == 413
        assert "1000 bytes" in big.json()["detail"]

        def chunks() -> Iterator[bytes]:
            yield b'{"filename": "big.txt", "artifact": {"text": "'
            for _ in range(10):
                yield b"y" * 200
            yield b'"}}'

        chunked = client.post(base, content=chunks(), headers={"content-type": "application/json"})
        assert chunked.status_code == 413
        assert client.get(base).json() == []
        assert (
            client.post(base, json={"filename": "ok.txt", "artifact": {"text": "ok"}}).status_code
            == 200
        )


def test_every_route_needs_the_bearer_token_when_auth_is_on() -> None:
    """With auth on, the new routes answer 401 without the token and store nothing."""
    from tests.server.fixture_agents import fixture_apps

    api = create_app(apps=fixture_apps(), auth_token="tok")
    with ThreadedServer(api) as server, httpx.Client(base_url=server.url) as client:
        auth = {"Authorization": "Bearer tok"}
        sid = client.post("/apps/echo/users/u/sessions", headers=auth).json()["id"]
        session = f"/apps/echo/users/u/sessions/{sid}"
        requests: list[tuple[str, str, dict[str, Any] | None]] = [
            ("GET", "/version", None),
            ("GET", "/apps/echo/app-info", None),
            ("PATCH", session, {"stateDelta": {"x": 1}}),
            ("POST", f"{session}/artifacts", {"filename": "a.txt", "artifact": {"text": "x"}}),
            ("GET", f"{session}/artifacts/a.txt/versions/metadata", None),
            ("DELETE", f"{session}/artifacts/a.txt", None),
            ("PATCH", "/apps/echo/users/u/memory", {"sessionId": sid}),
            ("POST", "/apps/echo/users/u/sessions", {"events": []}),
        ]
        for method, path, body in requests:
            answer = client.request(method, path, json=body)
            assert answer.status_code == 401, (method, path)
            assert "Authorization: Bearer" in answer.json()["detail"]
        kept = client.get(session, headers=auth).json()
        assert (kept["state"], len(kept["events"])) == ({}, 0)
        assert client.get(f"{session}/artifacts", headers=auth).json() == []
        assert len(client.get("/apps/echo/users/u/sessions", headers=auth).json()) == 1
