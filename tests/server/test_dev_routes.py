"""``adk web``'s trace and agent-graph routes (and Eventide's JSON/DOT/SVG graph), through a
real uvicorn server: the spans TracingPlugin records, served per session and per event in
the shape ADK's UI parses; the agent tree with its tools, transfers and workflow edges."""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from eventide import BaseAgent, LlmAgent, ToolContext, types
from eventide.agents.loop_agent import LoopAgent
from eventide.agents.parallel_agent import ParallelAgent
from eventide.agents.sequential_agent import SequentialAgent
from eventide.apps import App
from eventide.server import create_app
from eventide.server.agent_graph import build_agent_graph
from eventide.testing import ScriptedModel, tool_call_response
from eventide.tools.agent_tool import AgentTool
from tests.server.harness import ThreadedServer

IN_CI = os.environ.get("CI", "").lower() == "true"


async def get_weather(city: str, tool_context: ToolContext) -> dict[str, Any]:
    """The weather in a city."""
    await tool_context.save_artifact("forecast.txt", types.Part(text=f"{city}: sunny"))
    return {"city": city, "forecast": "sunny"}


def _weather_app(*, traces: bool = True) -> Any:
    # One tool call and one answer per turn; the tests here run at most five turns.
    model = ScriptedModel(
        responses=[tool_call_response(("get_weather", {"city": "Lyon"})), "Sunny in Lyon."] * 5
    )
    helper = LlmAgent(name="helper", model=model, instruction="Help.")
    agent = LlmAgent(
        name="forecaster",
        model=model,
        instruction="You forecast.",
        tools=[get_weather],
        sub_agents=[helper],
    )
    return create_app(apps={"weather": App(name="weather", root_agent=agent)}, traces=traces)


@pytest.fixture(scope="module")
def weather() -> Iterator[ThreadedServer]:
    with ThreadedServer(_weather_app()) as server:
        yield server


def _turn(client: httpx.Client) -> tuple[str, list[dict[str, Any]]]:
    sid = client.post("/apps/weather/users/ann/sessions").json()["id"]
    body = {
        "appName": "weather",
        "userId": "ann",
        "sessionId": sid,
        "newMessage": {"role": "user", "parts": [{"text": "Lyon?"}]},
    }
    events = client.post("/run", json=body).json()
    assert len(events) == 3
    return sid, events


def test_session_trace_links_model_and_tool_spans_to_their_events(
    weather: ThreadedServer,
) -> None:
    """Each model call is a generate_content span naming the event it produced, with the
    request and response ADK's UI shows; the tool span names its response event; every
    span carries the session as gen_ai.conversation.id; parents form one tree."""
    with httpx.Client(base_url=weather.url) as client:
        sid, events = _turn(client)
        spans = client.get(f"/dev/apps/weather/debug/trace/session/{sid}").json()
    names = [s["name"] for s in spans]
    assert names == [
        "invocation weather",
        "invoke_agent forecaster",
        "chat scripted",
        "execute_tool get_weather",
        "chat scripted",
    ]
    for span in spans:
        assert set(span) >= {"start_time", "end_time", "trace_id", "span_id", "attributes"}
        assert span["end_time"] >= span["start_time"]
        assert span["attributes"]["gen_ai.conversation.id"] == sid
    ids = {s["span_id"] for s in spans}
    assert spans[0]["parent_span_id"] is None
    assert all(s["parent_span_id"] in ids for s in spans[1:])
    assert len({s["trace_id"] for s in spans}) == 1

    call, tool, answer = spans[2], spans[3], spans[4]
    assert call["attributes"]["gen_ai.operation.name"] == "generate_content"
    assert call["attributes"]["gcp.vertex.agent.event_id"] == events[0]["id"]
    assert call["attributes"]["gcp.vertex.agent.invocation_id"] == events[0]["invocationId"]
    request = json.loads(call["attributes"]["gcp.vertex.agent.llm_request"])
    assert request["config"]["systemInstruction"].startswith("You forecast.")
    response = json.loads(answer["attributes"]["gcp.vertex.agent.llm_response"])
    assert response["content"]["parts"] == [{"text": "Sunny in Lyon."}]
    assert answer["attributes"]["gcp.vertex.agent.event_id"] == events[2]["id"]
    assert tool["attributes"]["gcp.vertex.agent.event_id"] == events[1]["id"]


