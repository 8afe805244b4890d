"""The commit channel between concurrent producers (a workflow's nodes, a fan-out's branches)
and the Runner (eventide/runtime/commit_channel.py)."""

from __future__ import annotations

import asyncio

from eventide import Event
from eventide.runtime.commit_channel import CommitChannel


async def test_a_producer_waits_on_the_commits_own_future() -> None:
    """``commit`` queues the event and hands back the very future the consumer resolves once
    the Runner committed it (no coroutine of its own for a waiting producer to keep)."""
    channel = CommitChannel(asyncio.get_running_loop())
    event = Event(author="a")
    committed = channel.commit(event)
    assert isinstance(committed, asyncio.Future) and not committed.done()
    item = await channel.get()
    assert item == (event, committed)
    committed.set_result(None)
    await committed
