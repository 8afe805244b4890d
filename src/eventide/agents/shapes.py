"""The workflow agents as graph shapes: ``SequentialAgent`` a chain, ``LoopAgent`` the chain
with a route back from its last step to its first, ``ParallelAgent`` a fan-out; each run on
the graph loop every ``Workflow`` runs on (:func:`~eventide.runtime.graph_loop.run_graph`,
driven by :func:`~eventide.runtime.drive.drive` in the reader's task). See
docs/architecture.md, section 15.1.

What a shape adds is its nodes' *place*: a graph node's place stamps its path on every
event; a shape's stamps nothing (each event is its sub-agent's, on the branch the agent rule
gives: a sequential step or a loop round opens none, a fan-out's branch is
``<path>.<sub-agent>``) and commits the shape's step marker in a resumable invocation
(``{"current_sub_agent": name}`` before each step, a loop's with ``"times_looped"``, a
fan-out's ``{}`` before it fans out). Nodes are named by their index, so two sub-agents of
one name are two steps.

- **Chain (sequence, loop).** A lone step runs in the graph loop's task and hands its
  sub-agent's generator to the driver (:func:`~eventide.runtime.drive.forward`): its events
  reach the Runner as through one generator around it, each committed before the step goes
  on. Resumed (:class:`~eventide.runtime.replay.Continuation`), the graph starts at the step
  in flight, which continues from its own events. A step exits the graph when it set
  ``end_invocation``, or when an escalation reaching the loop (``ends_on``) was committed
  during it: its own turn finishes first, then nothing more runs. When the chain ends after
  a step and its owner's end marker waits for an after-agent callback (``ends_late``), a
  step that commits no end marker of its own (a custom agent) gets one: a crash in that
  callback must not leave the step looking half-run.
- **Fan-out.** Each branch runs in a node task and puts its events on the commit channel
  (each committed before the branch goes on, never waiting for its siblings); the driver
  raises a branch's error where it stands among its siblings' events, and ends the run
  after a committed escalation that reaches the fan-out (its siblings cancelled at their
  next await).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator, Callable, Sequence
from contextlib import aclosing
from functools import lru_cache
from typing import Any

from eventide.agents.base_agent import BaseAgent
from eventide.contexts import InvocationContext
from eventide.events import Event
from eventide.runtime.commit_channel import CommitChannel, Done
from eventide.runtime.drive import commit, drive, forward
from eventide.runtime.graph_loop import NodeOutcome, Trigger, run_graph
from eventide.runtime.replay import Continuation, end_marker, step_marker

__all__ = ["chain_shape", "fan_out_shape"]

_NO_NAMES: set[str] = set()
_AGAIN = "again"  # the loop's route from its last step back to its first
_NEXT = NodeOutcome()
_ROUND_AGAIN = NodeOutcome(route=_AGAIN)
_EXIT = NodeOutcome(exits=True)


class _Node:
    """A shape's node: one sub-agent, by its index."""

    __slots__ = ("after", "index", "name", "runs_inline")

    @property
    def requires_all_predecessors(self) -> bool:
        return False  # no joins

    @property
    def wait_for_output(self) -> bool:
        return False

    def __init__(self, index: int, after: list[str], *, inline: bool) -> None:
        self.name = str(index)
        self.index = index
        self.after = after  # the next step's name (a chain's), none after the last
        self.runs_inline = inline


class _ShapeGraph:
    """The graph of a chain of ``count`` steps (a loop's route back included: taken only
    when its last step says so) or of a fan-out of ``count`` branches. It depends on nothing
    but these two, so one graph serves every agent of the shape (:func:`_shape_graph`)."""

    __slots__ = ("_nodes", "is_chain", "start_names")

    @property
    def terminal_node_names(self) -> set[str]:
        return _NO_NAMES  # no output passes between steps

    @property
    def has_joins(self) -> bool:
        return False

    def __init__(self, count: int, *, fan_out: bool) -> None:
        last = count - 1
        self._nodes = {
            str(i): _Node(i, [] if fan_out or i == last else [str(i + 1)], inline=not fan_out)
            for i in range(count)
        }
        self.start_names = list(self._nodes) if fan_out else ["0"]
        self.is_chain = not fan_out

    def node(self, name: str) -> _Node:
        return self._nodes[name]

    def predecessors(self, name: str) -> tuple[str, ...]:
        return ()  # no joins

    def next_nodes(self, name: str, route: Any) -> list[str]:
        if route is _AGAIN:
            return ["0"]
        return self._nodes[name].after

    def nodes_order(self, names: set[str]) -> list[str]:
        return []


@lru_cache(maxsize=256)
def _shape_graph(count: int, *, fan_out: bool) -> _ShapeGraph:
    return _ShapeGraph(count, fan_out=fan_out)


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
    graph = _shape_graph(len(steps), fan_out=False)
    first = None if where.start == 0 else [str(where.start)]  # the step in flight
    run = run_graph(graph, chain.start, None, branch=ctx.branch, first=first)
    return drive(run, None, isolated=False)


class _Chain:
    """One run of a sequence or a loop: the place of its steps (see the module docstring)."""

    __slots__ = (
        "ctx",
        "ends_late",
        "ends_on",
        "escalated",
        "last",
        "owner",
        "rounds",
        "scope",
        "steps",
        "times_looped",
        "watch",
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
        self.rounds = rounds
        self.ends_on = ends_on
        self.ends_late = ends_late
        self.times_looped = int(where.state.get("times_looped", 0))
        self.scope = where.scope
        self.escalated = where.escalated
        self.last = len(steps) - 1
        self.watch = None if ends_on is None else self._watch

    def start(self, node: Any, trigger: Trigger, is_terminal: bool) -> tuple[str, Any]:
        return node.name, self._step(node.index)

    def _watch(self, event: Event) -> None:
        ends_on = self.ends_on
        if event.actions.escalate and ends_on is not None and ends_on(event.author):
            self.escalated = True

    async def _step(self, index: int) -> NodeOutcome:
        ctx, step = self.ctx, self.steps[index]
        ended = False  # the step's end marker is in the log already
        scope = self.scope
        if scope is not None:
            ended = self.ends_late and scope.progress(step.name, ctx.branch).ended
            ctx.resume, self.scope = scope, None  # the step in flight continues from its events
        elif ctx.resumable:
            state: dict[str, Any] = {"current_sub_agent": step.name}
            if self.ends_on is not None:
                state["times_looped"] = self.times_looped
            await commit(step_marker(self.owner, ctx, state))
        await forward(step.run_async(ctx), self.watch)
        ctx.resume = None  # the step took its copy of the scope; later steps run fresh
        if ctx.end_invocation:
            return _EXIT
        last = index == self.last
        if self.ends_late:
            await self._mark_end(step, ended, last)
        if self.escalated:
            return _EXIT
        if not last:
            return _NEXT
        self.times_looped += 1
        rounds = self.rounds
        if self.ends_on is not None and (rounds is None or self.times_looped < rounds):
            return _ROUND_AGAIN
        return _NEXT

    async def _mark_end(self, step: BaseAgent, ended: bool, last: bool) -> None:
        if (
            (self.escalated or (last and self.times_looped + 1 == self.rounds))
            and not ended
            and not step._marks_its_end()  # pyright: ignore[reportPrivateUsage]
        ):
            # Nothing else in the log would say this step finished before the callback.
            await commit(end_marker(step.name, self.ctx, None, top=False))


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
        graph = _shape_graph(len(self.branches), fan_out=True)
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