def test_event_trace_and_missing_traces(weather: ThreadedServer) -> None:
    """/debug/trace/{event_id} answers the span's attributes with trace and span ids, as
    adk web; an event without a span is a 404 saying why; unknown apps are 404."""
    with httpx.Client(base_url=weather.url) as client:
        sid, events = _turn(client)
        found = client.get(f"/dev/apps/weather/debug/trace/{events[2]['id']}").json()
        assert found["gen_ai.operation.name"] == "generate_content"
        assert found["gcp.vertex.agent.event_id"] == events[2]["id"]
        assert isinstance(found["trace_id"], int) and isinstance(found["span_id"], int)
        missing = client.get("/dev/apps/weather/debug/trace/nope")
        assert missing.status_code == 404
        assert "only events made by a model or tool call" in missing.json()["detail"]
        assert client.get(f"/dev/apps/nope/debug/trace/session/{sid}").status_code == 404
        assert client.get("/dev/apps/weather/debug/trace/session/never-ran").json() == []


def test_no_traces_when_turned_off() -> None:
    """create_app(traces=False) records nothing and says so."""
    with ThreadedServer(_weather_app(traces=False)) as server:
        with httpx.Client(base_url=server.url) as client:
            sid, events = _turn(client)
            assert client.get(f"/dev/apps/weather/debug/trace/session/{sid}").json() == []
            missing = client.get(f"/dev/apps/weather/debug/trace/{events[0]['id']}")
            assert missing.status_code == 404


def _workflow_root() -> LlmAgent:
    model = ScriptedModel(responses=[])
    step = [LlmAgent(name=f"step{i}", model=model, instruction="x") for i in (1, 2)]
    fan: list[BaseAgent] = [LlmAgent(name=f"fan{i}", model=model, instruction="x") for i in (1, 2)]
    retry = LlmAgent(name="retry", model=model, instruction="x")
    checker = LlmAgent(name="checker", model=model, instruction="x")
    pipeline = SequentialAgent(
        name="pipeline",
        sub_agents=[
            *step,
            ParallelAgent(name="fan_out", sub_agents=fan),
            LoopAgent(name="until_ok", sub_agents=[retry, checker]),
        ],
    )
    summarizer = LlmAgent(name="summarizer", model=model, instruction="x")

    def lookup(order_id: str) -> str:
        """Look up an order."""
        return order_id

    return LlmAgent(
        name="desk",
        model=model,
        instruction="x",
        tools=[lookup, AgentTool(summarizer)],
        sub_agents=[pipeline],
    )


def test_graph_json_has_agents_tools_transfers_and_workflow_edges() -> None:
    """Agents, tools (AgentTool runs its agent), transfers, sequence, parallel and loop."""
    graph = build_agent_graph(_workflow_root()).to_json()
    kinds = {n["id"]: (n["kind"], n["type"]) for n in graph["nodes"]}
    assert kinds["desk"] == ("agent", "LlmAgent")
    assert kinds["pipeline"] == ("agent", "SequentialAgent")
    assert kinds["desk.lookup"] == ("tool", "function")
    assert kinds["desk.summarizer"] == ("tool", "AgentTool")
    edges = {(e["source"], e["target"], e["kind"]) for e in graph["edges"]}
    assert edges >= {
        ("desk", "pipeline", "transfer"),
        ("pipeline", "step1", "sub_agent"),
        ("step1", "step2", "sequence"),
        ("step2", "fan_out", "sequence"),
        ("fan_out", "fan1", "sub_agent"),
        ("fan_out", "fan2", "sub_agent"),
        ("fan_out", "until_ok", "sequence"),
        ("until_ok", "retry", "sub_agent"),
        ("retry", "checker", "sequence"),
        ("checker", "retry", "loop"),
        ("desk", "desk.lookup", "tool"),
        ("desk", "desk.summarizer", "tool"),
        ("desk.summarizer", "summarizer", "agent_tool"),
    }
    assert graph["root"] == "desk"


