"""Filling ``{placeholders}`` in instruction templates from state and artifacts."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from eventide.contexts import ReadonlyContext
from eventide.errors import UsageError

__all__ = ["fill_placeholders"]

_PLACEHOLDER = re.compile(r"{+[^{}]*}+")
_SCOPES = ("app:", "user:", "temp:")


async def fill_placeholders(template: str, context: ReadonlyContext) -> str:
    """Replace ``{key}``, ``{key?}``, ``{app:key}``, ``{user:key}``, ``{temp:key}`` and
    ``{artifact.name}`` in ``template``.

    Text in braces that is not a valid placeholder name (JSON examples, ``{{ }}``) is left
    as it is.

    Raises:
        UsageError: a required key (no ``?``) is not in state, or the artifact is missing.
    """
    if "{" not in template:
        return template
    state = context.state
    parts: list[str] = []
    last = 0
    for match in _PLACEHOLDER.finditer(template):
        parts.append(template[last : match.start()])
        last = match.end()
        parts.append(await _replacement(match.group(), state, context))
    parts.append(template[last:])
    return "".join(parts)


async def _replacement(token: str, state: Mapping[str, Any], context: ReadonlyContext) -> str:
    name = token.lstrip("{").rstrip("}").strip()
    optional = name.endswith("?")
    if optional:
        name = name[:-1]
    if name.startswith("artifact."):
        return await _artifact_text(name[len("artifact.") :], optional, token, context)
    if not _is_state_name(name):
        return token
    if name in state:
        value = state[name]
        return "" if value is None else str(value)
    if optional:
        return ""
    raise UsageError(
        f"Instruction placeholder {token} of agent {context.agent_name!r} names state key "
        f"{name!r}, which is not set. Set it before this agent runs, or write {{{name}?}} to "
        "insert an empty string when it is missing."
    )


def _is_state_name(name: str) -> bool:
    for scope in _SCOPES:
        if name.startswith(scope):
            return name[len(scope) :].isidentifier()
    return name.isidentifier()


async def _artifact_text(
    filename: str, optional: bool, token: str, context: ReadonlyContext
) -> str:
    ictx = context.invocation_context
    service = ictx.artifact_service
    if service is None:
        raise UsageError(
            f"Instruction placeholder {token} needs an artifact service; pass "
            "artifact_service=... to the Runner."
        )
    part = await service.load_artifact(
        app_name=ictx.app_name,
        user_id=ictx.user_id,
        session_id=ictx.session.id,
        filename=filename,
    )
    if part is None:
        if optional:
            return ""
        raise UsageError(
            f"Instruction placeholder {token} names artifact {filename!r}, which does not "
            f"exist in session {ictx.session.id!r}."
        )
    if part.text is not None:
        return part.text
    if part.inline_data is not None and part.inline_data.data is not None:
        return part.inline_data.data.decode("utf-8", errors="replace")
    return ""
