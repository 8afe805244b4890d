"""``POST /run`` and ``POST /run_sse``: run one user turn.

``/run`` answers with the turn's events as a JSON list once the turn is over. ``/run_sse``
streams them as server-sent events, one ``data: <event JSON>`` frame per event as soon as the
Runner has committed it (partial chunks too when ``streaming`` is true). A failure during
the turn becomes a final ``data: {"error": ..., "errorCode": ..., "errorMessage": ...}``
frame instead of a dropped connection; events committed before it stay committed.

Events are sent in ADK's spelling (camelCase field names, data keys as stored), whichever
spelling the request used.

The routes are registered on FastAPI (for the OpenAPI spec, and for the requests below), but
a well-formed turn request never reaches FastAPI: :class:`TurnRoutes`, an ASGI middleware
inside the others (CORS, auth, body limit), reads the body, validates it and runs the turn
itself, skipping the router, FastAPI's dependency solving and Starlette's per-request
exception handling, which cost more than the turn's own HTTP work. A body that is not a
valid ``RunAgentRequest`` in JSON goes on to FastAPI with its bytes replayed, so the 422
answers are FastAPI's own.
"""

from __future__ import annotations

import asyncio
import functools
import inspect
import json
import logging
import time
from collections.abc import AsyncGenerator, Callable
from typing import Any

import anyio
from fastapi import FastAPI, HTTPException, Response
from fastapi.exception_handlers import http_exception_handler
from fastapi.responses import StreamingResponse
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.requests import Request
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from eventide.cancellation import AbortSignal
from eventide.errors import (
    AppLoadError,
    AppNotFoundError,
    ModelError,
    RecordTooLargeError,
    RunnerClosedError,
    SessionNotFoundError,
)
from eventide.events import Event
from eventide.run_config import RunConfig, StreamingMode
from eventide.server.app_registry import AppRegistry
from eventide.server.camel_json import event_json, event_json_bytes
from eventide.server.json_responses import app_load_failed
from eventide.server.queued_turns import QueuedTurns
from eventide.server.request_limits import json_text_shallow, too_deep
from eventide.server.request_models import SHALLOW_JSON, RunAgentRequest
from eventide.server.sse_batching import EventStreamResponse

__all__ = [
    "InflightTurns",
    "TurnRoutes",
    "Turns",
    "add_run_routes",
    "error_frame",
    "error_payload",
]

logger = logging.getLogger("eventide.server")


def error_payload(exc: BaseException) -> dict[str, str]:
    """The error frame for ``exc``: a code a program can branch on and a readable message."""
    code = exc.error_code if isinstance(exc, ModelError) and exc.error_code else None
    message = str(exc) or type(exc).__name__
    return {"errorCode": code or type(exc).__name__, "errorMessage": message}


def error_frame(exc: BaseException) -> dict[str, Any]:
    """The last ``/run_sse`` frame of a turn that failed.

    ``error`` (``"<class>: <message>"``) and ``error_details`` are what google-adk 2.13's
    ``adk api_server`` sends (its client raises on ``error``); ``errorCode`` and
    ``errorMessage`` are what ADK's web UI shows for a failed model call.
    """
    message = str(exc)
    return {
        "error": f"{type(exc).__name__}: {message}",
        "error_details": {
            "error_type": type(exc).__name__,
            "error_message": message,
            "timestamp": time.time(),
        },
        **error_payload(exc),
    }


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


