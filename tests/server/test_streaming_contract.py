"""Issue 34, the streaming contract a UI can rely on, end to end: google-genai's real client
streams from a local Gemini-speaking server, Eventide's server relays the turn over
``/run_sse`` (real uvicorn), and the frames are read as a browser's EventSource would.

- thoughts arrive flagged ``thought: true`` and never in an answer's text (nor in the
  ``output_key`` state);
- a function call appears in exactly one frame, the complete event (partial frames carry
  no call), and gets exactly one response;
- a model failure mid-stream reaches the client as an error event, and a failure of the
  turn as a final error frame; what was committed before stays.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from eventide import App, LlmAgent
from eventide.models.gemini_llm import GeminiLlm
from eventide.server import create_app
from tests.models.fake_provider_servers import FakeProviderServer, Reply, gemini_sse
from tests.server.harness import ThreadedServer, sse_events

pytestmark = pytest.mark.filterwarnings(
    "ignore:Inheritance class AiohttpClientSession:DeprecationWarning"
)


def _chunk(parts: list[dict[str, Any]], finish: str | None = None) -> dict[str, Any]:
    candidate: dict[str, Any] = {"content": {"role": "model", "parts": parts}, "index": 0}
    if finish:
        candidate["finishReason"] = finish
    return {"candidates": [candidate], "modelVersion": "gemini-test"}


def _stream(*chunks: dict[str, Any], cut: bool = False) -> Reply:
    return Reply(sse=gemini_sse(list(chunks)), cut=cut)


def get_weather(city: str) -> dict[str, str]:
    """The weather in a city."""
    if city == "Atlantis":
        raise RuntimeError("no weather station in Atlantis")
    return {"city": city, "sky": "sunny"}


@pytest.fixture
def provider() -> Iterator[FakeProviderServer]:
    server = FakeProviderServer().start()
    yield server
    server.stop()


@pytest.fixture
def client(provider: FakeProviderServer) -> Iterator[httpx.Client]:
    model = GeminiLlm(
        model="gemini-test", api_key="g-key", base_url=provider.url, retry_base_delay=0.001
    )
    agent = LlmAgent(name="weather", model=model, tools=[get_weather], output_key="answer")
    api = create_app(apps={"weather": App(name="weather", root_agent=agent)})
    with ThreadedServer(api) as server, httpx.Client(base_url=server.url, timeout=30) as http:
        yield http


def _turn(client: httpx.Client, text: str) -> tuple[str, list[dict[str, Any]]]:
    sid = client.post("/apps/weather/users/u/sessions").json()["id"]
    body = {
        "app_name": "weather",
        "user_id": "u",
        "session_id": sid,
        "new_message": {"role": "user", "parts": [{"text": text}]},
        "streaming": True,
    }
    with client.stream("POST", "/run_sse", json=body) as response:
        assert response.status_code == 200
        return sid, list(sse_events(response))


def _parts(frame: dict[str, Any]) -> list[dict[str, Any]]:
    return (frame.get("content") or {}).get("parts") or []


def test_thoughts_stay_flagged_and_each_call_is_sent_once(
    client: httpx.Client, provider: FakeProviderServer
) -> None:
    provider.add(
        _stream(
            _chunk([{"text": "The user wants ", "thought": True}]),
            _chunk([{"text": "the weather.", "thought": True}]),
            _chunk([{"text": "Checking."}]),
            _chunk(
                [{"functionCall": {"name": "get_weather", "args": {"city": "Oslo"}}}],
                finish="STOP",
            ),
        ),
        _stream(
            _chunk([{"text": "Sky is clear, so", "thought": True}]),
            _chunk([{"text": "It is sunny "}]),
            _chunk([{"text": "in Oslo."}], finish="STOP"),
        ),
    )
    sid, frames = _turn(client, "Weather in Oslo?")
    # Every thought is flagged as one, in partial frames and complete events alike.
    thought_texts = {"The user wants ", "the weather.", "Sky is clear, so"}
    for frame in frames:
        for part in _parts(frame):
            if part.get("text") in thought_texts:
                assert part.get("thought") is True, frame
    # One frame per call (the complete event), one response per call.
    call_frames = [f for f in frames if any("functionCall" in p for p in _parts(f))]
    assert [f.get("partial") for f in call_frames] == [None]
    calls = [p["functionCall"] for f in call_frames for p in _parts(f) if "functionCall" in p]
    responses = [
        p["functionResponse"] for f in frames for p in _parts(f) if "functionResponse" in p
    ]
    assert [c["name"] for c in calls] == ["get_weather"]
    assert [(r["id"], r["response"]["sky"]) for r in responses] == [(calls[0]["id"], "sunny")]
    # The answer's text leaves the thought out; so does the state output_key writes.
    final = frames[-1]
    assert final.get("partial") is None
    answer = "".join(p["text"] for p in _parts(final) if "text" in p and not p.get("thought"))
    assert answer == "It is sunny in Oslo."
    session = client.get(f"/apps/weather/users/u/sessions/{sid}").json()
    assert session["state"]["answer"] == "It is sunny in Oslo."
    stored_calls = [p for e in session["events"] for p in _parts(e) if "functionCall" in p]
    assert len(stored_calls) == 1


def test_a_stream_cut_mid_way_reaches_the_client_as_an_error_event(
    client: httpx.Client, provider: FakeProviderServer
) -> None:
    provider.add(_stream(_chunk([{"text": "Let me "}]), _chunk([{"text": "see"}]), cut=True))
    sid, frames = _turn(client, "Weather?")
    assert [f.get("partial") for f in frames[:-1]] == [True, True]
    error = frames[-1]
    assert error["errorCode"] == "MALFORMED_STREAM" and error["errorMessage"]
    assert error["author"] == "weather" and error["id"]
    stored = client.get(f"/apps/weather/users/u/sessions/{sid}").json()["events"]
    assert [e.get("errorCode") for e in stored] == [None, "MALFORMED_STREAM"]


def test_a_failing_tool_ends_the_stream_with_an_error_frame(
    client: httpx.Client, provider: FakeProviderServer
) -> None:
    call = {"functionCall": {"name": "get_weather", "args": {"city": "Atlantis"}}}
    provider.add(_stream(_chunk([call], finish="STOP")))
    sid, frames = _turn(client, "Weather in Atlantis?")
    *events, error = frames
    assert [any("functionCall" in p for p in _parts(e)) for e in events] == [True]
    assert "no weather station in Atlantis" in error["error"]
    assert error["errorCode"] and "Atlantis" in error["errorMessage"]
    stored = client.get(f"/apps/weather/users/u/sessions/{sid}").json()["events"]
    assert [e["id"] for e in stored[1:]] == [events[0]["id"]]
