"""``adk web``'s developer routes for traces and the agent graph, and Eventide's own graph
formats.

================================================================  ===========================
``GET /dev/apps/{app}/debug/trace/{event_id}``                    the span that made an event
``GET /dev/apps/{app}/debug/trace/session/{session_id}``          a session's spans
``GET /dev/apps/{app}/graph``                                     ``{"dotSrc"}`` of the agents
``GET /dev/apps/{app}/build_graph``                               the agent tree as JSON
``GET /dev/apps/{app}/build_graph_image``                         ``{"": {"dotSrc"}}``
``GET /dev/apps/{app}/users/{u}/sessions/{s}/events/{e}/graph``   the graph, the event lit up
``GET /dev/apps/{app}/graph.json`` / ``graph.dot`` / ``graph.svg``  nodes and edges, DOT, SVG
================================================================  ===========================
"""

from __future__ import annotations

from typing import Any

from fastapi import FastAPI, HTTPException, Query, Response

from eventide.agents.base_agent import BaseAgent
from eventide.agents.llm_agent import LlmAgent
from eventide.errors import ConfigurationError
from eventide.events import Event
from eventide.server.agent_graph import AgentGraph, build_agent_graph, render_svg, tool_node_id
from eventide.server.app_registry import AppRegistry
from eventide.server.info_routes import root_agent_of
from eventide.server.json_responses import json_response, known_app
from eventide.server.model_request_recorder import ModelRequestRecorder
from eventide.server.session_routes import no_session
from eventide.server.trace_store import TraceStore
from eventide.tools.base_tool import BaseTool
from eventide.tools.base_toolset import BaseToolset

__all__ = ["add_dev_routes"]

_NO_TRACES = (
    "This server records no traces: the OpenTelemetry SDK is not installed "
    "(pip install 'eventide[tracing]')."
)


def _tree(agent: BaseAgent) -> dict[str, Any]:
    node: dict[str, Any] = {
        "name": agent.name,
        "description": agent.description,
        "type": type(agent).__name__,
        "sub_agents": [_tree(sub) for sub in agent.sub_agents],
    }
    if isinstance(agent, LlmAgent):
        model = agent.model if isinstance(agent.model, str) else getattr(agent.model, "model", "")
        instruction = agent.instruction
        node["model"] = model
        node["instruction"] = instruction if isinstance(instruction, str) else "<dynamic>"
        node["tools"] = [_tool_entry(tool) for tool in agent.tools]
    return node


def _tool_entry(tool: Any) -> dict[str, str]:
    if isinstance(tool, BaseToolset):
        return {"name": type(tool).__name__, "type": "toolset"}
    if isinstance(tool, BaseTool):
        return {"name": tool.name, "type": "tool"}
    return {"name": getattr(tool, "__name__", type(tool).__name__), "type": "tool"}


def _event_highlights(
    graph: AgentGraph, event: Event
) -> tuple[frozenset[str], frozenset[tuple[str, str]]]:
    """The nodes and edges an event touched: its author, the tools it called or answered,
    the agent it transferred to, the workflow node that made it."""
    ids = {node.id for node in graph.nodes}
    nodes: set[str] = set()
    edges: set[tuple[str, str]] = set()
    author = event.author
    if author in ids:
        nodes.add(author)
    names_on_path = [segment.split("@", 1)[0] for segment in event.node_info.path.split("/")]
    if len(names_on_path) >= 2:
        workflow_node = f"{names_on_path[-2]}.{names_on_path[-1]}"  # as agent_graph names it
        if workflow_node in ids:
            nodes.add(workflow_node)
    names = [call.name for call in event.get_function_calls()]
    names += [response.name for response in event.get_function_responses()]
    for name in names:
        tool = tool_node_id(author, name or "")
        if tool in ids:
            nodes.add(tool)
            edges.add((author, tool))
    target = event.actions.transfer_to_agent
    if target and target in ids:
        nodes.add(target)
        edges.add((author, target))
    return frozenset(nodes), frozenset(edges)


