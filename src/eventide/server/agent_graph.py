"""The agent graph of an app: its agents, tools, transfers and workflow edges, as JSON, as
Graphviz DOT, and as SVG rendered by Graphviz's ``dot`` (the system package).

Nodes are agents (LLM agents and the workflow agents ``SequentialAgent``, ``ParallelAgent``,
``LoopAgent``), tools and toolsets. Edges say how control moves:

==============  ===============================================================
``sub_agent``   a workflow agent runs its sub-agent
``sequence``    a sequential or loop agent runs this sub-agent after that one
``loop``        a loop agent starts again from its first sub-agent
``transfer``    an LLM agent can transfer the conversation to that agent
``tool``        an agent can call the tool
``agent_tool``  a tool runs that agent (``AgentTool``)
``node``        a graph ``Workflow`` starts at its ``START`` node
``next``        a workflow node runs after that one (an unconditional edge)
``route``       a workflow node runs after that one emitted the edge's route (``label``)
==============  ===============================================================

A graph ``Workflow``'s nodes are drawn with ids ``<workflow>.<node>`` (kind ``node``); a node
that is an agent (or a nested workflow) is that agent's own node.
"""

from __future__ import annotations

import asyncio
import shutil
from dataclasses import asdict, dataclass, field
from typing import Any

from eventide.agents.base_agent import BaseAgent
from eventide.agents.llm_agent import LlmAgent
from eventide.agents.loop_agent import LoopAgent
from eventide.agents.parallel_agent import ParallelAgent
from eventide.agents.sequential_agent import SequentialAgent
from eventide.errors import ConfigurationError
from eventide.tools.agent_tool import AgentTool
from eventide.tools.base_tool import BaseTool
from eventide.tools.base_toolset import BaseToolset
from eventide.workflow import START, AgentNode, ToolNode, Workflow

__all__ = ["AgentGraph", "GraphEdge", "GraphNode", "build_agent_graph", "render_svg"]

_NO_DOT = (
    "Rendering the agent graph as SVG needs Graphviz's `dot` program "
    "(apt-get install graphviz, brew install graphviz); the DOT source is served without it."
)


@dataclass(slots=True, frozen=True)
class GraphNode:
    """An agent, tool, toolset or workflow node. ``id`` is unique in the graph; ``kind`` is
    ``agent``, ``tool``, ``toolset`` or ``node``; ``type`` is the class name; ``detail`` is
    what an agent says about itself in the graph (its ``graph_detail``: a remote A2A agent's
    URL)."""

    id: str
    label: str
    kind: str
    type: str
    detail: str = ""


@dataclass(slots=True, frozen=True)
class GraphEdge:
    """A directed edge between two node ids; ``kind`` as in the module docstring; ``label``
    is a workflow edge's route."""

    source: str
    target: str
    kind: str
    label: str = ""


@dataclass(slots=True)
class AgentGraph:
    """The graph of an app's agent tree, rooted at ``root``."""

    root: str
    nodes: list[GraphNode] = field(default_factory=list)
    edges: list[GraphEdge] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        """``{"root", "nodes": [{id, label, kind, type, detail}], "edges": [{source, target,
        kind, label}]}``."""
        return {
            "root": self.root,
            "nodes": [asdict(n) for n in self.nodes],
            "edges": [asdict(e) for e in self.edges],
        }

    def to_dot(
        self,
        *,
        highlight_nodes: frozenset[str] = frozenset(),
        highlight_edges: frozenset[tuple[str, str]] = frozenset(),
        dark: bool = False,
    ) -> str:
        """Graphviz DOT source; highlighted nodes and edges are filled in green."""
        fg, bg = ("#cccccc", "#333537") if dark else ("#334155", "#ffffff")
        lines = [
            "digraph agents {",
            f'  graph [rankdir=LR bgcolor="{bg}" fontname=Helvetica]',
            f'  node [fontname=Helvetica color="{fg}" fontcolor="{fg}" style=rounded]',
            f'  edge [color="{fg}" fontname=Helvetica fontsize=10 fontcolor="{fg}"]',
        ]
        for node in self.nodes:
            shape = "ellipse" if node.kind == "agent" else "box"
            if node.kind == "node":
                label = node.label
                shape = "circle" if node.label == "START" else "box"
            elif node.kind == "agent" and node.type != "LlmAgent":
                label = f"{node.label}\n({node.type})"  # a workflow or remote agent
                if node.detail:
                    label += f"\n{node.detail}"
            else:
                icon = {"agent": "🤖", "tool": "🔧", "toolset": "🧰"}[node.kind]
                label = f"{icon} {node.label}"
            extra = ' style="filled,rounded" fillcolor="#0F5223" fontcolor="#ffffff"'
            lit = extra if node.id in highlight_nodes else ""
            lines.append(f"  {_quote(node.id)} [label={_quote(label)} shape={shape}{lit}]")
        for edge in self.edges:
            style = {
                "transfer": ' style=dashed label="transfer"',
                "sequence": ' label="then"',
                "loop": ' style=dashed label="loop"',
                "tool": " arrowhead=none",
                "agent_tool": ' style=dotted label="runs"',
                "sub_agent": "",
                "node": "",
                "next": "",
                "route": f" label={_quote(edge.label)}",
            }[edge.kind]
            lit = (
                ' color="#69CB87" penwidth=2'
                if (edge.source, edge.target) in highlight_edges
                else ""
            )
            lines.append(f"  {_quote(edge.source)} -> {_quote(edge.target)} [{style.strip()}{lit}]")
        lines.append("}")
        return "\n".join(lines) + "\n"


