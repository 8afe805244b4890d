"""``POST /run`` and ``POST /run_sse``: run one user turn.

``/run`` answers with the turn's events as a JSON list once the turn is over. ``/run_sse``
streams them as server-sent events, one ``data: <event JSON>`` frame per event as soon as the
Runner has committed it (partial chunks too when ``streaming`` is true). A failure during
the turn becomes a final ``data: {"error": ..., "errorCode": ..., "errorMessage": ...}``
frame instead of a dropped connection; events committed before it stay committed.

Events are sent in ADK's spelling (camelCase field names, data keys as stored), whichever
spelling the request used.
"""

from __future__ import annotations

import asyncio
import json
import logging
import weakref
from collections.abc import AsyncGenerator, AsyncIterator, Callable
from typing import Any

import anyio
from fastapi import FastAPI, HTTPException, Response
from fastapi.responses import StreamingResponse

from eventide.errors import (
    AppLoadError,
    AppNotFoundError,
    ModelError,
    RunnerClosedError,
    SessionNotFoundError,
)
from eventide.events import Event
from eventide.run_config import RunConfig, StreamingMode
from eventide.server.app_registry import AppRegistry
from eventide.server.camel_json import event_json
from eventide.server.queued_turns import QueuedTurns
from eventide.server.request_models import RunAgentRequest
from eventide.server.sse_batching import batch_ready_frames

__all__ = ["InflightTurns", "add_run_routes", "error_payload"]

logger = logging.getLogger("eventide.server")


def error_payload(exc: BaseException) -> dict[str, str]:
    """The error frame for ``exc``: a code a program can branch on and a readable message."""
    code = exc.error_code if isinstance(exc, ModelError) and exc.error_code else None
    message = str(exc) or type(exc).__name__
    return {"errorCode": code or type(exc).__name__, "errorMessage": message}


class InflightTurns:
    """Counts the turns running now, so shutdown can wait for them to unwind."""

    def __init__(self) -> None:
        self.count = 0
        self._idle = asyncio.Event()
        self._idle.set()

    def enter(self) -> None:
        """A turn started."""
        self.count += 1
        self._idle.clear()

    def leave(self) -> None:
        """A turn ended (finished, failed or was cancelled)."""
        self.count -= 1
        if self.count == 0:
            self._idle.set()

    async def wait_idle(self, seconds: float) -> bool:
        """Wait until no turn runs; False when ``seconds`` passed first."""
        try:
            await asyncio.wait_for(self._idle.wait(), seconds)
        except TimeoutError:
            return False
        return True


