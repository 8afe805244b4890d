"""``--ag-ui``: AG-UI runs against a real server, every stream checked against the
protocol's models and ordering rules."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from eventide.server import create_app
from tests.ag_ui.agents import ag_ui_apps
from tests.ag_ui.stream_rules import check_stream, encoded_frames
from tests.server.harness import ThreadedServer, sse_events, wait_until

JSON = {"Content-Type": "application/json"}

PICK_COLOR = {
    "name": "pick_color",
    "description": "Let the user pick a colour in the page.",
    "parameters": {"type": "object", "properties": {"hint": {"type": "string"}}},
}


@pytest.fixture(scope="module")
def server() -> Iterator[ThreadedServer]:
    with ThreadedServer(create_app(apps=ag_ui_apps(), ag_ui=True)) as running:
        yield running


class Thread:
    """A client-side thread: sends the whole conversation each run, as AG-UI clients do."""

    def __init__(self, server: ThreadedServer, app: str = "helper") -> None:
        self.url = f"{server.url}/ag-ui/{app}"
        self.server = server
        self.id = f"t-{uuid.uuid4().hex[:8]}"
        self.messages: list[dict[str, Any]] = []
        self.state: dict[str, Any] = {}

    def run(self, *new: dict[str, Any], **extra: Any) -> list[dict[str, Any]]:
        self.messages.extend(new)
        body = {
            "threadId": self.id,
            "runId": f"r-{uuid.uuid4().hex[:6]}",
            "messages": self.messages,
            "state": self.state,
            "tools": [],
            "context": [],
            "forwardedProps": {},
            **extra,
        }
        with httpx.Client(timeout=30) as http, http.stream("POST", self.url, json=body) as answer:
            assert answer.status_code == 200, answer.read()
            assert answer.headers["content-type"].startswith("text/event-stream")
            frames = encoded_frames(answer.read().decode())
        check_stream(frames)
        self._remember(frames)
        return frames

    def _remember(self, frames: list[dict[str, Any]]) -> None:
        """Keep what the run said, as a client's message list does."""
        texts: dict[str, str] = {}
        calls: dict[str, dict[str, Any]] = {}
        for frame in frames:
            kind = frame["type"]
            if kind == "TEXT_MESSAGE_CONTENT":
                texts[frame["messageId"]] = texts.get(frame["messageId"], "") + frame["delta"]
            elif kind == "TOOL_CALL_START":
                calls[frame["toolCallId"]] = {
                    "id": frame["toolCallId"],
                    "type": "function",
                    "function": {"name": frame["toolCallName"], "arguments": ""},
                }
            elif kind == "TOOL_CALL_ARGS":
                calls[frame["toolCallId"]]["function"]["arguments"] += frame["delta"]
            elif kind == "STATE_SNAPSHOT":
                self.state = dict(frame["snapshot"])
            elif kind == "STATE_DELTA":
                for op in frame["delta"]:
                    self.state[op["path"][1:]] = op["value"]
        for message_id, text in texts.items():
            self.messages.append({"id": message_id, "role": "assistant", "content": text})
        if calls:
            self.messages.append(
                {
                    "id": f"a-{uuid.uuid4().hex[:6]}",
                    "role": "assistant",
                    "toolCalls": list(calls.values()),
                }
            )


def user(text: str) -> dict[str, Any]:
    return {"id": f"u-{uuid.uuid4().hex[:6]}", "role": "user", "content": text}


def kinds(frames: list[dict[str, Any]]) -> list[str]:
    """The event types, runs of content deltas collapsed to one."""
    out: list[str] = []
    for frame in frames:
        if frame["type"] == "TEXT_MESSAGE_CONTENT" and out and out[-1] == "TEXT_MESSAGE_CONTENT":
            continue
        out.append(frame["type"])
    return out


def text_of(frames: list[dict[str, Any]]) -> str:
    return "".join(f["delta"] for f in frames if f["type"] == "TEXT_MESSAGE_CONTENT")


