"""google-adk 2.x's one context, :class:`Context`: a :class:`ToolContext` that also knows
where it stands in a workflow (its node, path and run), carries the node's result and runs
other nodes as its children (:meth:`Context.run_node`, through :class:`NodeRuntime`).

It lives apart from :mod:`eventide.contexts` (the contexts every agent, callback and tool
gets) because only workflow code builds it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

from eventide.contexts import InvocationContext, ToolContext
from eventide.errors import ConfigurationError
from eventide.events import Event, EventActions, ToolConfirmation

__all__ = ["Context", "NodeRuntime"]


class NodeRuntime(Protocol):
    """What a workflow node's :class:`Context` asks of the workflow running it."""

    async def run_dynamic(
        self,
        ctx: Context,
        node: Any,
        node_input: Any,
        *,
        run_id: str | None,
        use_as_output: bool,
        use_sub_branch: bool,
    ) -> Any:
        """Run ``node`` as a child of the node ``ctx`` belongs to; its output."""
        ...

    def committed(self, ctx: Context) -> list[Event]:
        """The events the node run of ``ctx`` committed in its invocation before the
        invocation stopped (empty: the run starts afresh)."""
        ...


class Context(ToolContext):
    """google-adk 2.x's one context for tools, callbacks and workflow nodes.

    Everything a :class:`ToolContext` offers (state, artifacts, memory, confirmations,
    credentials), plus what a workflow node needs: where it is (``node_path``, ``run_id``),
    its result (``output``, ``route``), the user's answers to what it asked
    (``resume_inputs``) and :meth:`run_node` to run another node as its child.
    Outside a workflow the node fields are empty and :meth:`run_node` raises.
    """

    __slots__ = (
        "_attempt_count",
        "_event_author",
        "_node",
        "_node_path",
        "_output",
        "_parent_ctx",
        "_resume_inputs",
        "_route",
        "_run_id",
        "_runtime",
        "output_delegated",
        "output_for_ancestors",
    )

    def __init__(
        self,
        invocation_context: InvocationContext,
        *,
        node: Any = None,
        node_path: str = "",
        run_id: str = "",
        parent_ctx: Context | None = None,
        runtime: NodeRuntime | None = None,
        resume_inputs: dict[str, Any] | None = None,
        attempt_count: int = 1,
        event_author: str = "",
        function_call_id: str | None = None,
        event_actions: EventActions | None = None,
        tool_confirmation: ToolConfirmation | None = None,
    ) -> None:
        # The base classes' slots are set here, as their __init__s would (ToolContext's,
        # CallbackContext's, ReadonlyContext's): one call per node run instead of four with
        # their keyword arguments. tests/workflow checks every slot of the classes is set.
        self._invocation_context = invocation_context
        self._event_actions = event_actions
        self._state = None
        self.function_call_id = function_call_id
        self.tool_confirmation = tool_confirmation
        self._node = node
        self._node_path = node_path
        self._run_id = run_id
        self._parent_ctx = parent_ctx
        self._runtime = runtime
        # Made when first read unless given: most nodes never resume, and a fan-out holds
        # every node's context at once.
        self._resume_inputs: dict[str, Any] | None = dict(resume_inputs) if resume_inputs else None
        self._attempt_count = attempt_count
        self._event_author = event_author
        self._output: Any = None
        self._route: Any = None
        # The enclosing nodes whose output this node's output also is (it is their
        # terminal node): they are listed in its output event's ``node_info.output_for``.
        # (A tuple until set: an empty list per context was 56 bytes for nothing.)
        self.output_for_ancestors: Sequence[str] = ()
        # Set when a child's output event already is this node's output (its terminal node,
        # ``run_node(use_as_output=True)``): the node's own output event is left out.
        self.output_delegated = False

    @property
    def node(self) -> Any:
        """The workflow node this context belongs to (None outside a workflow)."""
        return self._node

    @property
    def node_path(self) -> str:
        """The node's path of ``name@run`` segments, e.g. ``"wf@1/classify@1"``."""
        return self._node_path

    @property
    def run_id(self) -> str:
        """Which run of the node this is (``"1"``, ``"2"``, ... per parent)."""
        return self._run_id

    @property
    def parent_ctx(self) -> Context | None:
        """The context of the enclosing node (the workflow), or None at the top."""
        return self._parent_ctx

    @property
    def attempt_count(self) -> int:
        """1 on the first attempt, 2 on the first retry (see ``RetryConfig``)."""
        return self._attempt_count

    @property
    def resume_inputs(self) -> dict[str, Any]:
        """The user's answers to this node's requests, by interrupt id (function call id)."""
        if self._resume_inputs is None:
            self._resume_inputs = {}
        return self._resume_inputs

    @property
    def branch(self) -> str | None:
        """The branch the node runs on (set in a fan-out)."""
        return self._invocation_context.branch

    @property
    def event_author(self) -> str:
        """The author the node's events carry: the enclosing workflow's (or agent's) name."""
        return self._event_author

    @event_author.setter
    def event_author(self, value: str) -> None:
        self._event_author = value

    @property
    def output(self) -> Any:
        """The node's output so far; setting it makes that the node's output."""
        return self._output

    @output.setter
    def output(self, value: Any) -> None:
        self._output = value

    @property
    def route(self) -> Any:
        """The route the node chose (``Event(route=...)`` or set here); None when none."""
        return self._route

    @route.setter
    def route(self, value: Any) -> None:
        self._route = value

    @property
    def node_runtime(self) -> NodeRuntime | None:
        """The workflow runtime running this node (None outside a workflow)."""
        return self._runtime

    def get_invocation_context(self) -> InvocationContext:
        """The invocation this context belongs to."""
        return self._invocation_context

    async def run_node(
        self,
        node: Any,
        node_input: Any = None,
        *,
        use_as_output: bool = False,
        run_id: str | None = None,
        use_sub_branch: bool = False,
    ) -> Any:
        """Run ``node`` (a node, a function, an agent or a tool) as a child of this node
        and return its output.

        Await it directly: the child's events are committed under this node's path
        (``<this node>/<child>@<run>``), and on a resumed run a child that already finished
        returns its recorded output instead of running again. ``use_as_output``: the
        child's output is this node's output too.

        Raises:
            ConfigurationError: this context is not a workflow node's.
        """
        if self._runtime is None:
            raise ConfigurationError(
                "ctx.run_node() works only inside a workflow node: put this code in a "
                "function node of an eventide.workflow.Workflow."
            )
        return await self._runtime.run_dynamic(
            self,
            node,
            node_input,
            run_id=run_id,
            use_as_output=use_as_output,
            use_sub_branch=use_sub_branch,
        )
