"""The event that carries the user's message (and state) into an invocation.

Built here, committed by the Runner: the message becomes a ``user`` Content, plugins'
``on_user_message_callback`` may replace it, credentials it answers requests with go to the
credential service instead of the log (:mod:`eventide.credential_redaction`), and the run's
``custom_metadata`` and (in a resumable invocation) its marker go on the event.
"""

from __future__ import annotations

from typing import Any

from eventide import types
from eventide._fastpath import construct_trusted
from eventide.contexts import InvocationContext
from eventide.credential_redaction import answers_credential_request, store_credentials
from eventide.events import Event, EventActions
from eventide.plugins.base_plugin import BasePlugin
from eventide.protocol import USER_AUTHOR
from eventide.runtime.markers import mark

__all__ = ["add_run_metadata", "user_event"]


async def user_event(
    ctx: InvocationContext,
    new_message: types.Content | str | None,
    state_delta: dict[str, Any] | None,
    *,
    invocation_mark: str | None,
    branch: str | None = None,
) -> Event:
    """The user's event of ``ctx``'s invocation (``ctx.user_content`` is set to its
    content). ``invocation_mark``: the invocation marker it carries (None: not resumable);
    ``branch``: the branch it belongs on (the paused calls it answers, a task's), if any."""
    content = None
    if new_message is not None:
        content = types.to_content(new_message)
        if content.role is None:
            content = content.model_copy(update={"role": "user"})
        plugins = ctx.plugin_manager
        # Hooks that are off cost a check, not an awaited coroutine.
        if plugins.overrides(BasePlugin.on_user_message_callback):
            replaced = await plugins.on_user_message_callback(
                invocation_context=ctx, user_message=content
            )
            if replaced is not None:
                content = types.to_content(replaced)
        if answers_credential_request(content):
            content = await store_credentials(ctx, content)
        ctx.user_content = content
    # Every value is already of its field's type (the content was validated by
    # to_content): taken as it is.
    event = construct_trusted(
        Event,
        {
            "invocation_id": ctx.invocation_id,
            "author": USER_AUTHOR,
            "branch": branch,
            "content": content,
            "actions": EventActions(state_delta=dict(state_delta))
            if state_delta
            else EventActions(),
        },
    )
    if ctx.run_config.custom_metadata:
        add_run_metadata(event, ctx.run_config.custom_metadata)
    if invocation_mark is not None:
        mark(event, invocation_mark)
    return event


def add_run_metadata(event: Event, metadata: dict[str, Any]) -> None:
    """Put ``RunConfig.custom_metadata`` on ``event`` (its own entries win on a clash)."""
    own = event.custom_metadata
    event.custom_metadata = {**metadata, **own} if own else dict(metadata)