class Turns:
    """Runs ``/run`` and ``/run_sse`` turns (on DBOS workers when ``queued`` is given, in
    this process otherwise), for the FastAPI routes and :class:`TurnRoutes` alike."""

    def __init__(
        self, registry: AppRegistry, inflight: InflightTurns, queued: QueuedTurns | None = None
    ) -> None:
        self.registry = registry
        self.inflight = inflight
        self.queued = queued

    async def start(
        self, body: RunAgentRequest, abort_signal: asyncio.Event | None = None
    ) -> tuple[AsyncGenerator[Event, None], Event | None, BaseException | None]:
        """Start the turn and wait for its first event.

        Waiting for the first event before answering lets a missing session be a plain 404
        (the Runner reads the session before yielding anything) at no extra read. Setting
        ``abort_signal`` aborts the turn (see :mod:`eventide.cancellation`).
        """
        try:
            runner = await self.registry.runner(body.app_name)
        except AppNotFoundError as exc:
            raise HTTPException(404, detail=str(exc)) from exc
        except AppLoadError as exc:
            raise app_load_failed(body.app_name, exc) from exc
        mode = StreamingMode.SSE if body.streaming else StreamingMode.NONE
        if self.queued is not None:
            events = self.queued.events(runner, body)
        else:
            events = runner.run_async(
                user_id=body.user_id,
                session_id=body.session_id,
                new_message=body.new_message,
                state_delta=body.state_delta,
                run_config=RunConfig(streaming_mode=mode),
                abort_signal=abort_signal,
            )
        inflight = self.inflight
        inflight.enter()
        try:
            first = await anext(events)
        except StopAsyncIteration:
            return events, None, None
        except SessionNotFoundError as exc:
            inflight.leave()
            raise HTTPException(404, detail=str(exc)) from exc
        except RecordTooLargeError as exc:  # the user's message or stateDelta
            inflight.leave()
            raise HTTPException(413, detail=str(exc)) from exc
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

    async def run(self, body: RunAgentRequest) -> Response:
        """Run the turn to its end; its events as a JSON list (a 500 with the events so far
        when it failed)."""
        events, first, error = await self.start(body)
        collected = [] if first is None else [first]
        finished = first is None
        try:
            if error is None and first is not None:
                async for event in events:
                    collected.append(event)
                finished = True
        except Exception as exc:
            logger.exception("Turn of app %r failed", body.app_name)
            error = exc
        finally:
            if not finished:
                with anyio.CancelScope(shield=True):
                    await events.aclose()
            self.inflight.leave()
        if error is not None:
            detail: dict[str, Any] = {
                **error_payload(error),
                "events": [json.loads(event_json(e)) for e in collected],
            }
            return Response(json.dumps({"detail": detail}), 500, media_type="application/json")
        payload = b",".join([event_json_bytes(e) for e in collected])
        return Response(b"[" + payload + b"]", media_type="application/json")

    async def run_sse(self, body: RunAgentRequest) -> Response:
        """Start the turn; a response that sends each event the moment the Runner has
        committed it. A client that hangs up aborts the turn: its events so far stay, and
        the ``INVOCATION_ABORTED`` events that record the abort are committed."""
        abort_signal = AbortSignal()
        events, first, error = await self.start(body, abort_signal)
        stream = _TurnStream(events, first, error, body.app_name, self.inflight)
        return EventStreamResponse(
            stream.produce, on_close=stream.close, on_disconnect=abort_signal.set
        )


class _TurnStream:
    """One ``/run_sse`` turn's frames, and the turn's end however the stream ends."""

    __slots__ = ("app_name", "closed", "error", "events", "exhausted", "first", "inflight")

    def __init__(
        self,
        events: AsyncGenerator[Event, None],
        first: Event | None,
        error: BaseException | None,
        app_name: str,
        inflight: InflightTurns,
    ) -> None:
        self.events = events
        self.first = first
        self.error = error
        self.app_name = app_name
        self.inflight = inflight
        self.closed = False
        self.exhausted = first is None  # the Runner's generator ended (or failed) already

    async def produce(self, emit: Callable[[bytes], None]) -> None:
        error = self.error
        try:
            first = self.first
            if first is not None:
                emit(b"data: " + event_json_bytes(first) + b"\n\n")
                async for event in self.events:
                    emit(b"data: " + event_json_bytes(event) + b"\n\n")
            self.exhausted = True
        except Exception as exc:
            logger.exception("Turn of app %r failed while streaming", self.app_name)
            error = exc
        finally:
            # A client that hangs up, or a server shutdown past its grace period, cancels
            # this task (once: send_batched then waits for it); closing the Runner's
            # generator lets the agent's own cleanup run. Committed events stay committed;
            # the event in flight is either wholly committed or not at all (appends are
            # atomic).
            await self.close()
        if error is not None:
            frame = error_frame(error)
            emit(f"data: {json.dumps(frame, ensure_ascii=False)}\n\n".encode())

    async def close(self) -> None:
        """End the turn (once): close the Runner's generator, count the turn as left."""
        if self.closed:
            return
        self.closed = True
        try:
            if not self.exhausted:
                await self.events.aclose()
        finally:
            self.inflight.leave()


def add_run_routes(api: FastAPI, turns: Turns) -> None:
    """Register ``/run`` and ``/run_sse`` on ``api``; add :class:`TurnRoutes` too, as the
    innermost middleware, for the fast path."""

    @api.post(
        "/run",
        response_model=list[Event],
        summary="Run one turn and return its events",
        tags=["run"],
        responses={404: {"description": "No such app or session."}},
    )
    async def run(body: RunAgentRequest) -> Response:
        """Run the turn to its end and answer with all its events as a JSON list."""
        return await turns.run(body)

    @api.post(
        "/run_sse",
        summary="Run one turn, streaming its events as server-sent events",
        tags=["run"],
        response_class=StreamingResponse,  # what the spec documents; the answer is a stream
        responses={
            200: {
                "description": "One `data: <event JSON>` frame per event; an error frame "
                '`data: {"error": ..., "errorCode": ..., "errorMessage": ...}` ends a failed turn.',
                "content": {"text/event-stream": {}},
            },
            404: {"description": "No such app or session."},
        },
    )
    async def run_sse(body: RunAgentRequest) -> Response:
        """Run the turn, sending each event the moment the Runner has committed it."""
        return await turns.run_sse(body)


