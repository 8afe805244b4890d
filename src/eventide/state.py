"""``State``: the scoped, delta-recording view of session state that contexts expose.

Keys carry their scope in a prefix:

=============  ==========================================================================
``app:k``      shared by every user and session of the app
``user:k``     shared by one user's sessions of the app
``temp:k``     this invocation only; never stored
``k``          this session
=============  ==========================================================================

A read sees, in order: this context's own pending writes, the invocation's other pending
writes (a *dirty read*: visible before any event carrying them is committed), then the
committed session state. A write lands in this context's ``actions.state_delta`` (so the next
event the context yields carries it) and in the invocation's pending overlay.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any, cast

from eventide.errors import InvalidStateValueError

__all__ = ["State", "check_json_value"]

_MISSING = object()
_SCALARS = (str, int, float, bool, type(None))


class State:
    """A mapping over committed state plus pending writes; writes are recorded as a delta."""

    APP_PREFIX = "app:"
    USER_PREFIX = "user:"
    TEMP_PREFIX = "temp:"

    __slots__ = ("_committed", "_delta", "_pending")

    def __init__(
        self,
        value: dict[str, Any],
        delta: dict[str, Any],
        pending: dict[str, Any] | None = None,
    ) -> None:
        """Create a view.

        Args:
            value: the committed state (the session's ``state``).
            delta: where this view records its writes (an ``EventActions.state_delta``).
            pending: the invocation-wide overlay of uncommitted writes, for dirty reads.
        """
        self._committed = value
        self._delta = delta
        self._pending = pending

    def __getitem__(self, key: str) -> Any:
        value = self._lookup(key)
        if value is _MISSING:
            raise KeyError(key)
        return value

    def _lookup(self, key: str) -> Any:
        delta = self._delta
        if key in delta:
            return delta[key]
        pending = self._pending
        if pending is not None and key in pending:
            return pending[key]
        return self._committed.get(key, _MISSING)

    def __setitem__(self, key: str, value: Any) -> None:
        if not isinstance(key, str):
            raise TypeError(f"State keys must be strings, got {type(key).__name__}: {key!r}")
        self._delta[key] = value
        if self._pending is not None:
            self._pending[key] = value

    def __contains__(self, key: object) -> bool:
        return isinstance(key, str) and self._lookup(key) is not _MISSING

    def get(self, key: str, default: Any = None) -> Any:
        """The value of ``key``, or ``default`` when it is not set."""
        value = self._lookup(key)
        return default if value is _MISSING else value

    def setdefault(self, key: str, default: Any = None) -> Any:
        """The value of ``key``; when unset, write ``default`` and return it."""
        value = self._lookup(key)
        if value is _MISSING:
            self[key] = default
            return default
        return value

    def update(self, values: Mapping[str, Any] | None = None, /, **kwargs: Any) -> None:
        """Write several keys at once."""
        for source in (values or {}, kwargs):
            for key, value in source.items():
                self[key] = value

    def has_delta(self) -> bool:
        """True when this view has recorded writes not yet carried by an event."""
        return bool(self._delta)

    def to_dict(self) -> dict[str, Any]:
        """A merged copy: committed state overlaid by pending writes."""
        merged = dict(self._committed)
        if self._pending:
            merged.update(self._pending)
        merged.update(self._delta)
        return merged

    def keys(self) -> Iterator[str]:
        """The keys of the merged view."""
        return iter(self.to_dict())

    def items(self) -> Iterator[tuple[str, Any]]:
        """The (key, value) pairs of the merged view."""
        return iter(self.to_dict().items())

    def __iter__(self) -> Iterator[str]:
        return self.keys()

    def __len__(self) -> int:
        return len(self.to_dict())

    def __repr__(self) -> str:
        return f"State({self.to_dict()!r})"

    def __delitem__(self, key: str) -> None:
        raise TypeError(
            f"State keys cannot be deleted (key {key!r}): the log only records writes. "
            "Set the key to None instead."
        )


def check_json_value(key: str, value: Any) -> None:
    """Raise :class:`InvalidStateValueError` unless ``value`` is JSON data.

    Much cheaper than a ``json.dumps`` on the hot path: scalars pass at once (an int, a bool
    or None by their exact type, before any ``isinstance``: every committed key is checked).
    """
    if isinstance(key, str) and "\x00" in key:
        raise InvalidStateValueError(key=key, path="the key", value_type=_NUL)
    if value.__class__ in _PLAIN or value is None:
        return
    if isinstance(value, str):
        if "\x00" in value:
            raise InvalidStateValueError(key=key, path="$", value_type=_NUL)
        return
    if isinstance(value, int):  # bool too
        return
    _check_nested(key, value, "$")


_PLAIN = frozenset({int, bool})


# PostgreSQL's jsonb cannot hold U+0000, so no store accepts it (every store must agree).
_NUL = "string with the NUL character U+0000 (remove or replace it; PostgreSQL cannot store it)"


def _check_nested(key: str, value: object, path: str) -> None:
    if isinstance(value, _SCALARS):
        if isinstance(value, float) and (value != value or value in (float("inf"), float("-inf"))):
            raise InvalidStateValueError(key=key, path=path, value_type=f"non-finite float {value}")
        if isinstance(value, str) and "\x00" in value:
            raise InvalidStateValueError(key=key, path=path, value_type=_NUL)
        return
    if isinstance(value, dict):
        for k, v in cast("dict[object, object]", value).items():
            if not isinstance(k, str):
                raise InvalidStateValueError(
                    key=key,
                    path=f"{path}[{k!r}]",
                    value_type=f"dict key of type {type(k).__name__}",
                )
            if "\x00" in k:
                raise InvalidStateValueError(key=key, path=f"{path}[{k!r}]", value_type=_NUL)
            _check_nested(key, v, f"{path}.{k}")
        return
    if isinstance(value, list | tuple):
        for i, v in enumerate(cast("list[object] | tuple[object, ...]", value)):
            _check_nested(key, v, f"{path}[{i}]")
        return
    raise InvalidStateValueError(key=key, path=path, value_type=type(value).__name__)
