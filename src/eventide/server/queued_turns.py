"""Turns run on DBOS workers: ``api-server --workers dbos`` (the ``dbos`` extra).

``/run`` and ``/run_sse`` enqueue the turn as an invocation on the DBOS queue instead of
running it in the server process, and stream its events as the worker commits them (read
back from the shared session log). With ``streaming`` the worker's model streams and each
partial chunk reaches the client through PostgreSQL ``NOTIFY`` (chunks are never committed).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncGenerator
from typing import TYPE_CHECKING

from eventide._ids import new_invocation_id
from eventide.errors import SessionNotFoundError
from eventide.events import Event
from eventide.runner import Runner

if TYPE_CHECKING:
    from eventide.durable.dbos_workers import InvocationQueue
    from eventide.server.request_models import RunAgentRequest

__all__ = ["QueuedTurns"]


class QueuedTurns:
    """Enqueues each turn for the workers and follows its committed events."""

    def __init__(self, queue: InvocationQueue) -> None:
        self.queue = queue

    async def events(self, runner: Runner, body: RunAgentRequest) -> AsyncGenerator[Event, None]:
        """The turn's events (not the user's own), as the worker commits them."""
        sessions = runner.session_service
        session = await sessions.get_session(
            app_name=runner.app_name, user_id=body.user_id, session_id=body.session_id
        )
        if session is None:
            raise SessionNotFoundError(
                app_name=runner.app_name, user_id=body.user_id, session_id=body.session_id
            )
        invocation_id = new_invocation_id()
        partials = self.queue.partials(invocation_id) if body.streaming else None
        async with partials or contextlib.nullcontext():
            # Listening before the enqueue: no chunk is published before.
            await asyncio.to_thread(
                self.queue.enqueue,
                app_name=runner.app_name,
                user_id=body.user_id,
                session_id=body.session_id,
                new_message=body.new_message,
                state_delta=body.state_delta,
                invocation_id=invocation_id,
                stream=body.streaming,
            )
            events = self.queue.events(
                sessions,
                app_name=runner.app_name,
                user_id=body.user_id,
                session_id=body.session_id,
                invocation_id=invocation_id,
                partials=partials,
            )
            async for event in events:
                if event.author != "user":
                    yield event
