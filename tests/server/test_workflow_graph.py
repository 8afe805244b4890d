"""The agent graph draws a graph ``Workflow``: its nodes, its edges and their route labels
(issue 31, front ends), as JSON and as DOT (and so as SVG)."""

from __future__ import annotations

from typing import Any

from eventide import LlmAgent
from eventide.server.agent_graph import build_agent_graph
from eventide.testing import ScriptedModel
from eventide.workflow import DEFAULT_ROUTE, JoinNode, Workflow


def classify(node_input: Any) -> None: ...
def refund(node_input: Any) -> None: ...
def reply(node_input: Any) -> None: ...
def audit(node_input: Any) -> None: ...


def _workflow() -> Workflow:
    writer = LlmAgent(name="writer", model=ScriptedModel())
    inner = Workflow(name="checks", edges=[("START", audit)])
    return Workflow(
        name="desk",
        edges=[
            ("START", classify, {"refund": (refund, inner), DEFAULT_ROUTE: reply}),
            ((refund, inner), JoinNode(name="both"), writer),
        ],
    )


def test_json_has_the_nodes_edges_and_routes() -> None:
    graph = build_agent_graph(_workflow()).to_json()
    nodes = {n["id"]: (n["label"], n["kind"]) for n in graph["nodes"]}
    assert nodes["desk.__START__"] == ("START", "node")
    assert nodes["desk.classify"] == ("classify", "node")
    assert nodes["desk.both"] == ("both", "node")
    assert nodes["writer"] == ("writer", "agent")  # an agent node is the agent itself
    assert nodes["checks"] == ("checks", "agent")  # and so is a nested workflow
    assert nodes["checks.audit"] == ("audit", "node")
    edges = {(e["source"], e["target"], e["kind"], e["label"]) for e in graph["edges"]}
    assert {
        ("desk", "desk.__START__", "node", ""),
        ("desk.__START__", "desk.classify", "next", ""),
        ("desk.classify", "desk.refund", "route", "refund"),
        ("desk.classify", "checks", "route", "refund"),
        ("desk.classify", "desk.reply", "route", "__DEFAULT__"),
        ("desk.refund", "desk.both", "next", ""),
        ("checks", "desk.both", "next", ""),
        ("desk.both", "writer", "next", ""),
        ("checks", "checks.__START__", "node", ""),
        ("checks.__START__", "checks.audit", "next", ""),
    } <= edges


def test_dot_labels_routed_edges() -> None:
    dot = build_agent_graph(_workflow()).to_dot()
    assert '"desk.classify" -> "desk.refund" [label="refund"]' in dot
    assert '"desk.__START__" [label="START" shape=circle]' in dot
    assert '"desk.both" [label="both" shape=box]' in dot
