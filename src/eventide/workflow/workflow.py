"""``Workflow``: a graph of nodes, run as an agent or as a node of another workflow.

A node runs once per trigger. ``START``'s successors are triggered with the workflow's
input (the user's message, or the input the enclosing workflow gives it); when a node
finishes, each edge it takes triggers its target with the node's output (a ``JoinNode``
waits for all its predecessors and gets ``{name: output}``). Edges out of a node that
emitted a route are taken when the route matches (``DEFAULT_ROUTE`` when none does).
Nodes triggered together run concurrently (each on a branch of its own when a node fans
out), up to ``max_concurrency``. The workflow's output is its terminal node's output.

A node that asks the user (``RequestInput``, a tool confirmation) pauses the workflow; the
user's answer continues it from the log (:mod:`eventide.workflow.replay`): finished nodes
are replayed, not run again.
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import AsyncGenerator, Coroutine
from typing import Any, ClassVar

from pydantic import Field

from eventide.agents.base_agent import BaseAgent
from eventide.contexts import InvocationContext
from eventide.errors import GraphValidationError, NodeInterrupted, WorkflowConfigurationError
from eventide.events import Event
from eventide.node_context import Context
from eventide.runtime.commit_channel import CommitChannel
from eventide.runtime.drive import InlineEmitter, drive
from eventide.runtime.graph_loop import NodeOutcome, Trigger, run_graph
from eventide.runtime.replay import AgentProgress, ResumeScope
from eventide.workflow.base_node import BaseNode
from eventide.workflow.function_node import FunctionNode
from eventide.workflow.graph import EdgeItem, Graph
from eventide.workflow.node_data import validate_node_data
from eventide.workflow.node_runner import NodeRunner
from eventide.workflow.replay import RunLog, read_index, read_run

__all__ = ["Workflow"]


class Workflow(BaseNode, BaseAgent):  # pyright: ignore[reportIncompatibleVariableOverride]
    """A graph workflow (see the module docstring); an agent the Runner runs like any other.

    Attributes:
        edges: the graph as edge items: ``Edge`` objects or tuple chains such as
            ``("START", fetch, {"ok": save, "bad": report})``.
        graph: the compiled graph (built from ``edges``).
        max_concurrency: at most this many graph nodes run at once (None or <= 0: no limit;
            ``ctx.run_node`` children are not counted).
        rerun_on_resume: as a node of another workflow it always continues its own nodes
            from the log.
    """

    # The durable runtime re-runs a workflow to resume it: it reads its place from the log.
    resumes_from_log: ClassVar[bool] = True
    replays_children: ClassVar[bool] = True

    rerun_on_resume: bool = True
    edges: list[EdgeItem] = Field(default_factory=list)
    graph: Graph | None = None
    max_concurrency: int | None = None

    def model_post_init(self, context: Any, /) -> None:
        super().model_post_init(context)
        if self.edges and self.graph is None:
            self.graph = Graph.from_edge_items(self.edges)
        self._check_state_schema()

    def _check_state_schema(self) -> None:
        schema = self.state_schema
        if schema is None or self.graph is None:
            return
        for node in self.graph.nodes:
            if not isinstance(node, FunctionNode):
                continue
            for name in node.parameters:
                if name not in schema.model_fields:
                    raise GraphValidationError(
                        f"FunctionNode {node.name!r} parameter {name!r} is not declared in "
                        f"state_schema {schema.__name__!r}. Declared fields: "
                        f"{sorted(schema.model_fields)}"
                    )

    # --- as an agent (the Runner's entry) ---
    def _run_async_impl(self, ctx: InvocationContext) -> AsyncGenerator[Event, None]:
        return self._run_top(ctx, read_run(ctx.session.events, f"{self.name}@1"))

    def _resume_async_impl(
        self, ctx: InvocationContext, scope: ResumeScope, progress: AgentProgress
    ) -> AsyncGenerator[Event, None]:
        """Continue the run the stopped invocation was in, from the invocation's replay
        index (read once, by the resume), unless the run had finished (its output
        committed) before the invocation stopped: then nothing is left to do, where
        reading it as a finished run would start a new one from the same message."""
        root = f"{self.name}@1"
        if scope.index.finished(root, scope.since):
            return _nothing()
        return self._run_top(ctx, read_index(scope.index, root))

    def _run_top(self, ctx: InvocationContext, log: RunLog) -> AsyncGenerator[Event, None]:
        """Run the graph as the Runner's agent, continuing ``log``'s run."""
        emitter = InlineEmitter(CommitChannel(asyncio.get_running_loop()))
        path = f"{self.name}@1"
        node_input: Any = ctx.user_content
        if log.resuming and log.start is not None:
            node_input = log.start
        runner = NodeRunner(emitter.emit, log, resumable=ctx.resumable)
        root = Context(
            ctx, node=self, node_path=path, run_id="1", runtime=runner, event_author=self.name
        )
        # The graph loop runs in the task reading the events (runtime/drive): a lone node's
        # events are yielded from there, and only node tasks go through the channel.
        return drive(
            self._run_graph(root, node_input, runner, top=ctx), emitter.channel, emitter=emitter
        )

    # --- as a node of another workflow ---
    async def _run_impl(self, *, ctx: Context, node_input: Any) -> AsyncGenerator[Any, None]:
        runner = ctx.node_runtime
        if not isinstance(runner, NodeRunner):
            raise WorkflowConfigurationError(
                f"Workflow {self.name!r} runs as a node only inside another workflow; run it "
                "with a Runner otherwise."
            )
        ctx.event_author = self.name
        output = await self._run_graph(ctx, node_input, runner)
        if output is not None:
            ctx.output = output
            ctx.output_delegated = True  # its terminal node's output event says so
        return
        yield  # pragma: no cover - makes this an async generator

    # --- the graph loop ---
    async def _run_graph(
        self,
        ctx: Context,
        node_input: Any,
        runner: NodeRunner,
        *,
        top: InvocationContext | None = None,
    ) -> Any:
        """Run the graph (:func:`~eventide.runtime.graph_loop.run_graph`, each node run
        placed by ``runner``: its path, its events' fields); the terminal node's output
        (None when none).

        ``top``: the invocation of a workflow the Runner runs (a top workflow), which a
        pause for the user ends, as an agent's pause ends it (enclosing agents stop too; a
        resumable app marks it ended); the answer continues the run from the log. (Here,
        not in a coroutine around this one: each event passes one await less.)

        Raises:
            NodeInterrupted: a node waits for the user (not for a top workflow).
            Exception: a node failed (after its retries).
        """
        graph = self.graph
        if graph is None:
            return None
        node_input = validate_node_data(self.input_schema, node_input)
        limit = self.max_concurrency if self.max_concurrency and self.max_concurrency > 0 else 0
        # The loop's start is _start itself with this run's two arguments bound: one Python
        # call per node run, not a closure calling it.
        start = functools.partial(self._start, ctx, runner)
        try:
            results = await run_graph(graph, start, node_input, branch=ctx.branch, limit=limit)
        except NodeInterrupted:
            if top is None:
                raise
            top.end_invocation = True
            return None
        if len(results) > 1:
            raise WorkflowConfigurationError(
                f"Workflow {self.name}: multiple terminal nodes produced output "
                f"({len(results)}). A workflow must have at most one terminal output: join "
                "the branches with a JoinNode."
            )
        return validate_node_data(self.output_schema, results[0]) if results else None

    def _start(
        self,
        ctx: Context,
        runner: NodeRunner,
        node: Any,  # a BaseNode: the graph loop hands back the nodes of this graph
        trigger: Trigger,
        is_terminal: bool,
    ) -> tuple[str, Coroutine[Any, Any, NodeOutcome]]:
        """The run of ``node`` that ``trigger`` starts (numbered now, in trigger order): its
        task's name and the coroutine that runs it."""
        parent_path = ctx.node_path
        name = node.name
        run_id = runner.next_run_id(parent_path, name)
        path = f"{parent_path}/{name}@{run_id}" if parent_path else f"{name}@{run_id}"
        branch = trigger.branch if trigger.branch is not None else ctx.branch
        if trigger.sub_branch:
            segment = f"{name}@{run_id}"
            branch = f"{branch}.{segment}" if branch else segment
        return f"eventide-node-{path}", runner.run(
            node,
            parent=ctx,
            node_input=trigger.input,
            run_id=run_id,
            path=path,
            branch=branch,
            use_as_output=is_terminal,
        )


async def _nothing() -> AsyncGenerator[Event, None]:
    return
    yield  # pragma: no cover - makes this an async generator
