"""Hook chains: one mechanism for every plugin hook and agent callback.

A chain is a tuple of callables taking a hook's arguments positionally; calling it
(:func:`first_result`) calls each in order and the first non-None result wins and stops it.
That rule is written here and nowhere else. A hook's chain holds the plugins that override
it (the ``PluginManager`` builds their entries once per Runner), then the agent's own
callbacks (sync or async, one or a list), each adapted by the hook's declaration
(:class:`eventide.plugins.base_plugin.HookSpec`, the hook table).
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, TypeVar, TypeVarTuple, cast

if TYPE_CHECKING:  # the hook table imports this module's users, not this module
    from eventide.plugins.base_plugin import HookSpec

__all__ = [
    "NO_HOOKS",
    "Callbacks",
    "HookChains",
    "ObservingEntry",
    "first_result",
    "only_observes",
    "own_chain",
]

_Args = TypeVarTuple("_Args")
_R = TypeVar("_R")

Callbacks = Callable[..., Any] | Sequence[Callable[..., Any]] | None
"""An agent's setting for one hook: None, one callable, or a list of them."""


async def first_result(
    chain: tuple[Callable[[*_Args], Awaitable[_R | None]], ...], *args: *_Args
) -> _R | None:
    """Call each hook of ``chain`` with ``args`` in order; the first non-None result wins
    (and stops it). A plugin's hook may be a plain ``def``: its value is taken as it is."""
    for hook in chain:
        result: Any = hook(*args)
        if inspect.isawaitable(result):
            result = await result
        if result is not None:
            return cast("_R", result)
    return None


def own_chain(
    spec: HookSpec[*_Args, _R], callbacks: Callbacks
) -> tuple[Callable[[*_Args], Awaitable[_R | None]], ...]:
    """An agent's own callbacks of a hook as chain entries (empty when it has none)."""
    if callbacks is None:
        return ()
    listed = (callbacks,) if callable(callbacks) else tuple(callbacks)
    return tuple(
        cast(
            "Callable[[*_Args], Awaitable[_R | None]]",
            functools.partial(_call_own, spec, callback),
        )
        for callback in listed
    )


async def _call_own(spec: HookSpec[*tuple[Any, ...], Any], callback: Any, *args: Any) -> Any:
    call = spec.call_agent
    assert call is not None  # own_chain is only asked for hooks agents have
    result = call(callback, *args)
    if inspect.isawaitable(result):
        result = await result
    if result is None or spec.agent_result is None:
        return result
    return spec.agent_result(result)


class HookChains:
    """A resolved agent's chains, by hook: the plugins' entries first, then the agent's
    own. A hook without a chain answers an empty one."""

    __slots__ = ("_chains",)

    def __init__(self, chains: Mapping[HookSpec[*tuple[Any, ...], Any], tuple[Any, ...]]) -> None:
        self._chains = {spec: chain for spec, chain in chains.items() if chain}

    def __getitem__(
        self, spec: HookSpec[*_Args, _R]
    ) -> tuple[Callable[[*_Args], Awaitable[_R | None]], ...]:
        return cast(
            "tuple[Callable[[*_Args], Awaitable[_R | None]], ...]", self._chains.get(spec, ())
        )

    def has(self, *specs: HookSpec[*tuple[Any, ...], Any]) -> bool:
        """Whether any of these hooks has a chain."""
        chains = self._chains
        return any(spec in chains for spec in specs)

    def __bool__(self) -> bool:
        return bool(self._chains)


class ObservingEntry(functools.partial[Any]):
    """A hook chain's entry of a plugin that only observes (``BasePlugin.observes_only``):
    it never returns a replacement and never changes what it is given."""


def only_observes(chain: tuple[Any, ...]) -> bool:
    """Whether every entry of ``chain`` only observes (true of an empty chain)."""
    return all(type(entry) is ObservingEntry for entry in chain)


NO_HOOKS = HookChains({})
"""The chains of an agent run with no hooks at all (the flow checks for it first)."""
