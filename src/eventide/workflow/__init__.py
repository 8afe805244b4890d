"""Graph workflows with google-adk 2.x's API: ``Workflow``, nodes, edges and routes.

::

    from eventide import Event, Workflow
    from eventide.workflow import JoinNode

    def classify(node_input: str):
        yield Event(route="long" if len(node_input) > 20 else "short")

    routes = {"long": summarize, "short": reply}
    workflow = Workflow(name="triage", edges=[("START", classify, routes)])

See :mod:`eventide.workflow.workflow` for how a graph runs and
:mod:`eventide.workflow.replay` for how a paused or crashed run continues.
"""

from __future__ import annotations

from eventide.errors import NodeTimeoutError
from eventide.workflow.agent_node import AgentNode
from eventide.workflow.base_node import START, BaseNode
from eventide.workflow.function_node import FunctionNode
from eventide.workflow.graph import DEFAULT_ROUTE, Edge, Graph
from eventide.workflow.join_node import JoinNode
from eventide.workflow.node import Node, node
from eventide.workflow.node_tool import NodeTool
from eventide.workflow.request_input import REQUEST_INPUT_FUNCTION, RequestInput
from eventide.workflow.retry_config import RetryConfig
from eventide.workflow.tool_node import ToolNode
from eventide.workflow.workflow import Workflow

__all__ = [
    "DEFAULT_ROUTE",
    "REQUEST_INPUT_FUNCTION",
    "START",
    "AgentNode",
    "BaseNode",
    "Edge",
    "FunctionNode",
    "Graph",
    "JoinNode",
    "Node",
    "NodeTimeoutError",
    "NodeTool",
    "RequestInput",
    "RetryConfig",
    "ToolNode",
    "Workflow",
    "node",
]
