"""Running one node run: its context, its events, retry, timeout, and replay.

:class:`NodeRunner` is the runtime one top-level workflow run shares with every node in it
(nested workflows and ``ctx.run_node`` children included). It numbers runs, names each
run's path, hands each event to ``emit`` (which returns once the Runner committed it),
and, when the run continues an earlier one (:mod:`eventide.workflow.replay`), gives a
node that had finished its recorded output instead of running it again.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ValidationError

from eventide._fastpath import assign_fields, fields_of
from eventide.errors import (
    DynamicNodeFailError,
    NodeInterrupted,
    NodeTimeoutError,
    WorkflowConfigurationError,
    WorkflowDataError,
)
from eventide.events import Event
from eventide.node_context import Context
from eventide.runtime.graph_loop import NodeOutcome
from eventide.workflow.agent_node import AgentNode
from eventide.workflow.base_node import BaseNode
from eventide.workflow.node_builder import build_node
from eventide.workflow.replay import DONE_KEY, NodeRecord, RunLog

__all__ = ["Emit", "NodeOutcome", "NodeRunner"]

_log = logging.getLogger("eventide.workflow")

Emit = Callable[[Event], Awaitable[None]]
"""Hands an event to the Runner; returns once it is committed."""


@dataclass(slots=True, kw_only=True)
class _Tracked:
    output: Any = None
    output_emitted: bool = False
    route: Any = None
    route_emitted: bool = False
    # Made at the node's first request: a fan-out holds every node's record at its peak.
    interrupts: list[str] | None = None

    def wait_for(self, interrupt_ids: Iterable[str]) -> None:
        """Note requests the node waits on."""
        if self.interrupts is None:
            self.interrupts = []
        self.interrupts.extend(interrupt_ids)


class NodeRunner:
    """Runs nodes for one workflow run (see the module docstring)."""

    def __init__(self, emit: Emit, log: RunLog, *, resumable: bool) -> None:
        self.emit = emit
        self.log = log
        self.resumable = resumable
        self._counters: dict[tuple[str, str], int] = {}
        self._built: dict[int, BaseNode] = {}

    def next_run_id(self, parent_path: str, name: str) -> str:
        """The next run id of ``name`` under ``parent_path`` (``"1"``, ``"2"``...)."""
        key = (parent_path, name)
        count = self._counters.get(key, 0) + 1
        self._counters[key] = count
        return str(count)

    async def run(
        self,
        node: BaseNode,
        *,
        parent: Context,
        node_input: Any,
        run_id: str,
        path: str,
        branch: str | None,
        use_as_output: bool,
    ) -> NodeOutcome:
        """Run (or replay) one run of ``node`` as a child of ``parent``'s node, at ``path``
        (``<parent path>/<name>@<run_id>``, which the caller made for its own use too)."""
        record = self.log.record(path)
        resume_inputs: dict[str, Any] | None = None  # (no dict per run that never resumes)
        # A run whose output the log holds, run again to commit what followed its output.
        finishing: NodeRecord | None = None
        if record is not None:
            replayed = self._replay(node, record)
            if replayed is not None:
                replayed.branch = branch
                return replayed
            resume_inputs = {
                i: self.log.answers[i] for i in record.interrupts if i in self.log.answers
            }
            if not node.replays_children and (record.has_output or record.route is not None):
                finishing = record  # (a workflow node replays its children instead)
        invocation = parent.get_invocation_context()
        if branch != invocation.branch:
            invocation = invocation.for_agent(invocation.agent, branch=branch)
            invocation.branch = branch
        timeout = node.timeout
        attempt = 1
        while True:
            ctx = Context(
                invocation,
                node=node,
                node_path=path,
                run_id=run_id,
                parent_ctx=parent,
                runtime=self,
                resume_inputs=resume_inputs,
                attempt_count=attempt,
                event_author=parent.event_author or node.name,
            )
            if use_as_output:
                ctx.output_for_ancestors = [parent.node_path, *parent.output_for_ancestors]
            tracked = _Tracked(output_emitted=finishing is not None)
            try:
                if timeout is None:
                    # The node's events, each committed before the next, in this frame: a
                    # node waiting for its commit (every node of a fan-out at its peak) holds
                    # this coroutine only, not one more for the loop and one for each emit,
                    # and each event costs no call of its own. (_drive is the same loop,
                    # for a node with a timeout: it runs inside asyncio.timeout.)
                    events = node.run(ctx=ctx, node_input=node_input)
                    try:
                        async for event in events:
                            if self._prepare(ctx, event, tracked, node):
                                await self.emit(event)
                    except BaseException:
                        await events.aclose()  # (run to its end, it has nothing to close)
                        raise
                    del events
                else:
                    try:
                        async with asyncio.timeout(timeout):
                            await self._drive(node, ctx, node_input, tracked)
                    except TimeoutError as exc:
                        raise NodeTimeoutError(node.name, timeout) from exc
            except NodeInterrupted as waiting:
                tracked.wait_for(waiting.interrupt_ids)
            except Exception as raised:  # noqa: BLE001 - recorded, retried or handed up
                error: Exception = raised
                if isinstance(raised, DynamicNodeFailError):
                    error = raised.error  # the child's failure, its error event committed
                else:
                    _log.warning("Node %s failed: %s: %s", path, type(error).__name__, error)
                    failed = Event(error_code=_error_code(error), error_message=str(error))
                    if self._prepare(ctx, failed, tracked, node):
                        await self.emit(failed)
                config = node.retry_config
                if config is not None and config.should_retry(error, attempt):
                    await asyncio.sleep(config.delay(attempt))
                    attempt += 1
                    continue
                return NodeOutcome(error=error, branch=branch)
            final = self._final_event(node, ctx, tracked)
            if final is not None:
                await self.emit(final)
            output = ctx.output if ctx.output is not None else tracked.output
            route = tracked.route if tracked.route is not None else ctx.route
            if finishing is not None and output is None and route is None:
                output, route = finishing.output, finishing.route
            return NodeOutcome(
                output=output,
                route=route,
                interrupts=tracked.interrupts if tracked.interrupts is not None else [],
                branch=invocation.branch,
            )

    def _replay(self, node: BaseNode, record: NodeRecord) -> NodeOutcome | None:
        """The outcome of a node run the log already holds, or None when it must run."""
        if node.replays_children:  # a workflow replays its own nodes
            return None
        answers = self.log.answers
        unresolved = [i for i in record.interrupts if i not in answers]
        if unresolved:
            if node.rerun_on_resume and len(unresolved) < len(record.interrupts):
                return None
            return NodeOutcome(interrupts=unresolved)
        if record.has_output or record.route is not None:
            if self.resumable and not node.finished_in(record):
                return None  # it commits the rest; its output stays the committed one
            return NodeOutcome(output=record.output, route=record.route)
        if record.error is not None:
            return None
        if record.interrupts:
            if not node.rerun_on_resume:
                given = [answers[i] for i in record.interrupts]
                output = given[0] if len(given) == 1 else {i: answers[i] for i in record.interrupts}
                return NodeOutcome(output=output)
            return NodeOutcome() if record.done else None
        if node.rerun_on_resume or self.resumable:
            return NodeOutcome() if record.done else None
        return NodeOutcome()  # it finished without an output (google-adk fast-forwards it)

    async def _drive(
        self, node: BaseNode, ctx: Context, node_input: Any, tracked: _Tracked
    ) -> None:
        """The node's events, each committed before the next (a node with a timeout: the
        loop :meth:`run` runs itself otherwise)."""
        events = node.run(ctx=ctx, node_input=node_input)
        try:
            async for event in events:
                if self._prepare(ctx, event, tracked, node):
                    await self.emit(event)
        except BaseException:
            await events.aclose()
            raise

    def _prepare(self, ctx: Context, event: Event, tracked: _Tracked, node: BaseNode) -> bool:
        """Fill in the event's workflow fields and the node's pending state, and note its
        output, route and requests; False when the event is left out (a delegated output
        with nothing else to say).

        The event's and its actions' fields are read from their field dicts (``fields_of``,
        live: the writes below show in them), about 0.4k instructions a read less than
        pydantic attribute reads, a dozen per event."""
        fields = fields_of(event)
        acts = fields_of(fields["actions"])
        output = fields["output"]
        if output is not None:
            if tracked.output_emitted:
                raise WorkflowDataError(
                    f"Node {node.name!r} yielded a second output: a node produces at most one "
                    "output per run. Yield other results as state or content, or split the node."
                )
            tracked.output = output
        author = fields["author"]
        agent = isinstance(node, AgentNode)
        route = acts["route"]
        if route is not None and (not author or not agent or author == node.name):
            tracked.route = route
        if fields["long_running_tool_ids"]:
            tracked.wait_for(sorted(fields["long_running_tool_ids"]))
        # The workflow's fields, written as pydantic's __setattr__ would (no validation is
        # skipped: each value has its field's type).
        own: dict[str, Any] = {"invocation_id": ctx.invocation_id}
        if not author or not agent:
            own["author"] = ctx.event_author
        if fields["branch"] is None:
            branch = ctx.branch
            if branch is not None:
                own["branch"] = branch
        assign_fields(event, own)
        info: dict[str, Any] = {"path": ctx.node_path}
        if output is not None:
            if ctx.output_delegated:
                if fields["content"] is None and fields["actions"].is_empty():
                    tracked.output_emitted = True  # the delegated output: no event of its own
                    return False
                event.output = None
            else:
                info["output_for"] = [ctx.node_path, *ctx.output_for_ancestors]
                tracked.output_emitted = True
        assign_fields(fields["node_info"], info)
        if route is not None:
            tracked.route_emitted = True
        pending = ctx.actions_if_any  # None: the node wrote no state, saved no artifact
        if pending is not None and not fields["partial"]:
            if pending.state_delta:
                event.actions.state_delta = {**pending.state_delta, **acts["state_delta"]}
                pending.state_delta.clear()  # the same dict ctx.state writes to
            if pending.artifact_delta:
                acts["artifact_delta"].update(pending.artifact_delta)
                pending.artifact_delta.clear()
        if acts["state_delta"]:
            _check_state(node, ctx, event)
        return True

    def _final_event(self, node: BaseNode, ctx: Context, tracked: _Tracked) -> Event | None:
        """The event, ready to commit, of what the node set on its context but did not
        yield (``ctx.output =``, ``ctx.route =``, state written last), or the done marker of
        a resumable run; None when there is nothing to commit. (Not a coroutine: most runs
        commit nothing more, and then cost no call to await.)"""
        output = None
        if ctx.output is not None and not tracked.output_emitted and not ctx.output_delegated:
            output = ctx.output
        route = ctx.route if ctx.route is not None and not tracked.route_emitted else None
        pending = ctx.actions_if_any
        if (
            output is not None
            or route is not None
            or (pending is not None and not pending.is_empty())
        ):
            event = Event(output=output, route=route)
            return event if self._prepare(ctx, event, tracked, node) else None
        if (
            self.resumable
            and not tracked.output_emitted
            and not ctx.output_delegated  # its terminal child's event carries its output
            and not tracked.interrupts
            and tracked.route is None
        ):
            return Event(
                author=ctx.event_author,
                invocation_id=ctx.invocation_id,
                branch=ctx.branch,
                node_path=ctx.node_path,
                custom_metadata={DONE_KEY: True},
            )
        return None

    # --- NodeRuntime ---
    def committed(self, ctx: Context) -> list[Event]:
        """The events the node run of ``ctx`` committed before the invocation stopped."""
        return self.log.committed(ctx.node_path, ctx.invocation_id)

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
        """Run ``node`` as a child of ``ctx``'s node (``ctx.run_node``); its output.

        Raises:
            WorkflowConfigurationError: the calling node has ``rerun_on_resume=False``: a
                child that waits for the user is continued by running its parent again.
        """
        caller = ctx.node
        if isinstance(caller, BaseNode) and not caller.rerun_on_resume:
            raise WorkflowConfigurationError(
                f"Node {caller.name!r} runs nodes with ctx.run_node(), so it needs "
                "rerun_on_resume=True (e.g. @node(rerun_on_resume=True)): a child that waits "
                "for the user is continued by running its parent again."
            )
        built = self._built.get(id(node))
        if built is None:
            built = self._built[id(node)] = build_node(node)
        rid = run_id or self.next_run_id(ctx.node_path, built.name)
        path = f"{ctx.node_path}/{built.name}@{rid}" if ctx.node_path else f"{built.name}@{rid}"
        branch = ctx.branch
        if use_sub_branch:
            segment = f"{built.name}@{rid}"
            branch = f"{branch}.{segment}" if branch else segment
        outcome = await self.run(
            built,
            parent=ctx,
            node_input=node_input,
            run_id=rid,
            path=path,
            branch=branch,
            use_as_output=use_as_output,
        )
        if outcome.error is not None:
            error = outcome.error
            raise DynamicNodeFailError(
                message=str(error),
                error=error,
                error_node_path=path,
            ) from error
        if outcome.interrupts:
            raise NodeInterrupted(outcome.interrupts)
        if use_as_output:
            if ctx.output_delegated:
                raise WorkflowDataError(
                    f"Node {ctx.node_path!r} ran a second child with use_as_output=True: only "
                    "one child's output can be the node's output."
                )
            ctx.output = outcome.output
            ctx.output_delegated = True
        return outcome.output


def _error_code(error: BaseException) -> str:
    status = getattr(error, "status", None)
    return status if isinstance(status, str) else type(error).__name__


def _check_state(node: BaseNode, ctx: Context, event: Event) -> None:
    """Reject state the node's (or its workflow's) ``state_schema`` does not allow."""
    if not event.actions.state_delta:
        return
    schema = _state_schema(node, ctx)
    if schema is None:
        return
    for key, value in event.actions.state_delta.items():
        if key.startswith(("app:", "user:", "temp:")):
            continue
        if key not in schema.model_fields:
            raise WorkflowDataError(
                f"State key {key!r} is not declared in state_schema {schema.__name__!r}. "
                f"Declared keys: {sorted(schema.model_fields)}."
            )
        try:
            schema.__pydantic_validator__.validate_assignment(schema.model_construct(), key, value)
        except ValidationError as exc:
            raise WorkflowDataError(
                f"State key {key!r} does not fit state_schema {schema.__name__!r}: {exc}"
            ) from exc


def _state_schema(node: BaseNode, ctx: Context) -> type[BaseModel] | None:
    if node.state_schema is not None:
        return node.state_schema
    parent = ctx.parent_ctx
    while parent is not None:
        owner = parent.node
        if isinstance(owner, BaseNode) and owner.state_schema is not None:
            return owner.state_schema
        parent = parent.parent_ctx
    return None