def _quote(text: str) -> str:
    escaped = text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
    return f'"{escaped}"'


def build_agent_graph(root: BaseAgent) -> AgentGraph:
    """The graph of ``root``'s agent tree. Toolsets are one node each (listing their tools
    would connect to their servers)."""
    graph = AgentGraph(root=root.name)
    seen: set[str] = set()
    _add_agent(graph, root, seen)
    return graph


def _add_agent(graph: AgentGraph, agent: BaseAgent, seen: set[str]) -> None:
    if agent.name in seen:
        return
    seen.add(agent.name)
    detail = getattr(agent, "graph_detail", "")
    graph.nodes.append(
        GraphNode(
            agent.name,
            agent.name,
            "agent",
            type(agent).__name__,
            detail if isinstance(detail, str) else "",
        )
    )
    subs = agent.sub_agents
    for sub in subs:
        _add_agent(graph, sub, seen)
    if isinstance(agent, SequentialAgent | LoopAgent) and subs:
        graph.edges.append(GraphEdge(agent.name, subs[0].name, "sub_agent"))
        for before, after in zip(subs, subs[1:], strict=False):
            graph.edges.append(GraphEdge(before.name, after.name, "sequence"))
        if isinstance(agent, LoopAgent) and len(subs) > 1:
            graph.edges.append(GraphEdge(subs[-1].name, subs[0].name, "loop"))
    elif isinstance(agent, ParallelAgent):
        for sub in subs:
            graph.edges.append(GraphEdge(agent.name, sub.name, "sub_agent"))
    elif isinstance(agent, LlmAgent):
        for sub in subs:
            graph.edges.append(GraphEdge(agent.name, sub.name, "transfer"))
            if isinstance(sub, LlmAgent) and not sub.disallow_transfer_to_parent:
                graph.edges.append(GraphEdge(sub.name, agent.name, "transfer"))
    else:
        for sub in subs:
            graph.edges.append(GraphEdge(agent.name, sub.name, "sub_agent"))
    if isinstance(agent, LlmAgent):
        for tool in agent.tools:
            _add_tool(graph, agent, tool, seen)
    if isinstance(agent, Workflow) and agent.graph is not None:
        _add_workflow_graph(graph, agent, seen)


def _add_workflow_graph(graph: AgentGraph, workflow: Workflow, seen: set[str]) -> None:
    """The workflow's nodes and edges, each edge labelled with its route."""
    assert workflow.graph is not None
    ids: dict[str, str] = {}
    for node in workflow.graph.nodes:
        if isinstance(node, AgentNode):
            _add_agent(graph, node.agent, seen)
            ids[node.name] = node.agent.name
        elif isinstance(node, Workflow):
            _add_agent(graph, node, seen)
            ids[node.name] = node.name
        else:
            node_id = f"{workflow.name}.{node.name}"
            label = "START" if node is START else node.name
            kind = "tool" if isinstance(node, ToolNode) else "node"
            graph.nodes.append(GraphNode(node_id, label, kind, type(node).__name__))
            ids[node.name] = node_id
    graph.edges.append(GraphEdge(workflow.name, ids[START.name], "node"))
    for edge in workflow.graph.edges:
        source, target = ids[edge.from_node.name], ids[edge.to_node.name]
        if edge.route is None:
            graph.edges.append(GraphEdge(source, target, "next"))
        else:
            routes = edge.route if isinstance(edge.route, list) else [edge.route]
            label = " | ".join(str(r) for r in routes)
            graph.edges.append(GraphEdge(source, target, "route", label))


def _add_tool(graph: AgentGraph, agent: BaseAgent, tool: Any, seen: set[str]) -> None:
    if isinstance(tool, BaseToolset):
        name, kind = type(tool).__name__, "toolset"
    elif isinstance(tool, BaseTool):
        name, kind = tool.name, "tool"
    else:
        name, kind = getattr(tool, "__name__", type(tool).__name__), "tool"
    node_id = tool_node_id(agent.name, name)
    graph.nodes.append(GraphNode(node_id, name, kind, type(tool).__name__))
    graph.edges.append(GraphEdge(agent.name, node_id, "tool"))
    if isinstance(tool, AgentTool):
        _add_agent(graph, tool.agent, seen)
        graph.edges.append(GraphEdge(node_id, tool.agent.name, "agent_tool"))


def tool_node_id(agent_name: str, tool_name: str) -> str:
    """The node id of ``tool_name`` as a tool of ``agent_name``."""
    return f"{agent_name}.{tool_name}"


_DOT_SECONDS = 20.0


async def render_svg(dot_source: str) -> str:
    """Render DOT source to SVG with Graphviz's ``dot``.

    Raises:
        ConfigurationError: ``dot`` is not installed, failed, or took over 20 seconds.
    """
    program = shutil.which("dot")
    if program is None:
        raise ConfigurationError(_NO_DOT)
    process = await asyncio.create_subprocess_exec(
        program,
        "-Tsvg",
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    try:
        async with asyncio.timeout(_DOT_SECONDS):
            out, err = await process.communicate(dot_source.encode())
    except TimeoutError as exc:
        process.kill()
        await process.wait()
        raise ConfigurationError(f"Graphviz's dot took longer than {_DOT_SECONDS} s") from exc
    if process.returncode != 0:
        raise ConfigurationError(f"Graphviz's dot failed: {err.decode(errors='replace')[:500]}")
    return out.decode()
