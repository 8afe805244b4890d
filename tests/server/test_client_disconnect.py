"""A client that hangs up in the middle of /run_sse cancels its turn cleanly."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

from eventide.server import create_app
from tests.server.fixture_agents import fixture_apps
from tests.server.harness import ThreadedServer, sse_events, wait_until


def test_hanging_up_cancels_the_turn_and_keeps_what_was_committed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Spec, commit before resume: the event sent before the client left is committed; the
    agent is stopped at its next step, so nothing after it is written, even once the agent
    could have gone on."""
    gate = tmp_path / "gate"
    monkeypatch.setenv("EVENTIDE_TEST_GATE", str(gate))
    api = create_app(apps=fixture_apps())
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
    assert [(e["author"], e["content"]["parts"][0]["text"]) for e in session["events"]] == [
        ("user", "go"),
        ("gated_agent", "step 1"),
    ]
    assert session["state"] == {"last_step": "step 1"}
