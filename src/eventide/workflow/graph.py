"""The workflow graph: ``Edge``, ``Graph``, and the edge forms google-adk accepts.

``Workflow(edges=[...])`` takes a list of items, each an :class:`Edge` or a tuple read as a
chain ``(a, b, c)`` = a->b->c, where an element may be a node-like (a node, function,
agent, tool or ``"START"``), a tuple of them (fan-out / fan-in: every pair is joined), or a
dict ``{route: node or tuple}`` (routed edges from the element before it).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Iterator
from typing import Any, TypeAlias

from pydantic import BaseModel, ConfigDict, Field

from eventide.errors import GraphValidationError, WorkflowConfigurationError
from eventide.events import RouteValue
from eventide.workflow.base_node import START, BaseNode
from eventide.workflow.node_builder import build_node, is_node_like

__all__ = ["DEFAULT_ROUTE", "Edge", "EdgeItem", "Graph", "RouteValue"]

_log = logging.getLogger("eventide.workflow")

DEFAULT_ROUTE = "__DEFAULT__"
"""The route of an edge followed when none of its node's other routed edges matched."""


class Edge(BaseModel):
    """An edge ``from_node -> to_node``, followed always (``route`` None) or when the
    node emits one of its routes."""

    model_config = ConfigDict(arbitrary_types_allowed=True, extra="forbid")

    from_node: Any
    to_node: Any
    route: RouteValue | list[RouteValue] | None = None

    def routes(self) -> set[RouteValue | None]:
        """The edge's routes as a set (``{None}`` for an unconditional edge)."""
        if self.route is None:
            return {None}
        return set(self.route) if isinstance(self.route, list) else {self.route}


EdgeItem: TypeAlias = Edge | tuple[Any, ...]
"""An item of ``Workflow(edges=[...])``: an ``Edge``, or a tuple chain."""