def _need_dot() -> None:
    if shutil.which("dot") is None:
        if IN_CI:
            pytest.fail(
                "Graphviz's dot is not installed; CI=true needs it (apt-get install graphviz)"
            )
        pytest.skip("Graphviz's dot is not installed (apt-get install graphviz)")


def test_graph_routes_dot_svg_and_adk_shapes() -> None:
    """ADK's {"dotSrc"} and {"": {"dotSrc"}} shapes, the agent tree, and Eventide's JSON,
    DOT and SVG (rendered by Graphviz) of the same graph."""
    _need_dot()
    api = create_app(apps={"desk": App(name="desk", root_agent=_workflow_root())})
    with ThreadedServer(api) as server, httpx.Client(base_url=server.url) as client:
        dot = client.get("/dev/apps/desk/graph").json()["dotSrc"]
        assert dot.startswith("digraph agents {")
        assert '"checker" -> "retry" [style=dashed label="loop"]' in dot
        image = client.get("/dev/apps/desk/build_graph_image", params={"dark_mode": "true"})
        assert set(image.json()) == {""}
        assert 'bgcolor="#333537"' in image.json()[""]["dotSrc"]
        tree = client.get("/dev/apps/desk/build_graph").json()
        assert tree["root_agent"]["name"] == "desk"
        assert [s["name"] for s in tree["root_agent"]["sub_agents"]] == ["pipeline"]
        assert [t["name"] for t in tree["root_agent"]["tools"]] == ["lookup", "summarizer"]
        assert client.get("/dev/apps/desk/graph.json").json()["root"] == "desk"
        plain = client.get("/dev/apps/desk/graph.dot")
        assert plain.headers["content-type"].startswith("text/vnd.graphviz")
        svg = client.get("/dev/apps/desk/graph.svg")
        assert svg.headers["content-type"] == "image/svg+xml"
        assert svg.text.lstrip().startswith("<?xml") and "<svg" in svg.text
        assert svg.text.count('class="node"') == len(
            client.get("/dev/apps/desk/graph.json").json()["nodes"]
        )
        assert client.get("/dev/apps/nope/graph.svg").status_code == 404


def test_event_graph_lights_up_author_and_tool(weather: ThreadedServer) -> None:
    """The event panel's graph: the event's author and the tool it called are filled, the
    edge between them drawn green; unknown sessions and events are 404."""
    with httpx.Client(base_url=weather.url) as client:
        sid, events = _turn(client)
        base = f"/dev/apps/weather/users/ann/sessions/{sid}/events"
        dot = client.get(f"{base}/{events[0]['id']}/graph").json()["dotSrc"]
        lit = [line for line in dot.splitlines() if "#0F5223" in line]
        assert [line.split()[0] for line in lit] == ['"forecaster"', '"forecaster.get_weather"']
        assert '"forecaster" -> "forecaster.get_weather" [arrowhead=none color="#69CB87"' in dot
        plain = client.get(f"{base}/{events[2]['id']}/graph").json()["dotSrc"]
        assert [line.split()[0] for line in plain.splitlines() if "#0F5223" in line] == [
            '"forecaster"'
        ]
        assert client.get(f"{base}/nope/graph").status_code == 404
        missing = client.get("/dev/apps/weather/users/ann/sessions/nope/events/x/graph")
        assert missing.status_code == 404