def test_a_turn_with_a_tool_streams_text_tool_calls_and_state(server: ThreadedServer) -> None:
    """Spec, tool walkthrough: call, result, committed state as a JSON Patch, the answer
    streamed in chunks; the step is the agent; usage from the model."""
    thread = Thread(server)
    frames = thread.run(user("mood sunny"))
    assert kinds(frames) == [
        "RUN_STARTED",
        "STATE_SNAPSHOT",
        "STEP_STARTED",
        "TOOL_CALL_START",
        "TOOL_CALL_ARGS",
        "TOOL_CALL_END",
        "TOOL_CALL_RESULT",
        "STATE_DELTA",
        "TEXT_MESSAGE_START",
        "TEXT_MESSAGE_CONTENT",
        "TEXT_MESSAGE_END",
        "STEP_FINISHED",
        "RUN_FINISHED",
    ]
    assert frames[0]["protocolVersion"] == "1.0"
    assert frames[2]["stepName"] == "helper"
    assert frames[7]["delta"] == [{"op": "add", "path": "/mood", "value": "sunny"}]
    assert text_of(frames) == "set_mood said {'mood': 'sunny'}"
    assert sum(1 for f in frames if f["type"] == "TEXT_MESSAGE_CONTENT") > 1
    finished = frames[-1]
    assert finished["outcome"] == {"type": "success"}
    assert finished["usage"] == [{"inputTokens": 5, "outputTokens": 2, "totalTokens": 7}]
    assert thread.state == {"mood": "sunny"}
    second = thread.run(user("hello"))
    assert text_of(second) == "you said: hello"
    assert second[1]["snapshot"] == {"mood": "sunny"}


def test_the_clients_state_is_committed_and_seen_by_the_agent(server: ThreadedServer) -> None:
    """Spec, state: the keys the client changed are committed with the turn (the agent's
    instruction reads them); a run with nothing new commits the state and runs nothing."""
    thread = Thread(server)
    thread.state = {"theme": "dark"}
    frames = thread.run(user("theme?"))
    assert frames[1]["snapshot"] == {"theme": "dark"}
    assert text_of(frames) == "The page's theme is dark."
    with httpx.Client(base_url=server.url) as http:
        session = http.get(f"/apps/helper/users/ag-ui/sessions/{thread.id}").json()
    assert session["state"] == {"theme": "dark"}
    assert session["events"][0]["actions"]["stateDelta"] == {"theme": "dark"}

    thread.state["theme"] = "light"
    only_state = thread.run()
    assert kinds(only_state) == ["RUN_STARTED", "STATE_SNAPSHOT", "RUN_FINISHED"]
    with httpx.Client(base_url=server.url) as http:
        session = http.get(f"/apps/helper/users/ag-ui/sessions/{thread.id}").json()
    assert session["state"] == {"theme": "light"}
    assert len(session["events"]) == 3  # user, answer, the state change


def test_a_frontend_tool_round_trip(server: ThreadedServer) -> None:
    """The client's tool: the call ends the run with pendingToolCallIds; the next run's
    tool message answers it and the agent goes on."""
    thread = Thread(server)
    first = thread.run(user("color please"), tools=[PICK_COLOR])
    call_id = next(f["toolCallId"] for f in first if f["type"] == "TOOL_CALL_START")
    assert first[-1]["outcome"] == {"type": "success", "pendingToolCallIds": [call_id]}
    assert "TOOL_CALL_RESULT" not in kinds(first)
    answer = {"id": "tool-1", "role": "tool", "toolCallId": call_id, "content": '{"color": "teal"}'}
    second = thread.run(answer, tools=[PICK_COLOR])
    assert text_of(second) == "pick_color said {'color': 'teal'}"
    assert second[-1]["outcome"] == {"type": "success"}


