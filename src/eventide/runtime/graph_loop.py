"""The graph loop: runs a graph's nodes as their triggers come, for a ``Workflow`` and for
the workflow agents' shapes alike (docs/architecture.md, section 15.1).

A node runs once per trigger. ``START``'s successors (or the nodes ``first`` names: a
continuation) are triggered with the graph's input; when a node finishes, each edge it
takes (:meth:`LoopGraph.next_nodes`, given its route) triggers its target with the node's
output (a node that ``requires_all_predecessors`` waits for all of them and gets
``{name: output}``). Nodes triggered together run concurrently, each in a task, up to
``limit``; a lone node that ``runs_inline`` runs in the loop's own task.

What a node run *is* comes from its graph's owner, through ``start``: its place. A
workflow's (``Workflow._start``, ``NodeRunner.run``) numbers the run, names its path and
stamps it on every event; a fan-out agent shape's runs a sub-agent on its branch, stamping
nothing. The loop only reads the run's :class:`NodeOutcome`: its output and route, the
requests it waits on, its error. (A fan-out shape's early end, an escalation reaching the
``ParallelAgent``, is its driver's: :func:`~eventide.runtime.drive.drive`'s ``exits``.)

An agent shape's chain (a ``SequentialAgent``, a ``LoopAgent``: every node inline, one
successor at most, no outputs, joins or waits) runs in the chain mode instead,
:func:`run_chain`: a generator of the steps' events, each step's run what its owner's
:class:`ChainPlace` makes of the node (its step marker, its sub-agent's events, its route).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator, Callable, Coroutine, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeVar

from eventide.errors import NodeInterrupted
from eventide.events import Event

__all__ = [
    "START_NAME",
    "ChainGraph",
    "ChainPlace",
    "ChainStep",
    "LoopGraph",
    "LoopNode",
    "NodeOutcome",
    "StartRun",
    "Trigger",
    "run_chain",
    "run_graph",
]

_NONE: frozenset[str] = frozenset()

START_NAME = "__START__"
"""The name of every graph's entry: never run; its successors get the graph's input."""


@dataclass(slots=True, kw_only=True)
class NodeOutcome:
    """How a node run ended: its output and route, the requests it waits on, or its error."""

    output: Any = None
    route: Any = None
    interrupts: list[str] = field(default_factory=list)
    error: Exception | None = None
    branch: str | None = None


@dataclass(slots=True, kw_only=True)
class Trigger:
    """One run to start: its input; ``sub_branch``: it is one of several triggered together
    (a fan-out: each on a branch of its own); ``branch``: the branch of what triggered it."""

    input: Any
    sub_branch: bool = False
    branch: str | None = None


class LoopNode(Protocol):
    """What the loop reads of a node."""

    @property
    def name(self) -> str: ...

    @property
    def requires_all_predecessors(self) -> bool: ...

    @property
    def runs_inline(self) -> bool: ...

    @property
    def wait_for_output(self) -> bool: ...


class LoopGraph(Protocol):
    """What the loop reads of a graph."""

    @property
    def start_names(self) -> list[str]: ...

    @property
    def terminal_node_names(self) -> set[str]: ...

    @property
    def has_joins(self) -> bool:
        """Whether a node ``requires_all_predecessors`` (else none is asked)."""
        ...

    def node(self, name: str) -> LoopNode: ...

    def predecessors(self, name: str) -> tuple[str, ...]: ...

    def next_nodes(self, name: str, route: Any) -> list[str]: ...

    def nodes_order(self, names: set[str]) -> list[str]: ...


StartRun = Callable[[LoopNode, Trigger, bool], tuple[str, Coroutine[Any, Any, NodeOutcome]]]
"""The run of a node a trigger starts (the node, the trigger, whether the node is terminal):
a name for its task and the coroutine that runs it."""


def run_graph(
    graph: LoopGraph,
    start: StartRun,
    node_input: Any,
    *,
    branch: str | None,
    limit: int = 0,
    first: Sequence[str] | None = None,
) -> Coroutine[Any, Any, list[Any]]:
    """Run ``graph`` from ``START`` (or from the nodes ``first`` names) with ``node_input``;
    the outputs of its terminal nodes, in graph order. (The general loop's coroutine itself:
    no frame of this one for every await to pass. An agent shape's chain runs in the chain
    mode, :func:`run_chain`.)

    Args:
        branch: the branch the graph runs on (a join's, when its predecessors share none).
        limit: at most this many node runs in tasks at once (0: no limit).

    Raises:
        NodeInterrupted: a node waits for the user.
        Exception: a node failed.
    """
    return _run_general(graph, start, node_input, branch, limit, first)


async def _run_general(
    graph: LoopGraph,
    start: StartRun,
    node_input: Any,
    branch: str | None,
    limit: int,
    first: Sequence[str] | None,
) -> list[Any]:
    """:func:`run_graph`'s general loop (see the module docstring)."""
    triggers: dict[str, list[Trigger]] = {}
    outputs: dict[str, Any] = {}
    branches: dict[str, str | None] = {}
    done: set[str] = set()
    arrivals: dict[str, set[str]] = {}
    waiting: dict[str, list[str]] = {}
    pending: dict[str, asyncio.Task[NodeOutcome]] = {}
    terminal = graph.terminal_node_names
    needs: dict[str, int] = {}  # a join: how many predecessors must arrive (START aside)
    joins = graph.has_joins

    joining: dict[str, bool] = {}  # whether a node requires_all_predecessors, asked once

    def trigger_join(target: str) -> None:
        predecessors = graph.predecessors(target)
        got = arrivals.get(target, _NONE)
        needed = needs.get(target)
        if needed is None:
            needed = needs[target] = len(predecessors) - (START_NAME in predecessors)
        if len(got) < needed:
            return  # not all in yet: cheap before the full check, so a join is O(n)
        if not all(p == START_NAME or (p in got and p in done) for p in predecessors):
            return
        arrivals.pop(target, None)
        joined = {p: outputs.get(p) for p in predecessors}
        common = _common_branch([branches.get(p) for p in predecessors])
        triggers.setdefault(target, []).append(Trigger(input=joined, branch=common))

    starts = graph.start_names if first is None else first
    for name in starts:
        if graph.node(name).requires_all_predecessors:
            outputs[START_NAME] = node_input
            branches[START_NAME] = branch
            done.add(START_NAME)
            arrivals.setdefault(name, set()).add(START_NAME)
            trigger_join(name)
        else:
            triggers.setdefault(name, []).append(
                Trigger(input=node_input, sub_branch=len(starts) > 1)
            )

    def settle(name: str, node: LoopNode, outcome: NodeOutcome) -> BaseException | None:
        """Take in a finished run of ``node`` (``name``): trigger what follows; its error."""
        if outcome.error is not None:
            return outcome.error
        if outcome.interrupts:
            waiting[name] = outcome.interrupts
            return None
        if node.wait_for_output and outcome.output is None and outcome.route is None:
            return None
        done.add(name)
        if outcome.output is not None:
            outputs[name] = outcome.output
        else:
            outputs.pop(name, None)
        branches[name] = outcome.branch
        targets = graph.next_nodes(name, outcome.route)
        for target in targets:
            # (Asked once per target and the arrivals' set made once: a join after a
            # fan-out of n nodes is reached n times.)
            join = joins and joining.get(target)
            if join is None:
                join = joining[target] = graph.node(target).requires_all_predecessors
            if join:
                got = arrivals.get(target)
                if got is None:
                    got = arrivals[target] = set()
                got.add(name)
                trigger_join(target)
            else:
                triggers.setdefault(target, []).append(
                    Trigger(
                        input=outcome.output, sub_branch=len(targets) > 1, branch=outcome.branch
                    )
                )
        return None

    try:
        while True:
            if not pending and len(triggers) == 1:
                # One node to run and none running (a chain): it runs in this task when it
                # may (runs_inline), without a task of its own to start and wait for.
                name = next(iter(triggers))
                node = graph.node(name)
                if name not in waiting and node.runs_inline:
                    queued = triggers[name]
                    trigger = queued.pop(0)
                    if not queued:
                        del triggers[name]
                    _, run = start(node, trigger, name in terminal)
                    error = settle(name, node, await run)
                    if error is not None:
                        raise error
                    continue
            for name in list(triggers):
                if name in pending or name in waiting:
                    continue
                if limit and len(pending) >= limit:
                    break
                queued = triggers[name]
                trigger = queued.pop(0)
                if not queued:
                    del triggers[name]
                label, run = start(graph.node(name), trigger, name in terminal)
                pending[name] = asyncio.create_task(run, name=label)
            if not pending:
                break
            finished, _ = await asyncio.wait(pending.values(), return_when=asyncio.FIRST_COMPLETED)
            failure: BaseException | None = None
            for name in [n for n, t in pending.items() if t in finished]:
                error = settle(name, graph.node(name), pending.pop(name).result())
                failure = failure or error
            if failure is not None:
                raise failure
    finally:
        for task in pending.values():
            task.cancel()
        if pending:
            await asyncio.gather(*pending.values(), return_exceptions=True)
    if waiting:
        raise NodeInterrupted([i for ids in waiting.values() for i in ids])
    return [outputs[name] for name in graph.nodes_order(terminal) if name in outputs]


ChainStep = Iterator["Event | AsyncGenerator[Event, None]"]
"""A chain step's run (:meth:`ChainPlace.step`): it yields an event to commit (an
:class:`~eventide.events.Event`), or a generator of events to forward (anything else: a
sub-agent's ``run_async``), in order, each committed before the step goes on."""

N = TypeVar("N")
N_contra = TypeVar("N_contra", contravariant=True)


class ChainGraph(Protocol[N]):
    """What the chain mode (:func:`run_chain`) reads of a chain graph (every node inline,
    one successor at most, no outputs, joins or waits: an agent shape's chain)."""

    @property
    def first(self) -> N:
        """``START``'s successor."""
        ...

    def next_node(self, node: N, route: Any) -> N | None:
        """The node a run of ``node`` that took ``route`` leads to (None: the chain ends)."""
        ...


class ChainPlace(Protocol[N_contra]):
    """What the chain mode asks of a chain graph's owner: what a run of each node is (its
    place), and which route it took."""

    @property
    def escalation(self) -> Callable[[Event], None] | None:
        """Called with each forwarded event that escalates (``actions.escalate``) once it is
        committed: the step may end the chain when its run ends (a loop's exit). None:
        nothing watches (a sequence)."""
        ...

    @property
    def route(self) -> Any:
        """The route the last step took (read once its run ended; see
        :meth:`ChainGraph.next_node`)."""
        ...

    def step(self, node: N_contra) -> ChainStep:
        """A run of ``node``: its events (see :data:`ChainStep`); sets :attr:`route`."""
        ...


async def run_chain(
    graph: ChainGraph[N], place: ChainPlace[N], first: N | None = None
) -> AsyncGenerator[Event, None]:
    """The loop's chain mode: the events of a chain graph's steps, one node after the other
    from ``START``'s successor (or from ``first``: a continuation), the next one the node
    the step's route leads to, until a route leads nowhere (the last step's, or a step's
    that ends the chain early). No output passes between steps.

    A generator, not a coroutine: a step's events reach the reader as through one
    generator around the step's own (``SequentialAgent``'s old ``run_chain``), not through a
    driver's signal dispatch and the awaits of a step coroutine and a loop coroutine (about
    250 bytecodes a step against 100 for one generator, benchmarks/README.md). What the
    general loop keeps to start concurrent runs and joins (triggers, arrivals, branches,
    :class:`NodeOutcome`, names) has nothing to hold here. Closed at a yield, it closes the
    step's generator in flight (as ``aclosing`` would); a step's exception propagates."""
    node: N | None = graph.first if first is None else first
    escalation = place.escalation
    while node is not None:
        for item in place.step(node):
            if type(item) is Event:  # noqa: E721 - exact: a step's own marker, not forwarded
                yield item
                continue
            # Not an Event: the generator to forward (no isinstance to narrow it: a
            # pydantic model's check goes through its ABC metaclass, every step).
            events: AsyncGenerator[Event, None] = item  # type: ignore[assignment]  # pyright: ignore[reportAssignmentType]
            try:
                async for event in events:
                    yield event
                    # The escalation test here, not in a callback per event: a call less
                    # per event of a loop, and a sequence reads no actions at all.
                    if escalation is not None and event.actions.escalate:
                        escalation(event)
            except BaseException:
                # Closed at a yield (or the callback raised): close the step's generator
                # now, as ``aclosing`` would. Not in a ``finally``: a generator that ended
                # (returned or raised) has nothing to close, and the call costs about 0.8k
                # instructions a step (a LoopAgent turn: 1,796k -> 1,789k).
                await events.aclose()
                raise
        node = graph.next_node(node, place.route)


def _common_branch(branches: list[str | None]) -> str | None:
    """The longest dot-separated prefix the branches share (None when none)."""
    split = [b.split(".") if b else [] for b in branches]
    if not split:
        return None
    common: list[str] = []
    for parts in zip(*split, strict=False):
        if len(set(parts)) != 1:
            break
        common.append(parts[0])
    return ".".join(common) or None
