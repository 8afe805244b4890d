"""Turning what ``Workflow(edges=...)`` and ``ctx.run_node`` accept into nodes."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Literal

from eventide.agents.base_agent import BaseAgent
from eventide.errors import WorkflowConfigurationError
from eventide.tools.base_tool import BaseTool
from eventide.workflow.agent_node import AgentNode
from eventide.workflow.base_node import START, BaseNode
from eventide.workflow.function_node import FunctionNode
from eventide.workflow.retry_config import RetryConfig
from eventide.workflow.tool_node import ToolNode

__all__ = ["build_node", "is_node_like"]


def is_node_like(item: Any) -> bool:
    """Whether ``item`` can be a node: a node, an agent, a tool, a callable or ``"START"``."""
    return isinstance(item, BaseNode | BaseAgent | BaseTool) or callable(item) or item == "START"


def build_node(
    node_like: Any,
    *,
    name: str | None = None,
    rerun_on_resume: bool | None = None,
    retry_config: RetryConfig | None = None,
    timeout: float | None = None,
    require_confirmation: bool | Callable[..., bool] | None = None,
    parameter_binding: Literal["state", "node_input"] = "state",
) -> BaseNode:
    """``node_like`` as a node, the given settings applied (a node is copied for them).

    Raises:
        WorkflowConfigurationError: ``node_like`` cannot be a node, or the settings do not
            fit it.
    """
    if isinstance(node_like, str) and node_like == "START":
        return START
    overrides: dict[str, Any] = {}
    if name is not None:
        overrides["name"] = name
    if rerun_on_resume is not None:
        overrides["rerun_on_resume"] = rerun_on_resume
    if retry_config is not None:
        overrides["retry_config"] = retry_config
    if timeout is not None:
        overrides["timeout"] = timeout
    if isinstance(node_like, BaseNode):
        if require_confirmation is not None:
            if not isinstance(node_like, FunctionNode):
                raise WorkflowConfigurationError(
                    "require_confirmation is only supported on function nodes, got "
                    f"{type(node_like).__name__}."
                )
            overrides["require_confirmation"] = require_confirmation
            if require_confirmation and rerun_on_resume is None:
                overrides["rerun_on_resume"] = True
        original: BaseNode = node_like
        return original.model_copy(update=overrides) if overrides else original
    if isinstance(node_like, BaseAgent):
        return AgentNode(node_like, **overrides)
    if isinstance(node_like, BaseTool):
        return ToolNode(node_like, **overrides)
    if callable(node_like):
        confirm = require_confirmation or False
        return FunctionNode(
            func=node_like,
            name=name,
            rerun_on_resume=bool(confirm) if rerun_on_resume is None else rerun_on_resume,
            retry_config=retry_config,
            timeout=timeout,
            require_confirmation=confirm,
            parameter_binding=parameter_binding,
        )
    raise WorkflowConfigurationError(
        f"Invalid node type {type(node_like).__name__} ({node_like!r}): a workflow node is a "
        "node, an agent, a tool, a function or 'START'."
    )
