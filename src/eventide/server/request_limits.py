"""The limits every request is held to, each refused with a 4xx that names it.

Without them a body the stores cannot hold got a 500 from deep inside them: JSON nested so
deep that serializing it overflows (pydantic stops at a few hundred levels, the JSON parser
at about a thousand), more state keys in one change than SQLite takes variables in one
statement, ids longer than a file name may be (artifact and eval-set files are named after
them), and ids with a ``/`` that were stored but could never be addressed by URL again.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any, cast

from fastapi import HTTPException
from starlette.requests import HTTPConnection

__all__ = [
    "MAX_ID_LENGTH",
    "MAX_JSON_DEPTH",
    "MAX_STATE_KEYS",
    "check_path_ids",
    "id_problem",
    "json_depth_problem",
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


async def check_path_ids(request: HTTPConnection) -> None:
    """A FastAPI dependency of every route: 422 when a path's user, session or eval id is
    over the length limit or has a forbidden character, before the route reads or stores
    anything."""
    for name, kind in _PATH_IDS.items():
        value = request.path_params.get(name)
        if isinstance(value, str):
            problem = id_problem(kind, value)
            if problem is not None:
                raise HTTPException(
                    422, detail=[{"type": "id_invalid", "loc": ["path", name], "msg": problem}]
                )


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
