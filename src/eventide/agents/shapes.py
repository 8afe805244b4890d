"""The workflow agents as graph shapes: ``SequentialAgent`` a chain, ``LoopAgent`` the chain
with a route back from its last step to its first, ``ParallelAgent`` a fan-out; each run on
the graph loop every ``Workflow`` runs on (``runtime/graph_loop.py``: a chain in its chain
mode, :func:`~eventide.runtime.graph_loop.run_chain`, a generator; a fan-out on the general
loop, :func:`~eventide.runtime.graph_loop.run_graph`, driven by
:func:`~eventide.runtime.drive.drive` in the reader's task). See docs/architecture.md,
section 15.1.

What a shape adds is its nodes' *place*: a graph node's place stamps its path on every
event; a shape's stamps nothing (each event is its sub-agent's, on the branch the agent rule
gives: a sequential step or a loop round opens none, a fan-out's branch is
``<path>.<sub-agent>``) and commits the shape's step marker in a resumable invocation
(``{"current_sub_agent": name}`` before each step, a loop's with ``"times_looped"``, a
fan-out's ``{}`` before it fans out). A node stands for a sub-agent by its index, so two of
one name are two steps.

- **Chain (sequence, loop).** The loop's chain mode
  (:func:`~eventide.runtime.graph_loop.run_chain`) walks the chain graph; each step is a
  run of :meth:`_Chain.step`, a plain generator that yields the step's marker and then its
  sub-agent's generator, which the chain mode forwards: its events reach the Runner as
  through one generator around it, each committed before the step goes on. Resumed
  (:class:`~eventide.runtime.replay.Continuation`), the chain starts at the step in flight,
  which continues from its own events. A step ends the chain (a route no edge takes) when
  it set ``end_invocation``, or when an escalation reaching the loop (``ends_on``) was
  committed during it: its own turn finishes first, then nothing more runs. When the chain
  ends after a step and its owner's end marker waits for an after-agent callback
  (``ends_late``), a step that commits no end marker of its own (a custom agent) gets one:
  a crash in that callback must not leave the step looking half-run.
- **Fan-out.** Each branch runs in a node task and puts its events on the commit channel
  (each committed before the branch goes on, never waiting for its siblings); the driver
  raises a branch's error where it stands among its siblings' events, and ends the run
  after a committed escalation that reaches the fan-out (its siblings cancelled at their
  next await).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator, Callable, Iterator, Sequence
from contextlib import aclosing
from functools import lru_cache
from typing import Any

from eventide.agents.base_agent import BaseAgent
from eventide.contexts import InvocationContext
from eventide.events import Event
from eventide.runtime.commit_channel import CommitChannel, Done
from eventide.runtime.drive import commit, drive
from eventide.runtime.graph_loop import NodeOutcome, Trigger, run_chain, run_graph
from eventide.runtime.replay import Continuation, end_marker, step_marker

__all__ = ["chain_shape", "fan_out_shape"]

_NO_NAMES: set[str] = set()
_AGAIN = "again"  # the loop's route from its last step back to its first
_EXIT = "exit"  # a step's route that ends the chain: no edge takes it
_NEXT = NodeOutcome()


class _Step:
    """A chain's node: one sub-agent, by its index; ``next``: the node after it (None
    after the last)."""

    __slots__ = ("index", "next")

    def __init__(self, index: int) -> None:
        self.index = index
        self.next: _Step | None = None


class _ChainGraph:
    """The graph of a chain of ``count`` steps, a loop's route back from its last step to
    its first included (taken only when that step's route says so), for the loop's chain
    mode (:class:`~eventide.runtime.graph_loop.ChainGraph`). It depends on nothing but
    ``count``, so one graph serves every chain of that length (:func:`_chain_graph`)."""

    __slots__ = ("first", "nodes")

    def __init__(self, count: int) -> None:
        self.nodes = [_Step(i) for i in range(count)]
        for step, after in zip(self.nodes, self.nodes[1:], strict=False):
            step.next = after
        self.first = self.nodes[0]

    def next_node(self, node: _Step, route: Any) -> _Step | None:
        if route is None:
            return node.next
        return self.first if route is _AGAIN else None  # _EXIT: no edge takes it


@lru_cache(maxsize=256)
def _chain_graph(count: int) -> _ChainGraph:
    return _ChainGraph(count)


class _Branch:
    """A fan-out's node: one sub-agent, by its index, on a branch of its own."""

    __slots__ = ("index", "name")

    @property
    def requires_all_predecessors(self) -> bool:
        return False  # no joins

    @property
    def wait_for_output(self) -> bool:
        return False

    @property
    def runs_inline(self) -> bool:
        return False  # each in a node task

    def __init__(self, index: int) -> None:
        self.name = str(index)
        self.index = index


class _FanOutGraph:
    """The graph of a fan-out of ``count`` branches, for the general loop
    (:class:`~eventide.runtime.graph_loop.LoopGraph`): ``START`` leads to every branch,
    and no branch to anything. One graph serves every fan-out of that width
    (:func:`_fan_out_graph`)."""

    __slots__ = ("_nodes", "start_names")

    @property
    def terminal_node_names(self) -> set[str]:
        return _NO_NAMES  # no output passes between steps

    @property
    def has_joins(self) -> bool:
        return False

    def __init__(self, count: int) -> None:
        self._nodes = {str(i): _Branch(i) for i in range(count)}
        self.start_names = list(self._nodes)

    def node(self, name: str) -> _Branch:
        return self._nodes[name]

    def predecessors(self, name: str) -> tuple[str, ...]:
        return ()  # no joins

    def next_nodes(self, name: str, route: Any) -> list[str]:
        return []

    def nodes_order(self, names: set[str]) -> list[str]:
        return []


@lru_cache(maxsize=256)
def _fan_out_graph(count: int) -> _FanOutGraph:
    return _FanOutGraph(count)


def chain_shape(
    owner: str,
    steps: Sequence[BaseAgent],
    ctx: InvocationContext,
    where: Continuation,
    *,
    rounds: int | None = 1,
    ends_on: Callable[[str], bool] | None = None,
    ends_late: bool = False,
) -> AsyncGenerator[Event, None]:
    """The events of ``steps`` run for ``owner`` (the chain agent's name) from ``where``.

    Args:
        rounds: 1 for a sequence; a loop's ``max_iterations`` (None: until an escalation).
        ends_on: a loop's escalation rule: whether an ``escalate`` event by ``author`` ends
            the chain, once that author's step has finished. None: a sequence, which does
            not watch escalations and writes no ``times_looped``.
        ends_late: in a resumable invocation, an after-agent callback runs between the
            chain's last step and the owner's end marker.
    """
    chain = _Chain(owner, steps, ctx, where, rounds, ends_on, ends_late)
    if not steps or (rounds is not None and chain.times_looped >= rounds):
        return _nothing()
    graph = _chain_graph(len(steps))
    return run_chain(graph, chain, graph.nodes[where.start])


class _Chain:
    """One run of a sequence or a loop: the place of its steps (see the module docstring),
    for the loop's chain mode (:func:`~eventide.runtime.graph_loop.run_chain`)."""

    __slots__ = (
        "ctx",
        "ends_late",
        "ends_on",
        "escalated",
        "marked",
        "owner",
        "rounds",
        "route",
        "scope",
        "steps",
        "times_looped",
    )

    def __init__(
        self,
        owner: str,
        steps: Sequence[BaseAgent],
        ctx: InvocationContext,
        where: Continuation,
        rounds: int | None,
        ends_on: Callable[[str], bool] | None,
        ends_late: bool,
    ) -> None:
        self.owner = owner
        self.steps = steps
        self.ctx = ctx
        # Read once, not per step: set when the invocation starts, never changed after.
        self.marked = ctx.resumable
        self.rounds = rounds
        self.ends_on = ends_on
        self.ends_late = ends_late
        self.times_looped = int(where.state.get("times_looped", 0))
        self.scope = where.scope
        self.escalated = where.escalated
        self.route: Any = None

    @property
    def escalation(self) -> Callable[[Event], None] | None:
        """A loop's escalation rule, for the chain mode to call (a sequence has none).
        Made when read (once a run), not kept: a bound method in a slot of its own object
        is a reference cycle, which left every run's context, session and events to the
        collector (about 13 collections in 30 resumable loop turns instead of 2, +5% a
        turn)."""
        return None if self.ends_on is None else self._escalation

    def _escalation(self, event: Event) -> None:
        """A loop's: an escalation reaching it ends it once its author's step ends."""
        ends_on = self.ends_on
        if ends_on is not None and ends_on(event.author):
            self.escalated = True

    def step(self, node: _Step) -> Iterator[Event | AsyncGenerator[Event, None]]:
        """The run of step ``node``: its marker, its sub-agent's events (forwarded by the
        chain mode), the end marker it may need; its route, for the chain mode to take."""
        ctx, step = self.ctx, self.steps[node.index]
        scope = self.scope
        ended = False  # the step's end marker is in the log already
        if scope is not None:
            ended = self.ends_late and scope.progress(step.name, ctx.branch).ended
            ctx.resume, self.scope = scope, None  # the step in flight continues from its events
        elif self.marked:
            state: dict[str, Any] = {"current_sub_agent": step.name}
            if self.ends_on is not None:
                state["times_looped"] = self.times_looped
            yield step_marker(self.owner, ctx, state)
        yield step.run_async(ctx)
        ctx.resume = None  # the step took its copy of the scope; later steps run fresh
        if ctx.end_invocation:
            self.route = _EXIT
            return
        if self.ends_late and self._ends_unmarked(step, ended, node.next is None):
            # Nothing else in the log would say this step finished before the callback.
            yield end_marker(step.name, ctx, None, top=False)
        if self.escalated:
            self.route = _EXIT
        elif node.next is not None:
            self.route = None
        else:  # the round's last step
            self.times_looped += 1
            rounds = self.rounds
            again = self.ends_on is not None and (rounds is None or self.times_looped < rounds)
            self.route = _AGAIN if again else None

    def _ends_unmarked(self, step: BaseAgent, ended: bool, last: bool) -> bool:
        """Whether the chain ends after ``step`` with no end marker of the step's own."""
        return (
            (self.escalated or (last and self.times_looped + 1 == self.rounds))
            and not ended
            and not step._marks_its_end()  # pyright: ignore[reportPrivateUsage]
        )


def fan_out_shape(
    owner: str,
    branches: Sequence[tuple[BaseAgent, str]],
    ctx: InvocationContext,
    *,
    marked: bool,
    exits: Callable[[Event], bool],
) -> AsyncGenerator[Event, None]:
    """The events of ``branches`` (each a sub-agent and its branch) run concurrently for
    ``owner``; ``marked``: commit the fan-out's ``{}`` marker first; ``exits(event)``:
    whether a committed event ends the fan-out (an escalation reaching it)."""
    if not branches and not marked:
        return _nothing()
    fan = _FanOut(owner, branches, ctx, CommitChannel(asyncio.get_running_loop()))
    return drive(fan.run(marked), fan.channel, isolated=False, exits=exits)


class _FanOut:
    """One run of a fan-out: the place of its branches."""

    __slots__ = ("branches", "channel", "contexts", "ctx", "owner")

    def __init__(
        self,
        owner: str,
        branches: Sequence[tuple[BaseAgent, str]],
        ctx: InvocationContext,
        channel: CommitChannel,
    ) -> None:
        self.owner = owner
        self.branches = branches
        self.ctx = ctx
        self.channel = channel
        self.contexts: list[InvocationContext] = []

    async def run(self, marked: bool) -> None:
        ctx = self.ctx
        if marked:
            await commit(step_marker(self.owner, ctx, {}))
        # Every branch's copy of the context inherits the scope (a resumed branch continues
        # from its own events), then the fan-out's own is cleared.
        self.contexts = [ctx.for_agent(agent, branch=branch) for agent, branch in self.branches]
        ctx.resume = None
        graph = _fan_out_graph(len(self.branches))
        await run_graph(graph, self.start, None, branch=ctx.branch)

    def start(self, node: Any, trigger: Trigger, is_terminal: bool) -> tuple[str, Any]:
        index: int = node.index
        branch = self.contexts[index]
        return f"eventide-branch-{branch.branch}", self._branch(self.branches[index][0], branch)

    async def _branch(self, agent: BaseAgent, ctx: InvocationContext) -> NodeOutcome:
        channel = self.channel
        try:
            async with aclosing(agent.run_async(ctx)) as events:
                async for event in events:
                    if event.branch is None:
                        event.branch = ctx.branch
                    await channel.commit(event)
        except asyncio.CancelledError:
            raise
        except BaseException as error:  # noqa: BLE001 - raised by the driver, in order
            channel.put(Done(error))
        return _NEXT


async def _nothing() -> AsyncGenerator[Event, None]:
    return
    yield  # pragma: no cover - makes this an async generator
