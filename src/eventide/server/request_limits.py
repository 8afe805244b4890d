"""The limits every request is held to, each refused with a 4xx that names it.

Without them a body the stores cannot hold got a 500 from deep inside them: JSON nested so
deep that serializing it overflows (pydantic stops at a few hundred levels, the JSON parser
at about a thousand), more state keys in one change than SQLite takes variables in one
statement, ids longer than a file name may be (artifact and eval-set files are named after
them), and ids with a ``/`` that were stored but could never be addressed by URL again.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from typing import Any, cast

from fastapi import HTTPException
from fastapi.routing import APIRoute
from starlette.types import Receive, Scope, Send

__all__ = [
    "MAX_ID_LENGTH",
    "MAX_JSON_DEPTH",
    "MAX_STATE_KEYS",
    "IdCheckedRoute",
    "id_problem",
    "json_depth_problem",
    "json_text_shallow",
    "state_keys_problem",
    "too_deep",
]

# Deep enough for any real state or tool result; shallow enough that an event holding the
# value (a few levels more) serializes well inside pydantic's own depth limit.
MAX_JSON_DEPTH = 64
# Keys of one state change (a create's initial state, a PATCH's or a turn's stateDelta).
MAX_STATE_KEYS = 10_000
# File names are limited to 255 bytes; ids name files and folders (sessions' artifacts,
# eval sets), with room for the suffixes added to them.
MAX_ID_LENGTH = 128
# '/' and '\\' would split a path (the id could not be addressed by URL, and would name a
# folder); '?', '#' and '%' change what a URL means; control characters and spaces make ids
# that cannot be told apart when printed.
_ID_FORBIDDEN = re.compile(r"[/\\?#%\s\x00-\x1f\x7f]")
_PATH_IDS = {
    "user_id": "user id",
    "session_id": "session id",
    "eval_set_id": "eval set id",
    "eval_case_id": "eval case id",
}


def id_problem(kind: str, value: str) -> str | None:
    """What is wrong with ``value`` as an id (None when it is fine)."""
    if not value:
        return f"The {kind} is empty; give one of 1 to {MAX_ID_LENGTH} characters."
    if len(value) > MAX_ID_LENGTH:
        return (
            f"The {kind} is {len(value)} characters long, over the limit of {MAX_ID_LENGTH}; "
            "use a shorter id."
        )
    bad = _ID_FORBIDDEN.search(value)
    if bad is not None:
        return (
            f"The {kind} {value!r} contains {bad.group()!r}: ids may not contain '/', '\\', "
            "'?', '#', '%', spaces or control characters (such an id could not be addressed "
            "by URL)."
        )
    return None


class IdCheckedRoute(APIRoute):
    """The route class of every API route: a 422 when an id in the path (user, session,
    eval set, eval case) is over the length limit or has a forbidden character, before the
    route reads or stores anything.

    The check is made in the route's ``handle``, once the path matched and the method is
    the route's: a route with no such id in its path checks nothing, and none goes through
    FastAPI's dependency machinery (a dependency of every route cost a create-session
    request about 0.2 M instructions).
    """

    def __init__(self, path: str, endpoint: Callable[..., Any], **kwargs: Any) -> None:
        super().__init__(path, endpoint, **kwargs)
        self._path_ids = tuple(
            (name, kind) for name, kind in _PATH_IDS.items() if name in self.param_convertors
        )

    async def handle(self, scope: Scope, receive: Receive, send: Send) -> None:
        path_ids = self._path_ids
        if path_ids and scope["method"] in (self.methods or ()):
            params: dict[str, Any] = scope["path_params"]
            for name, kind in path_ids:
                value = params.get(name)
                problem = id_problem(kind, value) if isinstance(value, str) else None
                if problem is not None:
                    raise HTTPException(
                        422, detail=[{"type": "id_invalid", "loc": ["path", name], "msg": problem}]
                    )
        await super().handle(scope, receive, send)


def json_depth_problem(value: Any, limit: int = MAX_JSON_DEPTH) -> str | None:
    """What is wrong with ``value``'s nesting (None when it is within ``limit`` levels).

    Walks the containers with a stack of its own, so that a value too deep for recursion is
    measured, not crashed on.
    """
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        children: Iterable[Any]
        if isinstance(item, dict):
            children = cast("dict[str, Any]", item).values()
        elif isinstance(item, list):
            children = cast("list[Any]", item)  # type: ignore[redundant-cast]  # pyright: list[Unknown]
        else:
            continue
        if depth > limit:
            return too_deep(limit)
        stack.extend((child, depth + 1) for child in children)
    return None


def json_text_shallow(raw: bytes, limit: int = MAX_JSON_DEPTH) -> bool:
    """Whether the JSON text ``raw`` cannot nest deeper than ``limit`` levels: it opens no
    more objects and arrays than that. Brackets inside strings count too, which only errs
    on the side of walking the parsed value (:func:`json_depth_problem`); two scans in C
    instead of a walk in Python for the bodies nearly every request sends."""
    return raw.count(b"{") + raw.count(b"[") <= limit


def too_deep(limit: int = MAX_JSON_DEPTH) -> str:
    """The message for JSON nested more than ``limit`` levels deep."""
    return (
        f"The JSON is nested more than {limit} levels deep; flatten it (keep deep data in "
        "an artifact and its name in state)."
    )


def state_keys_problem(state: dict[str, Any] | None, where: str) -> str | None:
    """What is wrong with the number of keys of a state change (None when within limit)."""
    if state is not None and len(state) > MAX_STATE_KEYS:
        return (
            f"{where} has {len(state)} keys, over the limit of {MAX_STATE_KEYS} in one "
            "change; split it into several changes or group the keys in objects."
        )
    return None