def add_run_routes(
    api: FastAPI,
    registry: AppRegistry,
    inflight: InflightTurns,
    queued: QueuedTurns | None = None,
) -> None:
    """Register ``/run`` and ``/run_sse`` on ``api`` (turns run on DBOS workers when
    ``queued`` is given, in this process otherwise)."""

    async def start(
        body: RunAgentRequest,
    ) -> tuple[AsyncGenerator[Event, None], Event | None, BaseException | None]:
        """Start the turn and wait for its first event.

        Waiting for the first event before answering lets a missing session be a plain 404
        (the Runner reads the session before yielding anything) at no extra read.
        """
        try:
            runner = await registry.runner(body.app_name)
        except AppNotFoundError as exc:
            raise HTTPException(404, detail=str(exc)) from exc
        except AppLoadError as exc:
            raise HTTPException(500, detail=str(exc)) from exc
        mode = StreamingMode.SSE if body.streaming else StreamingMode.NONE
        if queued is not None:
            events = queued.events(runner, body)
        else:
            events = runner.run_async(
                user_id=body.user_id,
                session_id=body.session_id,
                new_message=body.new_message,
                state_delta=body.state_delta,
                run_config=RunConfig(streaming_mode=mode),
            )
        inflight.enter()
        try:
            first = await anext(events)
        except StopAsyncIteration:
            return events, None, None
        except SessionNotFoundError as exc:
            inflight.leave()
            raise HTTPException(404, detail=str(exc)) from exc
        except RunnerClosedError as exc:
            inflight.leave()
            raise HTTPException(503, detail="The server is shutting down; retry.") from exc
        except Exception as exc:
            logger.exception("Turn of app %r failed before its first event", body.app_name)
            return events, None, exc
        except BaseException:
            inflight.leave()
            raise
        return events, first, None

    @api.post(
        "/run",
        response_model=list[Event],
        summary="Run one turn and return its events",
        tags=["run"],
        responses={404: {"description": "No such app or session."}},
    )
    async def run(body: RunAgentRequest) -> Response:
        """Run the turn to its end and answer with all its events as a JSON list."""
        events, first, error = await start(body)
        collected = [] if first is None else [first]
        try:
            if error is None and first is not None:
                async for event in events:
                    collected.append(event)
        except Exception as exc:
            logger.exception("Turn of app %r failed", body.app_name)
            error = exc
        finally:
            with anyio.CancelScope(shield=True):
                await events.aclose()
            inflight.leave()
        if error is not None:
            detail: dict[str, Any] = {
                **error_payload(error),
                "events": [json.loads(event_json(e)) for e in collected],
            }
            return Response(json.dumps({"detail": detail}), 500, media_type="application/json")
        payload = ",".join(event_json(e) for e in collected)
        return Response(f"[{payload}]", media_type="application/json")

    @api.post(
        "/run_sse",
        summary="Run one turn, streaming its events as server-sent events",
        tags=["run"],
        response_class=StreamingResponse,
        responses={
            200: {
                "description": "One `data: <event JSON>` frame per event; an error frame "
                '`data: {"error": ..., "errorCode": ..., "errorMessage": ...}` ends a failed turn.',
                "content": {"text/event-stream": {}},
            },
            404: {"description": "No such app or session."},
        },
    )
    async def run_sse(body: RunAgentRequest) -> StreamingResponse:
        """Run the turn, sending each event the moment the Runner has committed it."""
        events, first, error = await start(body)
        leave = _once(inflight.leave)
        frames = _sse_frames(events, first, error, app_name=body.app_name, leave=leave)
        # A client that leaves before the first frame is written can make Starlette drop the
        # generator without ever starting it, so its `finally` never runs; the turn then
        # counts as ended when the generator is collected.
        weakref.finalize(frames, leave)
        return StreamingResponse(
            batch_ready_frames(frames),
            media_type="text/event-stream",
            headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"},
        )


def _once(action: Callable[[], None]) -> Callable[[], None]:
    done = False

    def run_once() -> None:
        nonlocal done
        if not done:
            done = True
            action()

    return run_once


async def _sse_frames(
    events: AsyncGenerator[Event, None],
    first: Event | None,
    error: BaseException | None,
    *,
    app_name: str,
    leave: Callable[[], None],
) -> AsyncIterator[str]:
    try:
        if first is not None:
            yield f"data: {event_json(first)}\n\n"
            async for event in events:
                yield f"data: {event_json(event)}\n\n"
    except Exception as exc:
        logger.exception("Turn of app %r failed while streaming", app_name)
        error = exc
    finally:
        # A client that hangs up, or a server shutdown past its grace period, cancels this
        # generator; closing the Runner's generator under a shield lets the agent's own
        # cleanup run. Committed events stay committed; the event in flight is either
        # wholly committed or not at all (appends are atomic).
        with anyio.CancelScope(shield=True):
            await events.aclose()
        leave()
    if error is not None:
        # "error" is the key `adk api_server` sends (google-adk's client raises on it);
        # errorCode/errorMessage are what ADK's UI shows for a failed model call.
        frame = {"error": str(error) or type(error).__name__, **error_payload(error)}
        yield f"data: {json.dumps(frame, ensure_ascii=False)}\n\n"
