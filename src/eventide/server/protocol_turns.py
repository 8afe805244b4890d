"""Running one turn for a protocol adapter (AG-UI, the OpenAI endpoints): the Runner's
events, streamed or collected, and the turn's end however the client's connection ends.

Adapters map their requests to a :class:`TurnInput` (user, session, new message, state,
the client's tools) and their protocol's frames from the events; this module owns what they
share with ``/run_sse``: the turn counted in flight (so shutdown waits for it), the Runner's
generator closed when the client hangs up (committed events stay committed; the event in
flight is committed wholly or not at all), and a failure turned into the protocol's error
frame instead of a dropped connection.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncGenerator, Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from eventide import types
from eventide.events import Event
from eventide.run_config import RunConfig, StreamingMode
from eventide.runner import Runner
from eventide.server.run_routes import InflightTurns
from eventide.server.sse_batching import EventStreamResponse
from eventide.sessions.session import Session

__all__ = [
    "FrameWriter",
    "TurnInput",
    "collect_turn",
    "event_text",
    "open_session",
    "stream_turn",
    "turn_events",
]

logger = logging.getLogger("eventide.server")

Emit = Callable[[bytes], None]


@dataclass(slots=True, kw_only=True)
class TurnInput:
    """One turn, as an adapter asks for it: the session as the adapter just read it (to map
    its request), which the Runner then runs on instead of reading it again."""

    user_id: str
    session: Session
    new_message: types.Content | None
    state_delta: dict[str, Any] | None = None
    client_tools: list[types.FunctionDeclaration] = field(default_factory=list)
    streaming: bool = False


def event_text(event: Event) -> str | None:
    """``event.text``, at a third of its cost for an event of one part (a streamed chunk):
    the adapters read it from every event of a turn."""
    content = event.content
    if content is None:
        return None
    parts = content.parts
    if parts is not None and len(parts) == 1:
        part = parts[0]
        return None if part.thought else part.text
    return content.text


async def open_session(
    runner: Runner, user_id: str, session_id: str | None
) -> tuple[Session, bool]:
    """The session a request names (created when missing, or new when none is named), read
    once: the adapter maps its request against it, then hands it to the Runner in its
    :class:`TurnInput`. Whether it is new."""
    service = runner.session_service
    if session_id is not None:
        session = await service.get_session(
            app_name=runner.app_name, user_id=user_id, session_id=session_id
        )
        if session is not None:
            return session, False
    created = await service.create_session(
        app_name=runner.app_name, user_id=user_id, session_id=session_id
    )
    return created, True


def turn_events(runner: Runner, turn: TurnInput) -> AsyncGenerator[Event, None]:
    """The Runner's events for ``turn`` (nothing runs until iterated)."""
    config = RunConfig(
        streaming_mode=StreamingMode.SSE if turn.streaming else StreamingMode.NONE,
        client_tools=turn.client_tools,
    )
    return runner.run_async(
        user_id=turn.user_id,
        session_id=turn.session.id,
        new_message=turn.new_message,
        state_delta=turn.state_delta or None,
        run_config=config,
        session=turn.session,
    )


class FrameWriter(Protocol):
    """What a protocol sends for a streamed turn."""

    def start(self, emit: Emit) -> None:
        """The frames before the first event."""

    def event(self, event: Event, emit: Emit) -> None:
        """The frames for one event (partial chunks too)."""

    def end(self, error: BaseException | None, emit: Emit) -> None:
        """The last frames: the turn finished (``error`` None) or failed."""


def stream_turn(
    events: AsyncGenerator[Event, None],
    writer: FrameWriter,
    *,
    inflight: InflightTurns | None = None,
    label: str = "turn",
    headers: dict[str, str] | None = None,
) -> EventStreamResponse:
    """A server-sent-event response writing ``writer``'s frames for each event as the Runner
    commits it. A client that hangs up stops the turn at its next step."""
    stream = _Stream(events, writer, inflight, label)
    response = EventStreamResponse(stream.produce, on_close=stream.close)
    for name, value in (headers or {}).items():
        response.raw_headers.append((name.lower().encode("latin-1"), value.encode("latin-1")))
    return response


async def collect_turn(
    events: AsyncGenerator[Event, None],
    *,
    inflight: InflightTurns | None = None,
    label: str = "turn",
) -> tuple[list[Event], BaseException | None]:
    """Run the turn to its end: its events, and what it failed with (None when it did not).
    Events committed before a failure stay committed."""
    collected: list[Event] = []
    error: BaseException | None = None
    if inflight is not None:
        inflight.enter()
    try:
        async for event in events:
            collected.append(event)
    except Exception as exc:
        logger.exception("%s failed", label)
        error = exc
    finally:
        try:
            await events.aclose()
        finally:
            if inflight is not None:
                inflight.leave()
    return collected, error


class _Stream:
    """One streamed turn's frames, and the turn's end however the stream ends."""

    __slots__ = ("closed", "events", "inflight", "label", "writer")

    def __init__(
        self,
        events: AsyncGenerator[Event, None],
        writer: FrameWriter,
        inflight: InflightTurns | None,
        label: str,
    ) -> None:
        self.events = events
        self.writer = writer
        self.inflight = inflight
        self.label = label
        self.closed = False
        if inflight is not None:
            inflight.enter()

    async def produce(self, emit: Emit) -> None:
        error: BaseException | None = None
        writer = self.writer
        try:
            writer.start(emit)
            async for event in self.events:
                writer.event(event, emit)
        except Exception as exc:
            logger.exception("%s failed while streaming", self.label)
            error = exc
        finally:
            # A client that hangs up cancels this task: closing the Runner's generator lets
            # the agent's own cleanup run (see run_routes).
            await self.close()
        writer.end(error, emit)

    async def close(self) -> None:
        """End the turn (once): close the Runner's generator, count the turn as left."""
        if self.closed:
            return
        self.closed = True
        try:
            await self.events.aclose()
        finally:
            if self.inflight is not None:
                self.inflight.leave()