def add_dev_routes(
    api: FastAPI,
    registry: AppRegistry,
    *,
    traces: TraceStore | None,
    recorder: ModelRequestRecorder,
) -> None:
    """Register the trace and agent-graph routes on ``api``."""

    async def graph_of(app_name: str) -> AgentGraph:
        return build_agent_graph(await root_agent_of(registry, app_name))

    @api.get(
        "/dev/apps/{app_name}/debug/trace/{event_id}",
        summary="The span that produced an event",
        tags=["debug"],
        responses={404: {"description": "No span kept for that event."}},
    )
    async def event_trace(app_name: str, event_id: str) -> Response:
        """The model-call (or tool) span behind the event: its attributes (model request
        and response included), ``trace_id`` and ``span_id``, as ``adk web`` sends them."""
        known_app(registry, app_name)
        found = traces.event_span(event_id, recorder) if traces is not None else None
        if found is None:
            detail = (
                _NO_TRACES
                if traces is None
                else (
                    f"No trace kept for event {event_id!r}: only events made by a model or tool "
                    "call have one, and the server keeps the spans of its recent invocations."
                )
            )
            raise HTTPException(404, detail=detail)
        return json_response(found)

    @api.get(
        "/dev/apps/{app_name}/debug/trace/session/{session_id}",
        summary="A session's spans",
        tags=["debug"],
    )
    async def session_trace(app_name: str, session_id: str) -> Response:
        """Every kept span of the session's invocations, oldest first: ``name``,
        ``start_time``/``end_time`` (ns), ``trace_id``, ``span_id``, ``parent_span_id``,
        ``attributes``. Empty for a session without recorded turns, as ``adk web``."""
        known_app(registry, app_name)
        spans = traces.session_spans(session_id, recorder) if traces is not None else []
        return json_response(spans)

    @api.get("/dev/apps/{app_name}/graph", summary="The agent graph as DOT", tags=["graph"])
    async def app_graph(app_name: str, dark_mode: bool = False) -> Response:
        """``{"dotSrc": <Graphviz DOT>}``, which ADK's UI renders."""
        return json_response({"dotSrc": (await graph_of(app_name)).to_dot(dark=dark_mode)})

    @api.get("/dev/apps/{app_name}/build_graph", summary="The agent tree", tags=["graph"])
    async def build_graph(app_name: str) -> Response:
        """``{"name", "root_agent": {name, description, type, model, instruction, tools,
        sub_agents}}``: the tree ADK's UI walks."""
        root = await root_agent_of(registry, app_name)
        return json_response({"name": app_name, "root_agent": _tree(root)})

    @api.get(
        "/dev/apps/{app_name}/build_graph_image",
        summary="The agent graph as DOT, per workflow path",
        tags=["graph"],
    )
    async def build_graph_image(
        app_name: str,
        dark_mode: bool = False,
        node: str | None = Query(default=None, description="Accepted; the whole graph is sent."),
    ) -> Response:
        """``{"": {"dotSrc": ...}}``: the whole graph under the root path."""
        del node
        dot = (await graph_of(app_name)).to_dot(dark=dark_mode)
        return json_response({"": {"dotSrc": dot}})

    @api.get(
        "/dev/apps/{app_name}/users/{user_id}/sessions/{session_id}/events/{event_id}/graph",
        summary="The agent graph with what one event touched lit up",
        tags=["graph"],
        responses={404: {"description": "No such app, session or event."}},
    )
    async def event_graph(app_name: str, user_id: str, session_id: str, event_id: str) -> Response:
        """``{"dotSrc"}``: the event's author, the tools it called or answered and the agent
        it transferred to are highlighted."""
        graph = await graph_of(app_name)
        session = await registry.services.session_service.get_session(
            app_name=app_name, user_id=user_id, session_id=session_id
        )
        if session is None:
            raise HTTPException(404, detail=no_session(app_name, user_id, session_id))
        event = next((e for e in session.events if e.id == event_id), None)
        if event is None:
            raise HTTPException(404, detail=f"Event {event_id!r} is not in session {session_id!r}.")
        nodes, edges = _event_highlights(graph, event)
        dot = graph.to_dot(highlight_nodes=nodes, highlight_edges=edges, dark=True)
        return json_response({"dotSrc": dot})

    @api.get("/dev/apps/{app_name}/graph.json", summary="Agent graph: JSON", tags=["graph"])
    async def graph_json(app_name: str) -> Response:
        """``{"root", "nodes": [{id, label, kind, type}], "edges": [{source, target, kind}]}``."""
        return json_response((await graph_of(app_name)).to_json())

    @api.get("/dev/apps/{app_name}/graph.dot", summary="Agent graph: DOT", tags=["graph"])
    async def graph_dot(app_name: str) -> Response:
        """Graphviz DOT source (``text/vnd.graphviz``)."""
        dot = (await graph_of(app_name)).to_dot()
        return Response(dot, media_type="text/vnd.graphviz")

    @api.get(
        "/dev/apps/{app_name}/graph.svg",
        summary="Agent graph: SVG",
        tags=["graph"],
        responses={503: {"description": "Graphviz's dot is not installed."}},
    )
    async def graph_svg(app_name: str) -> Response:
        """The graph rendered by Graphviz's ``dot`` (503 saying how to install it)."""
        dot = (await graph_of(app_name)).to_dot()
        try:
            svg = await render_svg(dot)
        except ConfigurationError as exc:
            raise HTTPException(503, detail=str(exc)) from exc
        return Response(svg, media_type="image/svg+xml")
