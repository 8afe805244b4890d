"""A client that hangs up in the middle of /run_sse aborts its turn cleanly."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

from eventide.apps.services import build_services
from eventide.cancellation import INVOCATION_ABORTED
from eventide.server import create_app
from tests.server.fixture_agents import fixture_apps
from tests.server.harness import ThreadedServer, sse_events, wait_until


def test_hanging_up_aborts_the_turn_keeps_what_was_committed_and_records_the_abort(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Spec, commit before resume: the event sent before the client left is committed; the
    agent is stopped at its next step, so nothing after it is written, even once the agent
    could have gone on. Issue 34 (cancellation): the abort is recorded as google-adk's
    INVOCATION_ABORTED event, committed to the SQLite file, so a reload shows it."""
    gate = tmp_path / "gate"
    monkeypatch.setenv("EVENTIDE_TEST_GATE", str(gate))
    services = build_services(session_db=None, artifact_root="memory:", base_dir=tmp_path)
    api = create_app(apps=fixture_apps(), services=services)
    inflight = api.state.eventide_inflight
    with ThreadedServer(api) as server, httpx.Client(base_url=server.url, timeout=30) as client:
        sid = client.post("/apps/gated/users/ann/sessions").json()["id"]
        body = {
            "app_name": "gated",
            "user_id": "ann",
            "session_id": sid,
            "new_message": {"role": "user", "parts": [{"text": "go"}]},
        }
        with client.stream("POST", "/run_sse", json=body) as response:
            # Keep the frame reader referenced: a dropped reader is closed at once, and
            # closing it can close the connection before the count below is read.
            frames = sse_events(response)
            first = next(frames)
            assert first["content"]["parts"][0]["text"] == "step 1"
            assert inflight.count == 1
            del frames
        # Leaving the block closed the connection mid-stream.
        wait_until(lambda: inflight.count == 0, what="the turn to be cancelled")
        gate.touch()
        session = client.get(f"/apps/gated/users/ann/sessions/{sid}").json()
    events = session["events"]
    assert [(e["author"], e["content"]["parts"][0]["text"]) for e in events[:2]] == [
        ("user", "go"),
        ("gated_agent", "step 1"),
    ]
    assert [(e["author"], e.get("errorCode"), e.get("content")) for e in events[2:]] == [
        ("gated_agent", INVOCATION_ABORTED, None)
    ]
    assert events[2]["invocationId"] == events[1]["invocationId"]
    assert session["state"] == {"last_step": "step 1"}
    assert list(tmp_path.glob(".eventide/*.db")), "the session is in a SQLite file"