class Graph(BaseModel):
    """The nodes (in order of first appearance) and edges of a workflow."""

    model_config = ConfigDict(arbitrary_types_allowed=True, extra="forbid")

    nodes: list[Any] = Field(default_factory=list)
    edges: list[Edge] = Field(default_factory=list)

    def model_post_init(self, context: Any, /) -> None:
        if self.edges and not self.nodes:
            seen: dict[int, BaseNode] = {}
            for edge in self.edges:
                for node in (edge.from_node, edge.to_node):
                    seen.setdefault(id(node), node)
            self.nodes = list(seen.values())
        self._by_name: dict[str, BaseNode] = {n.name: n for n in self.nodes}
        self._outgoing: dict[str, list[Edge]] = {}
        self._incoming: dict[str, list[str]] = {}
        self._predecessors: dict[str, tuple[str, ...]] = {}
        for edge in self.edges:
            self._outgoing.setdefault(edge.from_node.name, []).append(edge)
            self._incoming.setdefault(edge.to_node.name, []).append(edge.from_node.name)
        # The targets of a node whose edges are all unconditional: next_nodes' answer
        # whatever the route, without reading three fields of each edge per node run.
        self._plain: dict[str, tuple[str, ...]] = {
            name: tuple(e.to_node.name for e in edges)
            for name, edges in self._outgoing.items()
            if all(e.route is None for e in edges)
        }
        self._starts = [e.to_node.name for e in self.edges if e.from_node is START]
        self._joins = any(n.requires_all_predecessors for n in self.nodes)
        self._terminal = {
            n.name for n in self.nodes if n.name not in self._outgoing and n is not START
        }

    @classmethod
    def from_edge_items(cls, items: Iterable[EdgeItem]) -> Graph:
        """The graph of ``items`` (see the module's docstring), validated."""
        graph = cls(edges=parse_edge_items(items))
        graph.validate_graph()
        return graph

    @property
    def start_names(self) -> list[str]:
        """The nodes ``START`` has an edge to (once per edge): they get the input."""
        return self._starts

    @property
    def has_joins(self) -> bool:
        """Whether a node waits for all its predecessors (a ``JoinNode``)."""
        return self._joins

    @property
    def terminal_node_names(self) -> set[str]:
        """The nodes with no outgoing edge: their output is the workflow's."""
        return self._terminal

    def nodes_order(self, names: set[str]) -> list[str]:
        """``names`` in the order their nodes appear in the graph."""
        # (_by_name is in that order: one attribute read a run, not two a node.)
        return [name for name in self._by_name if name in names]

    def node(self, name: str) -> BaseNode:
        """The node called ``name``."""
        return self._by_name[name]

    def predecessors(self, name: str) -> tuple[str, ...]:
        """The names of the nodes with an edge to ``name`` (once each, in edge order)."""
        known = self._predecessors.get(name)
        if known is None:
            known = self._predecessors[name] = tuple(dict.fromkeys(self._incoming.get(name, ())))
        return known

    def next_nodes(self, name: str, route: RouteValue | list[RouteValue] | None) -> list[str]:
        """The nodes to run after ``name`` finished having emitted ``route`` (or None).

        Unconditional edges are always followed; routed edges when ``route`` (or one of a
        list of routes) is among theirs; ``DEFAULT_ROUTE`` edges when no routed edge
        matched.
        """
        plain = self._plain.get(name)
        if plain is not None:
            return [*plain]
        chosen: list[str] = []
        defaults: list[str] = []
        matched = False
        routed = False
        wanted: set[RouteValue | None] = set(route) if isinstance(route, list) else {route}
        for edge in self._outgoing.get(name, ()):
            if edge.route is None:
                chosen.append(edge.to_node.name)
                continue
            routed = True
            if edge.route == DEFAULT_ROUTE:
                defaults.append(edge.to_node.name)
            elif route is not None and not wanted.isdisjoint(edge.routes()):
                chosen.append(edge.to_node.name)
                matched = True
        if not matched:
            chosen.extend(defaults)
        if routed and not chosen:
            _log.warning(
                "Node %r emitted route %r, which none of its routed edges takes: this "
                "branch of the workflow ends here.",
                name,
                route,
            )
        return chosen

    def validate_graph(self) -> None:
        """Check the graph can run.

        Raises:
            GraphValidationError: two nodes share a name, ``START`` is missing or has an
                incoming or routed edge, a node is unreachable from ``START``, an edge is
                repeated, ``DEFAULT_ROUTE`` is listed with other routes, or a cycle has no
                routed edge (it would never end).
        """
        names = [n.name for n in self.nodes]
        duplicates = sorted({n for n in names if names.count(n) > 1})
        if duplicates:
            raise GraphValidationError(
                f"Graph validation failed. Duplicate node names found: {duplicates}. Reuse "
                "the same node object to refer to one node, or give distinct nodes distinct "
                "names."
            )
        if START.name not in names:
            raise GraphValidationError(
                "Graph validation failed. START node not found: begin one edge chain with "
                'START (or "START").'
            )
        seen: dict[tuple[str, str], set[RouteValue | None]] = {}
        for edge in self.edges:
            source, target = edge.from_node.name, edge.to_node.name
            if target == START.name:
                raise GraphValidationError(
                    "Graph validation failed. START node must not have incoming edges."
                )
            if source == START.name and edge.route is not None:
                raise GraphValidationError(
                    f"Graph validation failed. Edges from START must not have routes (edge "
                    f"to {target} has route {edge.route!r})."
                )
            if isinstance(edge.route, list) and DEFAULT_ROUTE in edge.route:
                raise GraphValidationError(
                    f"Graph validation failed. DEFAULT_ROUTE cannot be combined with other "
                    f"routes in a list (edge {source} -> {target}): give it its own edge."
                )
            routes = edge.routes()
            earlier = seen.setdefault((source, target), set())
            if earlier and (None in earlier or None in routes or not earlier.isdisjoint(routes)):
                raise GraphValidationError(
                    f"Graph validation failed. Duplicate edge found: from={source}, to={target}"
                )
            earlier.update(routes)
        reachable: set[str] = set()
        stack = [START.name]
        while stack:
            name = stack.pop()
            if name not in reachable:
                reachable.add(name)
                stack.extend(e.to_node.name for e in self._outgoing.get(name, ()))
        unreachable = sorted(set(names) - reachable)
        if unreachable:
            raise GraphValidationError(
                "Graph validation failed. The following nodes are unreachable from START: "
                f"{unreachable}"
            )
        self._check_unconditional_cycles()

    def _check_unconditional_cycles(self) -> None:
        """Reject a cycle made only of unrouted edges (it would loop forever).

        An iterative depth-first search with the current path kept as a list and a set, so
        a chain of thousands of nodes costs linear time and no recursion.
        """
        done: set[str] = set()
        for root in self.nodes:
            if root.name in done:
                continue
            path: list[str] = [root.name]
            on_path: set[str] = {root.name}
            pending = [self._unconditional_targets(root.name)]
            while pending:
                target = next(pending[-1], None)
                if target is None:
                    pending.pop()
                    done.add(path[-1])
                    on_path.discard(path.pop())
                elif target in on_path:
                    cycle = [*path[path.index(target) :], target]
                    raise GraphValidationError(
                        "Graph validation failed. Unconditional cycle detected: "
                        f"{' -> '.join(cycle)}. Cycles must include at least one routed edge "
                        "to avoid infinite loops."
                    )
                elif target not in done:
                    path.append(target)
                    on_path.add(target)
                    pending.append(self._unconditional_targets(target))

    def _unconditional_targets(self, name: str) -> Iterator[str]:
        return (e.to_node.name for e in self._outgoing.get(name, ()) if e.route is None)