def test_a_confirmation_is_an_interrupt_answered_by_resume(server: ThreadedServer) -> None:
    """Spec, interrupts: the tool's confirmation ends the run with an interrupt (state and
    messages snapshots first); resume approves it and the tool runs, in the next run."""
    thread = Thread(server)
    first = thread.run(user("delete notes.txt"))
    assert kinds(first)[-3:] == ["STATE_SNAPSHOT", "MESSAGES_SNAPSHOT", "RUN_FINISHED"]
    outcome = first[-1]["outcome"]
    assert outcome["type"] == "interrupt"
    (interrupt,) = outcome["interrupts"]
    call_id = next(f["toolCallId"] for f in first if f["type"] == "TOOL_CALL_START")
    assert interrupt["reason"] == "tool_call"
    assert interrupt["toolCallId"] == call_id
    assert interrupt["responseSchema"]["required"] == ["approved"]

    refused = thread.run(user("something else"))
    assert [f["type"] for f in refused] == ["RUN_ERROR"]
    assert refused[0]["code"] == "PENDING_INTERRUPTS"

    resumed = thread.run(
        resume=[
            {"interruptId": interrupt["id"], "status": "resolved", "payload": {"approved": True}}
        ]
    )
    results = [f for f in resumed if f["type"] == "TOOL_CALL_RESULT"]
    assert [r["toolCallId"] for r in results] == [call_id]
    assert '"deleted": "notes.txt"' in results[0]["content"]
    assert text_of(resumed) == "delete_file said {'deleted': 'notes.txt'}"
    replay = thread.run(
        resume=[
            {"interruptId": interrupt["id"], "status": "resolved", "payload": {"approved": True}}
        ]
    )
    assert kinds(replay) == ["RUN_STARTED", "STATE_SNAPSHOT", "RUN_FINISHED"]  # idempotent


def test_a_long_running_tool_is_an_interrupt_whose_payload_is_the_result(
    server: ThreadedServer,
) -> None:
    thread = Thread(server)
    first = thread.run(user("ask can I go"))
    (interrupt,) = first[-1]["outcome"]["interrupts"]
    assert interrupt["reason"] == "input_required"
    resumed = thread.run(
        resume=[
            {"interruptId": interrupt["id"], "status": "resolved", "payload": {"answer": "yes"}}
        ]
    )
    assert text_of(resumed) == "ask_manager said {'answer': 'yes'}"


@pytest.mark.parametrize(
    ("extra", "code"),
    [
        ({"resume": [{"interruptId": "nope", "status": "resolved"}]}, "UNKNOWN_INTERRUPT"),
        ({"state": [1, 2]}, "INVALID_STATE"),
        (
            {"messages": [{"id": "t", "role": "tool", "toolCallId": "c-1", "content": "x"}]},
            "UNKNOWN_TOOL_CALL",
        ),
    ],
)
def test_inputs_against_the_protocols_rules_get_run_error(
    server: ThreadedServer, extra: dict[str, Any], code: str
) -> None:
    frames = Thread(server).run(**extra)
    assert [(f["type"], f["code"]) for f in frames] == [("RUN_ERROR", code)]


def test_bodies_that_are_no_run_input_get_400_and_unknown_apps_404(server: ThreadedServer) -> None:
    with httpx.Client(base_url=server.url) as http:
        bad = http.post("/ag-ui/helper", json={"messages": []})
        assert bad.status_code == 400
        assert "threadId" in bad.json()["detail"] and "RunAgentInput" in bad.json()["detail"]
        broken = http.post("/ag-ui/helper", content=b"{oops", headers=JSON)
        assert broken.status_code == 400
        missing = http.post("/ag-ui/nope", json={"threadId": "t", "runId": "r", "messages": []})
        assert missing.status_code == 404


def test_a_failing_agent_ends_the_run_with_run_error(server: ThreadedServer) -> None:
    frames = Thread(server, app="failing").run(user("go"))
    assert frames[-1]["type"] == "RUN_ERROR"
    assert "the warehouse API is down" in frames[-1]["message"]
    assert text_of(frames) == "working on it"


def test_hanging_up_mid_run_keeps_what_was_committed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    gate = tmp_path / "gate"
    monkeypatch.setenv("EVENTIDE_TEST_GATE", str(gate))
    api = create_app(apps=ag_ui_apps(), ag_ui=True)
    inflight = api.state.eventide_inflight
    body = {"threadId": "t-gone", "runId": "r1", "messages": [user("go")]}
    with ThreadedServer(api) as running, httpx.Client(base_url=running.url, timeout=30) as http:
        with http.stream("POST", "/ag-ui/gated", json=body) as answer:
            frames = sse_events(answer)
            for frame in frames:
                if frame["type"] == "TEXT_MESSAGE_END":
                    break
            assert inflight.count == 1
            del frames
        wait_until(lambda: inflight.count == 0, what="the run to be cancelled")
        gate.touch()
        session = http.get("/apps/gated/users/ag-ui/sessions/t-gone").json()
    assert [(e["author"], e["content"]["parts"][0]["text"]) for e in session["events"]] == [
        ("user", "go"),
        ("gated_agent", "step 1"),
    ]
