"""The graph loop every workflow and workflow agent runs on (eventide/runtime/graph_loop.py)
and its driver (eventide/runtime/drive.py): a run's place comes from its graph's owner,
and escalation / ``end_invocation`` are graph exits (issue 31, section 15.1 steps 1 and 3);
the chain mode an agent shape's chain runs in (``run_chain``).

The graphs here are bare: nodes named by the test, runs that record what ran, no workflow
and no agent, so the loop's own rules are what is checked."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator, Coroutine, Iterator
from typing import Any

import pytest

from eventide import Event, EventActions
from eventide.runtime.commit_channel import CommitChannel, Done
from eventide.runtime.drive import commit, drive
from eventide.runtime.graph_loop import NodeOutcome, Trigger, run_chain, run_graph


class _Node:
    def __init__(self, name: str, *, inline: bool) -> None:
        self.name = name
        self.runs_inline = inline
        self.requires_all_predecessors = False
        self.wait_for_output = False


class _Graph:
    """``edges``: name -> its successors; ``starts``: START's successors."""

    def __init__(self, edges: dict[str, list[str]], starts: list[str], *, inline: bool) -> None:
        self.edges = edges
        self.start_names = starts
        self.nodes = {name: _Node(name, inline=inline) for name in edges}
        self.terminal_node_names = {name for name, after in edges.items() if not after}
        self.has_joins = False

    def node(self, name: str) -> _Node:
        return self.nodes[name]

    def predecessors(self, name: str) -> tuple[str, ...]:
        return ()

    def next_nodes(self, name: str, route: Any) -> list[str]:
        return self.edges[name]

    def nodes_order(self, names: set[str]) -> list[str]:
        return [name for name in self.edges if name in names]


def _said(name: str) -> Event:
    return Event(author=name)


async def _events(*names: str) -> AsyncGenerator[Event, None]:
    for name in names:
        yield _said(name)


async def test_a_committed_event_reaches_the_reader_before_the_coroutine_goes_on() -> None:
    """``commit``: the driven coroutine's own event is yielded to the reader, and the
    coroutine resumes only when the reader asks for more (once it is committed)."""
    went_on: list[str] = []

    async def steps() -> None:
        await commit(_said("marker"))
        went_on.append("after")

    events = drive(steps(), None, isolated=False)
    assert (await anext(events)).author == "marker"
    assert went_on == []
    assert [event.author async for event in events] == []
    assert went_on == ["after"]


async def test_exits_ends_the_run_after_the_committed_event_and_cancels_the_rest() -> None:
    """A fan-out's exit: the event that exits is committed (yielded), nothing after it is,
    and the producers still running are cancelled."""
    channel = CommitChannel(asyncio.get_running_loop())
    cancelled: list[str] = []

    async def producer(name: str, count: int) -> NodeOutcome:
        try:
            for i in range(count):
                await channel.commit(Event(author=name, branch=str(i)))
            await asyncio.sleep(10)
        except asyncio.CancelledError:
            cancelled.append(name)
            raise
        return NodeOutcome()

    def start(node: Any, trigger: Trigger, terminal: bool) -> tuple[str, Coroutine[Any, Any, Any]]:
        return node.name, producer(node.name, 3)

    graph = _Graph({"x": [], "y": []}, ["x", "y"], inline=False)
    seen: list[tuple[str, str | None]] = []
    run = run_graph(graph, start, None, branch=None)
    exits = lambda event: event.author == "y" and event.branch == "1"  # noqa: E731
    async for event in drive(run, channel, isolated=False, exits=exits):
        seen.append((event.author, event.branch))
    assert seen[-1] == ("y", "1")
    assert ("y", "2") not in seen
    assert sorted(cancelled) == ["x", "y"]


async def test_a_producers_error_is_raised_where_it_stands_among_the_events() -> None:
    """A producer that hands its error over on the channel (a fan-out's branch: ``Done``)
    and ends: the events queued before it are committed, then its error is raised (a
    ``ParallelAgent``'s order), though its task itself finished cleanly."""
    channel = CommitChannel(asyncio.get_running_loop())

    async def first() -> NodeOutcome:
        channel.put((Event(author="first"), asyncio.get_running_loop().create_future()))
        await asyncio.sleep(10)
        return NodeOutcome()

    async def failing() -> NodeOutcome:
        channel.put(Done(ValueError("branch failed")))
        return NodeOutcome()  # its task ends at once: the error is on the channel

    def start(node: Any, trigger: Trigger, terminal: bool) -> tuple[str, Coroutine[Any, Any, Any]]:
        return node.name, first() if node.name == "first" else failing()

    graph = _Graph({"first": [], "failing": []}, ["first", "failing"], inline=False)
    seen: list[str] = []
    with pytest.raises(ValueError, match="branch failed"):
        run = run_graph(graph, start, None, branch=None)
        async for event in drive(run, channel, isolated=False):
            seen.append(event.author)
    assert seen == ["first"]