class TurnRoutes:
    """ASGI middleware serving well-formed ``POST /run`` and ``POST /run_sse`` requests
    without FastAPI (see the module docstring); everything else goes to ``app``.

    Errors a turn raises before it answers (unknown app or session, shutting down) are
    answered by the handler the app has for them, as FastAPI's router would: one registered
    for the status code, else for the exception's class or the nearest of its bases
    (``exception_handlers``, the app's own dict, read at each error so handlers added
    later count too); FastAPI's default ``HTTPException`` handler when there is none.
    Requests FastAPI's own telemetry follows (``"fastapi.telemetry"`` in the scope) go
    through FastAPI, so that their spans name the route.
    """

    def __init__(
        self,
        app: ASGIApp,
        *,
        turns: Turns,
        exception_handlers: dict[Any, Callable[..., Any]] | None = None,
    ) -> None:
        self.app = app
        self._routes = {"/run": turns.run, "/run_sse": turns.run_sse}
        self._handlers = exception_handlers if exception_handlers is not None else {}

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        route = None
        if scope["type"] == "http" and scope["method"] == "POST":
            route = self._routes.get(scope["path"])
        if route is None or "fastapi.telemetry" in scope or not _json_content(scope):
            await self.app(scope, receive, send)
            return
        received: list[Message] = []
        try:
            while True:
                message = await receive()
                received.append(message)
                if message["type"] != "http.request":
                    await self._replay(scope, receive, send, received)
                    return
                if not message.get("more_body", False):
                    break
        except Exception as exc:
            await self._replay(scope, receive, send, received, exc)
            return
        raw = received[0].get("body", b"") if len(received) == 1 else _joined(received)
        try:
            data = json.loads(raw)
            # The JSON text's brackets bound its depth: a shallow body is not walked again.
            context = SHALLOW_JSON if json_text_shallow(raw) else None
            body = RunAgentRequest.model_validate(data, context=context)
        except RecursionError:  # nested deeper than the parser goes; FastAPI says only 400
            await self._answer_error(HTTPException(422, detail=too_deep()), scope, receive, send)
            return
        except Exception:  # FastAPI tells the client what is wrong, in its words
            await self._replay(scope, receive, send, received)
            return
        try:
            response = await route(body)
        except HTTPException as exc:
            await self._answer_error(exc, scope, receive, send)
            return
        await response(scope, receive, send)

    async def _answer_error(
        self, exc: HTTPException, scope: Scope, receive: Receive, send: Send
    ) -> None:
        """Answer ``exc`` with the app's handler for it (see the class docstring)."""
        handlers = self._handlers
        # Starlette gives handlers for 500 (and Exception) to its outermost middleware,
        # which an HTTPException never reaches: they are not looked up here either.
        handler = handlers.get(exc.status_code) if exc.status_code != 500 else None
        if handler is None:
            for cls in type(exc).__mro__:
                handler = handlers.get(cls)
                if handler is not None or cls is StarletteHTTPException:
                    break
        request = Request(scope, receive, send)
        if handler is None:
            response = await http_exception_handler(request, exc)
        elif _is_async(handler):
            response = await handler(request, exc)
        else:
            response = await run_in_threadpool(handler, request, exc)
        if response is not None:
            await response(scope, receive, send)

    async def _replay(
        self,
        scope: Scope,
        receive: Receive,
        send: Send,
        received: list[Message],
        failure: Exception | None = None,
    ) -> None:
        """Hand the request to FastAPI, the messages already read first, then the failure
        reading them raised, if any."""
        replay = iter(received)

        async def replaying_receive() -> Message:
            message = next(replay, None)
            if message is not None:
                return message
            if failure is not None:
                raise failure
            return await receive()

        await self.app(scope, replaying_receive, send)


def _json_content(scope: Scope) -> bool:
    """Whether the request's content type is ``application/json`` (what FastAPI parses as
    JSON too; other JSON types, rarer, take FastAPI's path)."""
    name: bytes
    value: bytes
    for name, value in scope["headers"]:
        if name == b"content-type":
            return value.partition(b";")[0].strip().lower() == b"application/json"
    return False


def _is_async(handler: Any) -> bool:
    """Whether calling ``handler`` gives a coroutine (partials and callable objects too)."""
    while isinstance(handler, functools.partial):
        handler = handler.func
    return inspect.iscoroutinefunction(handler) or inspect.iscoroutinefunction(
        getattr(handler, "__call__", None)  # noqa: B004 - the method, not callable()
    )


def _joined(received: list[Message]) -> bytes:
    return b"".join(message.get("body", b"") for message in received)
