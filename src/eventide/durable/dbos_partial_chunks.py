"""Partial chunks of a streaming invocation on DBOS workers, through PostgreSQL ``NOTIFY``.

Partial chunks are never committed, so the session log the client follows does not carry
them: the worker publishes each with ``pg_notify`` on the DBOS system database, on a channel
per invocation, and the client ``LISTEN``s there.
"""

from __future__ import annotations

import hashlib
from collections.abc import AsyncGenerator
from typing import Any

import psycopg
import psycopg.sql
import sqlalchemy as sa

from eventide.durable.dbos_system_database import sync_url, unreachable
from eventide.events import Event

__all__ = ["PartialListener", "PartialPublisher"]


def _channel(invocation_id: str) -> str:
    """The NOTIFY channel of an invocation's partial chunks (PostgreSQL names: 63 bytes)."""
    return "eventide:" + hashlib.sha1(invocation_id.encode()).hexdigest()[:32]


# PostgreSQL refuses a NOTIFY payload of 8000 bytes or more.
_MAX_PAYLOAD = 7900


class PartialPublisher:
    """The worker's side: publishes partial chunks with ``pg_notify`` on the system database.

    Chunks are best effort (never committed, as in process): one too big for a NOTIFY
    payload, or published while no client listens, is simply not seen; the complete event
    follows in the log.
    """

    def __init__(self, engine: sa.Engine) -> None:
        self._engine = engine

    def publish(self, invocation_id: str, event: Event) -> None:
        payload = event.model_dump_json(exclude_none=True)
        if len(payload.encode()) > _MAX_PAYLOAD:
            return
        with self._engine.connect() as connection:
            connection.execute(
                sa.text("SELECT pg_notify(:channel, :payload)"),
                {"channel": _channel(invocation_id), "payload": payload},
            )
            connection.commit()


class PartialListener:
    """The client's side: ``LISTEN`` for one invocation's partial chunks."""

    def __init__(self, url: str, invocation_id: str) -> None:
        self._url = sync_url(url)
        self._channel = _channel(invocation_id)
        self._connection: psycopg.AsyncConnection[Any] | None = None

    async def __aenter__(self) -> PartialListener:
        try:
            self._connection = await psycopg.AsyncConnection.connect(self._url, autocommit=True)
        except psycopg.OperationalError as exc:
            raise unreachable(self._url, exc) from exc
        await self._connection.execute(
            psycopg.sql.SQL("LISTEN {}").format(psycopg.sql.Identifier(self._channel))
        )
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        if self._connection is not None:
            await self._connection.close()
            self._connection = None

    async def chunks(self, within: float) -> AsyncGenerator[Event, None]:
        """The chunks published in the next ``within`` seconds."""
        assert self._connection is not None, "open the listener with 'async with' first"
        async for notify in self._connection.notifies(timeout=within):
            yield Event.model_validate_json(notify.payload)