# --- edge items -> edges ---


def parse_edge_items(items: Iterable[EdgeItem]) -> list[Edge]:
    """The edges the items stand for (see the module's docstring)."""
    built: dict[int, BaseNode] = {}

    def node_of(node_like: Any) -> BaseNode:
        if isinstance(node_like, str) and node_like == "START":
            return START
        known = built.get(id(node_like))
        if known is None:
            known = built[id(node_like)] = build_node(node_like)
        return known

    edges: list[Edge] = []
    for item in items:
        if isinstance(item, Edge):
            edges.append(
                Edge(
                    from_node=node_of(item.from_node),
                    to_node=node_of(item.to_node),
                    route=item.route,
                )
            )
        elif isinstance(item, tuple):
            chain: tuple[Any, ...] = item
            for source, target in zip(chain, chain[1:], strict=False):
                edges.extend(_link(source, target, node_of))
        else:
            raise WorkflowConfigurationError(
                f"Invalid edge item {item!r} ({type(item).__name__}): give an Edge or a tuple "
                "chain such as ('START', first_node, second_node)."
            )
    return edges


def _link(source: Any, target: Any, node_of: Callable[[Any], BaseNode]) -> list[Edge]:
    if isinstance(source, dict) and isinstance(target, dict):
        raise WorkflowConfigurationError(
            "Consecutive routing maps are not allowed in a chain: split them into separate "
            "edge items."
        )
    sources = _members(source)
    if isinstance(target, dict):
        routes: dict[Any, Any] = target  # pyright: ignore[reportUnknownVariableType]
        if not routes:
            raise WorkflowConfigurationError(
                "Routing map must not be empty: map at least one route to a node."
            )
        edges: list[Edge] = []
        for route, to in routes.items():
            if not isinstance(route, bool | int | str):
                raise WorkflowConfigurationError(
                    f"Invalid routing map key {route!r} ({type(route).__name__}): routes are "
                    "str, int or bool."
                )
            for member in _members(to):
                _check_node_like(member, f"route {route!r}")
            edges.extend(
                Edge(from_node=node_of(s), to_node=node_of(t), route=route)
                for s in sources
                for t in _members(to)
            )
        return edges
    return [
        Edge(from_node=node_of(s), to_node=node_of(t)) for s in sources for t in _members(target)
    ]


def _members(element: Any) -> list[Any]:
    if isinstance(element, dict):
        mapping: dict[Any, Any] = element  # pyright: ignore[reportUnknownVariableType]
        return [m for value in mapping.values() for m in _members(value)]
    if isinstance(element, tuple):
        return list(element)  # pyright: ignore[reportUnknownArgumentType]
    return [element]


def _check_node_like(item: Any, where: str) -> None:
    if not is_node_like(item):
        raise WorkflowConfigurationError(
            f"Invalid node for {where}: {item!r} ({type(item).__name__}). A node is a "
            "BaseNode, an agent, a tool, a function or 'START'."
        )
