"""``BaseNode``: one step of a workflow graph, and ``START``, the graph's entry."""

from __future__ import annotations

from collections.abc import AsyncGenerator
from typing import TYPE_CHECKING, Any, ClassVar

from pydantic import BaseModel, ConfigDict, ValidationError, field_validator

from eventide._fastpath import construct_trusted
from eventide._model import raise_own_error
from eventide.errors import WorkflowConfigurationError
from eventide.events import Event
from eventide.runtime.graph_loop import START_NAME
from eventide.workflow.node_data import validate_node_data
from eventide.workflow.request_input import RequestInput, request_input_event
from eventide.workflow.retry_config import RetryConfig

if TYPE_CHECKING:
    from eventide.node_context import Context
    from eventide.runtime.replay_index import NodeRecord

__all__ = ["START", "BaseNode"]


class BaseNode(BaseModel):
    """A step of a workflow: subclasses implement :meth:`_run_impl`.

    A node runs once per trigger (an edge from a node that finished, or the workflow's
    start) with that trigger's ``node_input``, and yields events or plain values. The last
    ``output`` it yields is what its successors get as their ``node_input``.

    Attributes:
        name: a Python identifier, unique in its graph.
        description: what the node does (shown in graphs; a tool's description).
        rerun_on_resume: after the user answers what the node asked (``RequestInput``), run
            it again with the answers in ``ctx.resume_inputs``; when False the answer
            itself becomes the node's output.
        wait_for_output: the node finishes only once it yields an output or a route; until
            then further triggers run it again.
        retry_config: retry the node when it raises (see :class:`RetryConfig`).
        timeout: seconds the node may run before it is cancelled with
            ``NodeTimeoutError`` (which ``retry_config`` may retry).
        input_schema / output_schema: a type (a pydantic model, ``list[str]``...) the
            node's input / each output is validated and coerced to.
        state_schema: a pydantic model the state the node writes must fit (keys with an
            ``app:``, ``user:`` or ``temp:`` prefix are not checked).
    """

    model_config = ConfigDict(arbitrary_types_allowed=True, extra="forbid")

    # A node that replays its own children from the log (a nested workflow) is run again on
    # resume rather than given its recorded outcome.
    replays_children: ClassVar[bool] = False

    name: str
    description: str = ""
    rerun_on_resume: bool = False
    wait_for_output: bool = False
    retry_config: RetryConfig | None = None
    timeout: float | None = None
    input_schema: Any = None
    output_schema: Any = None
    state_schema: type[BaseModel] | None = None

    def __init__(self, /, **data: Any) -> None:
        try:
            super().__init__(**data)
        except ValidationError as exc:
            raise_own_error(exc)
            raise

    @field_validator("name")
    @classmethod
    def _check_name(cls, value: str) -> str:
        if not value.isidentifier():
            raise WorkflowConfigurationError(
                f"Node name {value!r} is not a valid Python identifier: use letters, digits "
                "and underscores (e.g. 'classify_ticket'), or pass name= to the node."
            )
        return value

    @property
    def requires_all_predecessors(self) -> bool:
        """Whether the node waits for every predecessor before it runs (``JoinNode``)."""
        return False

    @property
    def runs_inline(self) -> bool:
        """Whether the workflow may run this node in the workflow's own task (rather than a
        task of the node's) when it is the only node to run: true of nodes that run no user
        code but plain function calls, each in a copy of the context (as a task gives)."""
        return False

    def finished_in(self, record: NodeRecord) -> bool:
        """Whether a run of this node whose output (or route) the log holds had committed
        everything it commits (resumable apps). True unless the node commits more after its
        output: an agent node's agent commits its end marker after its answer."""
        return True

    async def run(self, *, ctx: Context, node_input: Any) -> AsyncGenerator[Event, None]:
        """Run the node: validate its input, run :meth:`_run_impl`, and turn what it
        yields into events (``None`` skipped, a ``RequestInput`` becomes the request's
        function call, any other value becomes ``Event(output=value)``)."""
        node_input = validate_node_data(self.input_schema, node_input)
        items = self._run_impl(ctx=ctx, node_input=node_input)
        try:
            async for item in items:
                if item is not None:
                    yield self._item_event(item)
        finally:
            await items.aclose()

    def _item_event(self, item: object) -> Event:
        """The event for what :meth:`_run_impl` yielded (not None): an event (its output
        validated), a request's function call, or any other value as the output."""
        if isinstance(item, Event):
            if item.output is not None:
                item.output = validate_node_data(self.output_schema, item.output)
            return item
        if isinstance(item, RequestInput):
            return request_input_event(item)
        output = validate_node_data(self.output_schema, item)
        return construct_trusted(Event, {"output": output})  # output is Any

    async def _run_impl(self, *, ctx: Context, node_input: Any) -> AsyncGenerator[Any, None]:
        """The node's logic: yield events, ``RequestInput``s or output values."""
        raise NotImplementedError(
            f"{type(self).__name__} must implement "
            "`async def _run_impl(self, *, ctx, node_input)` yielding events or values."
        )
        yield  # pragma: no cover - makes this an async generator


START = BaseNode(name=START_NAME)
"""The entry of every workflow graph: never run; its successors get the workflow's input."""