async def test_a_chain_on_the_general_loop_passes_outputs() -> None:
    """A workflow's chain (the general loop): each node gets its predecessor's output, the
    last node's output is the graph's; ``first`` starts there."""
    inputs: list[tuple[str, Any]] = []

    async def step(name: str, node_input: Any) -> NodeOutcome:
        inputs.append((name, node_input))
        return NodeOutcome(output=f"{name}-out")

    def start(node: Any, trigger: Trigger, terminal: bool) -> tuple[str, Coroutine[Any, Any, Any]]:
        return node.name, step(node.name, trigger.input)

    graph = _Graph({"a": ["b"], "b": ["c"], "c": []}, ["a"], inline=True)
    assert await run_graph(graph, start, "in", branch=None) == ["c-out"]
    assert inputs == [("a", "in"), ("b", "a-out"), ("c", "b-out")]
    inputs.clear()
    assert await run_graph(graph, start, "in", branch=None, first=["c"]) == ["c-out"]
    assert inputs == [("c", "in")]


class _Link:
    """A chain's node for :func:`run_chain`: its name and the node after it."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.next: _Link | None = None


class _Chain:
    """A chain graph of ``names`` in order; a route other than None names the node it leads
    to (an unknown name leads nowhere: the chain ends)."""

    def __init__(self, *names: str) -> None:
        self.nodes = {name: _Link(name) for name in names}
        links = list(self.nodes.values())
        for link, after in zip(links, links[1:], strict=False):
            link.next = after
        self.first = links[0]

    def next_node(self, node: _Link, route: Any) -> _Link | None:
        return node.next if route is None else self.nodes.get(route)


class _Place:
    """Each step commits its marker, then forwards ``events(name)``; ``routes``: the route
    each run of a node takes, in order (None once they run out)."""

    def __init__(
        self,
        routes: dict[str, list[Any]] | None = None,
        events: Any = None,
        escalation: Any = None,
    ) -> None:
        self.routes = routes or {}
        self.events = events or (lambda name: _events(f"{name}-1", f"{name}-2"))
        self.escalation = escalation
        self.route: Any = None
        self.ended: list[str] = []

    def step(self, node: _Link) -> Iterator[Event | AsyncGenerator[Event, None]]:
        yield _said(f"{node.name}-marker")
        yield self.events(node.name)
        self.ended.append(node.name)
        routes = self.routes.get(node.name)
        self.route = routes.pop(0) if routes else None


async def test_the_chain_mode_runs_each_steps_events_and_takes_its_route() -> None:
    """:func:`run_chain`: a step's own events and its forwarded generator's reach the
    reader in order; the next step is the one its route leads to (None: the node after
    it; back to an earlier node: a loop's round); a route that leads nowhere ends the
    chain; ``first`` starts it there."""
    graph = _Chain("a", "b", "c")
    place = _Place({"b": ["a", None], "c": ["nowhere"]})
    seen = [event.author async for event in run_chain(graph, place)]
    steps = ["a", "b", "a", "b", "c"]
    assert seen == [f"{n}-{part}" for n in steps for part in ("marker", "1", "2")]
    assert place.ended == steps
    place = _Place({"b": ["nowhere"]})
    seen = [event.author async for event in run_chain(graph, place, graph.nodes["b"])]
    assert seen == ["b-marker", "b-1", "b-2"]


async def test_the_chain_mode_hands_an_escalation_to_its_place_after_its_commit() -> None:
    """``place.escalation``: called with each forwarded event that escalates, once the
    reader has it (committed), and with no other event."""
    seen: list[Event] = []
    escalations: list[tuple[str | None, bool]] = []

    def events(name: str) -> AsyncGenerator[Event, None]:
        async def gen() -> AsyncGenerator[Event, None]:
            yield Event(author=f"{name}-1")
            yield Event(author=f"{name}-up", actions=EventActions(escalate=True))

        return gen()

    def escalation(event: Event) -> None:
        escalations.append((event.author, seen[-1] is event))

    place = _Place(events=events, escalation=escalation)
    async for event in run_chain(_Chain("a", "b"), place):
        seen.append(event)
    assert escalations == [("a-up", True), ("b-up", True)]
    assert [event.author for event in seen][:3] == ["a-marker", "a-1", "a-up"]


async def test_a_steps_error_propagates_and_no_step_runs_after_it() -> None:
    def events(name: str) -> AsyncGenerator[Event, None]:
        async def failing() -> AsyncGenerator[Event, None]:
            yield _said(f"{name}-1")
            if name == "b":
                raise ValueError("boom")

        return failing()

    place = _Place(events=events)
    seen: list[str] = []
    with pytest.raises(ValueError, match="boom"):
        async for event in run_chain(_Chain("a", "b", "c"), place):
            seen.append(event.author or "")
    assert seen == ["a-marker", "a-1", "b-marker", "b-1"]
    assert place.ended == ["a"]  # b's step did not go on after its events


async def test_closing_the_reader_closes_the_steps_generator() -> None:
    """Closed at a yield, the chain closes the generator it forwards (as ``aclosing``
    did), before its own close returns; the step does not go on."""
    closed: list[str] = []

    def events(name: str) -> AsyncGenerator[Event, None]:
        async def endless() -> AsyncGenerator[Event, None]:
            try:
                while True:
                    yield _said(name)
            finally:
                closed.append(name)

        return endless()

    place = _Place(events=events)
    chain = run_chain(_Chain("a", "b"), place)
    assert [(await anext(chain)).author for _ in range(3)] == ["a-marker", "a", "a"]
    assert closed == []
    await chain.aclose()
    assert closed == ["a"]
    assert place.ended == []
