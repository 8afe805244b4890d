"""``NodeTool``: a workflow (or any node) as a tool an ``LlmAgent`` can call.

The model's arguments are the node's input; the node's output is the tool's result. The
node runs inside the calling agent's invocation: its events are committed to the session
as it runs (under the path ``<tool name>@<call id>``), so its state changes and its steps
are in the log. A node that asks the user (``RequestInput``) cannot pause a tool call:
the call fails with a message saying so.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, TypeAdapter

from eventide import types
from eventide.contexts import ToolContext
from eventide.errors import NodeInterrupted, WorkflowConfigurationError
from eventide.events import Event
from eventide.node_context import Context
from eventide.tools.base_tool import BaseTool
from eventide.workflow.base_node import START, BaseNode
from eventide.workflow.function_node import FunctionNode
from eventide.workflow.node_builder import build_node
from eventide.workflow.node_runner import NodeRunner
from eventide.workflow.replay import RunLog

__all__ = ["NodeTool"]

_WRAPPED = "request"  # the argument holding a non-object input (google-adk's name)


class NodeTool(BaseTool):
    """Call ``node`` (a ``Workflow``, a node, or a function) as a tool.

    Args:
        node: what to run.
        name: the tool's name (the node's by default).
        description: what the model reads (the node's description by default).
    """

    def __init__(
        self, node: Any, *, name: str | None = None, description: str | None = None
    ) -> None:
        built = build_node(node)
        if isinstance(built, FunctionNode) and built.parameter_binding != "node_input":
            built = build_node(node, parameter_binding="node_input")
        super().__init__(
            name=name or built.name,
            description=description or built.description or f"Executes the node: {built.name}",
        )
        self.node: BaseNode = built
        self._schema = _input_schema(built)

    def get_declaration(self) -> types.FunctionDeclaration:
        schema = self._schema
        if schema is not None and schema.get("type") != "object":
            schema = {"type": "object", "properties": {_WRAPPED: schema}, "required": [_WRAPPED]}
        return types.FunctionDeclaration(
            name=self.name,
            description=self.description,
            parameters_json_schema=schema or {"type": "object", "properties": {}},
        )

    async def run_async(self, *, args: dict[str, Any], tool_context: ToolContext) -> Any:
        node_input: Any = args
        if self._schema is not None and self._schema.get("type") != "object":
            node_input = args.get(_WRAPPED)
        invocation = tool_context.invocation_context
        session = invocation.session

        async def commit(event: Event) -> None:
            await invocation.session_service.append_event(session, event)

        runner = NodeRunner(commit, RunLog(), resumable=False)
        call_id = tool_context.function_call_id or "1"
        parent = Context(invocation, runtime=runner, event_author=invocation.agent.name)
        outcome = await runner.run(
            self.node,
            parent=parent,
            node_input=node_input,
            run_id=call_id,
            path=f"{self.node.name}@{call_id}",  # the top of its own run (no parent path)
            branch=invocation.branch,
            use_as_output=False,
        )
        if outcome.interrupts:
            raise NodeInterrupted(outcome.interrupts)
        if outcome.error is not None:
            raise outcome.error
        return outcome.output


def _input_schema(node: BaseNode) -> dict[str, Any] | None:
    """The JSON schema of the node's input, as far as it can be told."""
    schema = node.input_schema
    if schema is None and node.__class__.__name__ == "Workflow":
        graph: Any = getattr(node, "graph", None)
        firsts = [e.to_node for e in graph.edges if e.from_node is START] if graph else []
        found = [s for s in (_input_schema(f) for f in firsts) if s is not None]
        return found[0] if found and all(f == found[0] for f in found) else None
    if schema is None and isinstance(node, FunctionNode):
        return _function_schema(node)
    if schema is None:
        return None
    if isinstance(schema, dict):
        given: dict[str, Any] = schema  # pyright: ignore[reportUnknownVariableType]
        return given
    if isinstance(schema, type) and issubclass(schema, BaseModel):
        return schema.model_json_schema()
    annotation: Any = node.input_schema  # a type or a typing form such as list[str]
    try:
        return TypeAdapter(annotation).json_schema()
    except Exception as exc:
        raise WorkflowConfigurationError(
            f"NodeTool cannot describe the input schema {schema!r} of node {node.name!r}: "
            "give the node an input_schema that is a pydantic model or a JSON schema."
        ) from exc


def _function_schema(node: FunctionNode) -> dict[str, Any]:
    properties: dict[str, Any] = {}
    required: list[str] = []
    for name in node.parameters:
        hint = node.hint(name)
        properties[name] = TypeAdapter(hint).json_schema() if hint is not None else {}
        if node.required(name):
            required.append(name)
    schema: dict[str, Any] = {"type": "object", "properties": properties}
    if required:
        schema["required"] = required
    return schema
