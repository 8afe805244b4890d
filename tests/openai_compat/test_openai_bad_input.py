"""Bad requests to the OpenAI endpoints get the API's error shape (never a 500), and a
client that hangs up mid-stream loses nothing that was committed."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import pytest

from eventide.server import create_app
from tests.openai_compat.conftest import openai_apps
from tests.server.harness import ThreadedServer, wait_until

USER = {"role": "user", "content": "hi"}

CHAT_CASES: list[tuple[Any, int, str | None, str]] = [
    ([USER], 400, None, "must be a JSON object"),
    ({"messages": [USER]}, 400, "model", "model is required"),
    ({"model": "nope", "messages": [USER]}, 404, "model", "does not exist"),
    ({"model": "chat"}, 400, "messages", "non-empty list"),
    (
        {"model": "chat", "messages": [{"role": "robot", "content": "x"}]},
        400,
        "messages[0].role",
        "robot",
    ),
    (
        {"model": "chat", "messages": [{"role": "user", "content": [{"type": "input_audio"}]}]},
        400,
        "messages[0].content[0].type",
        "input_audio",
    ),
    (
        {"model": "chat", "messages": [{"role": "tool", "content": "x"}]},
        400,
        "messages[0].tool_call_id",
        "tool_call_id",
    ),
    (
        {"model": "chat", "messages": [{"role": "tool", "tool_call_id": "c9", "content": "x"}]},
        400,
        "tool_call_id",
        "c9",
    ),
    (
        {"model": "chat", "messages": [USER, {"role": "assistant", "content": "yo"}]},
        400,
        "messages",
        "nothing new",
    ),
    (
        {"model": "chat", "messages": [USER], "tools": [{"type": "web_search"}]},
        400,
        "tools[0]",
        "function tool",
    ),
    ({"model": "chat", "messages": [USER], "metadata": "x"}, 400, "metadata", "object"),
    (
        {"model": "chat", "messages": [USER], "metadata": {"eventide_tool_calls": "all"}},
        400,
        "metadata.eventide_tool_calls",
        "'all'",
    ),
    (
        {"model": "chat", "messages": [USER], "stream": True, "stream_options": 3},
        400,
        "stream_options",
        "object",
    ),
    (
        {
            "model": "chat",
            "messages": [
                USER,
                {
                    "role": "assistant",
                    "tool_calls": [
                        {
                            "id": "c",
                            "type": "function",
                            "function": {"name": "f", "arguments": "{oops"},
                        }
                    ],
                },
                {"role": "tool", "tool_call_id": "c", "content": "1"},
            ],
        },
        400,
        "messages[1].tool_calls[0].function.arguments",
        "not valid JSON",
    ),
    (
        {
            "model": "chat",
            "messages": [
                {
                    "role": "user",
                    "content": [
                        {"type": "image_url", "image_url": {"url": "data:image/png;base64,@@"}}
                    ],
                }
            ],
        },
        400,
        "messages[0].content[0]",
        "base64",
    ),
]

RESPONSES_CASES: list[tuple[Any, int, str | None, str]] = [
    ({"model": "chat"}, 400, "input", "input is required"),
    ({"model": "chat", "input": 3}, 400, "input", "must be a list"),
    (
        {"model": "chat", "input": [{"type": "computer_call"}]},
        400,
        "input[0].type",
        "computer_call",
    ),
    (
        {"model": "chat", "input": "hi", "previous_response_id": "resp_bogus"},
        404,
        "previous_response_id",
        "not found",
    ),
    (
        {"model": "chat", "input": "hi", "previous_response_id": "resp_WyJhIiwgImIiXQ_1"},
        404,
        "previous_response_id",
        "not found",
    ),
    (
        {"model": "chat", "input": "hi", "previous_response_id": "resp_x", "conversation": "c"},
        400,
        "conversation",
        "not both",
    ),
    ({"model": "chat", "input": "hi", "conversation": 5}, 400, "conversation", "conversation id"),
    (
        {
            "model": "chat",
            "input": [{"type": "function_call_output", "call_id": "zz", "output": "1"}],
        },
        400,
        "tool_call_id",
        "zz",
    ),
    (
        {"model": "chat", "input": [{"type": "function_call", "call_id": "a", "name": "f"}]},
        400,
        "input",
        "nothing new",
    ),
]


@pytest.mark.parametrize(("body", "status", "param", "words"), CHAT_CASES)
def test_chat_completions_bad_input(
    openai_server: ThreadedServer, body: Any, status: int, param: str | None, words: str
) -> None:
    with httpx.Client(base_url=openai_server.url) as http:
        answer = http.post("/v1/chat/completions", json=body)
    assert answer.status_code == status, answer.text
    error = answer.json()["error"]
    assert error["param"] == param
    assert words in error["message"]
    assert error["type"] == "invalid_request_error"


@pytest.mark.parametrize(("body", "status", "param", "words"), RESPONSES_CASES)
def test_responses_bad_input(
    openai_server: ThreadedServer, body: Any, status: int, param: str | None, words: str
) -> None:
    with httpx.Client(base_url=openai_server.url) as http:
        answer = http.post("/v1/responses", json=body)
    assert answer.status_code == status, answer.text
    error = answer.json()["error"]
    assert error["param"] == param
    assert words in error["message"]


def test_a_body_that_is_not_json_is_a_400(openai_server: ThreadedServer) -> None:
    with httpx.Client(base_url=openai_server.url) as http:
        for path in ("/v1/chat/completions", "/v1/responses"):
            answer = http.post(
                path, content=b"{not json", headers={"content-type": "application/json"}
            )
            assert answer.status_code == 400
            assert "not valid JSON" in answer.json()["error"]["message"]


@pytest.mark.parametrize("path", ["/v1/chat/completions", "/v1/responses"])
def test_hanging_up_mid_stream_keeps_what_was_committed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, path: str
) -> None:
    """Spec, commit before resume: the event streamed before the client left is committed;
    the turn stops at its next step, so nothing after it is written."""
    gate = tmp_path / "gate"
    monkeypatch.setenv("EVENTIDE_TEST_GATE", str(gate))
    api = create_app(apps=openai_apps(), openai=True)
    inflight = api.state.eventide_inflight
    body: dict[str, Any] = {"model": "gated", "stream": True}
    if path == "/v1/responses":
        body["input"] = "go"
    else:
        body["messages"] = [{"role": "user", "content": "go"}]
    with ThreadedServer(api) as server, httpx.Client(base_url=server.url, timeout=30) as http:
        with http.stream("POST", path, json=body) as answer:
            session_id = answer.headers["x-eventide-session-id"]
            lines = answer.iter_lines()
            for line in lines:
                if "step 1" in line:
                    break
            assert inflight.count == 1
            del lines
        wait_until(lambda: inflight.count == 0, what="the turn to be cancelled")
        gate.touch()
        session = http.get(f"/apps/gated/users/openai/sessions/{session_id}").json()
    assert [(e["author"], e["content"]["parts"][0]["text"]) for e in session["events"]] == [
        ("user", "go"),
        ("gated_agent", "step 1"),
    ]
    assert session["state"] == {"last_step": "step 1"}
