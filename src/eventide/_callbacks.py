"""Calling user callbacks: sync or async, one or a list, the first non-None result wins."""

from __future__ import annotations

import inspect
from collections.abc import Callable, Sequence
from typing import Any

__all__ = ["CallbackChain", "call_chain", "to_chain"]

CallbackChain = tuple[Callable[..., Any], ...]


def to_chain(callbacks: Callable[..., Any] | Sequence[Callable[..., Any]] | None) -> CallbackChain:
    """Normalize a callback setting (None, one callable, or a list) to a tuple."""
    if callbacks is None:
        return ()
    if callable(callbacks):
        return (callbacks,)
    return tuple(callbacks)


async def call_chain(chain: CallbackChain, /, **kwargs: Any) -> Any:
    """Call each callback with ``kwargs`` in order; return the first non-None result."""
    for callback in chain:
        result = callback(**kwargs)
        if inspect.isawaitable(result):
            result = await result
        if result is not None:
            return result
    return None
