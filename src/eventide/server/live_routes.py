"""``/run_live``: ``adk api_server``'s websocket for live conversations, for text.

The path, query parameters (``app_name``, ``user_id``, ``session_id``, ``modalities``) and
messages are google-adk's: the client sends ADK ``LiveRequest`` JSON text frames
(``{"content": {...}}`` for a user message, ``{"close": true}`` to end), the server sends
each event as a JSON text frame in ADK's camelCase, partial chunks included, as soon as the
Runner has committed it. Eventide has no live (bidirectional audio/video) model connection,
so each ``content`` message runs one streamed turn (``Runner.run_async``); the turns of one
connection run one after the other, in the order sent.

What Eventide cannot do is refused with a close code and a reason that says so (the socket
is accepted first so the client sees them), before anything is stored: ``AUDIO``/``VIDEO``
modalities and ``blob`` (audio/video) messages (1003), an unknown app or session, a frame
that is not a ``LiveRequest`` (1008). A turn that fails sends ``{"error": ...,
"errorCode": ..., "errorMessage": ...}`` as ``/run_sse`` does; the connection stays open.
"""

from __future__ import annotations

import json
import logging
from typing import Any, cast

from fastapi import FastAPI, WebSocket, WebSocketDisconnect
from pydantic import ValidationError

from eventide.errors import AppLoadError, AppNotFoundError, SessionNotFoundError
from eventide.run_config import RunConfig, StreamingMode
from eventide.server.app_registry import AppRegistry
from eventide.server.camel_json import event_json
from eventide.server.json_responses import app_load_failed
from eventide.server.run_routes import InflightTurns, error_payload
from eventide.types import Content

__all__ = ["add_live_routes"]

logger = logging.getLogger("eventide.server")

# RFC 6455 close codes.
_UNSUPPORTED = 1003
_POLICY = 1008
_TEXT_ONLY = "Eventide's /run_live is text only (modalities=TEXT, content messages)."
_KNOWN = frozenset(
    {"content", "blob", "close", "activity_start", "activity_end", "activityStart", "activityEnd"}
)


def add_live_routes(api: FastAPI, registry: AppRegistry, inflight: InflightTurns) -> None:
    """Register the ``/run_live`` websocket on ``api``."""

    @api.websocket("/run_live")
    async def run_live(websocket: WebSocket) -> None:
        query = websocket.query_params
        app_name = query.get("app_name") or query.get("appName")
        user_id = query.get("user_id") or query.get("userId")
        session_id = query.get("session_id") or query.get("sessionId")
        modalities = {m.upper() for m in query.getlist("modalities")} or {"TEXT"}
        # Accepted first, so that a refusal's close code and reason reach the client (a
        # close before accepting is a bare HTTP 403).
        await websocket.accept()
        if not (app_name and user_id and session_id):
            await websocket.close(
                _POLICY, "Query parameters app_name, user_id and session_id are required."
            )
            return
        if modalities != {"TEXT"}:
            await websocket.close(_UNSUPPORTED, _TEXT_ONLY)
            return
        try:
            runner = await registry.runner(app_name)
        except AppNotFoundError as exc:
            await websocket.close(_POLICY, _reason(str(exc)))
            return
        except AppLoadError as exc:
            await websocket.close(_POLICY, _reason(str(app_load_failed(app_name, exc).detail)))
            return
        session = await runner.session_service.get_session(
            app_name=app_name, user_id=user_id, session_id=session_id
        )
        if session is None:
            await websocket.close(
                _POLICY,
                _reason(
                    f"Session {session_id!r} of user {user_id!r} not found in app "
                    f"{app_name!r}: create it first (POST .../sessions)."
                ),
            )
            return
        try:
            while True:
                message = _live_request(await websocket.receive_text())
                if isinstance(message, str):
                    await websocket.close(_POLICY, _reason(message))
                    return
                if message.get("close"):
                    await websocket.close()
                    return
                if message.get("blob") is not None:
                    await websocket.close(_UNSUPPORTED, _TEXT_ONLY)
                    return
                content = message.get("content")
                if content is None:
                    continue  # activity_start / activity_end: nothing to do for text
                await _turn(websocket, runner, inflight, user_id, session_id, content)
        except WebSocketDisconnect:
            return


async def _turn(
    websocket: WebSocket,
    runner: Any,
    inflight: InflightTurns,
    user_id: str,
    session_id: str,
    content: Content,
) -> None:
    inflight.enter()
    events = runner.run_async(
        user_id=user_id,
        session_id=session_id,
        new_message=content,
        run_config=RunConfig(streaming_mode=StreamingMode.SSE),
    )
    try:
        async for event in events:
            await websocket.send_text(event_json(event))
    except WebSocketDisconnect:
        raise
    except SessionNotFoundError as exc:  # deleted while the connection was open
        await websocket.send_text(json.dumps({"error": str(exc), **error_payload(exc)}))
    except Exception as exc:
        logger.exception("Live turn of app %r failed", runner.app_name)
        await websocket.send_text(
            json.dumps({"error": str(exc) or type(exc).__name__, **error_payload(exc)})
        )
    finally:
        await events.aclose()
        inflight.leave()


def _live_request(text: str) -> dict[str, Any] | str:
    """The frame as a LiveRequest (``content`` parsed as Content), or what is wrong with it."""
    try:
        data = json.loads(text)
    except ValueError as exc:
        return f"A frame is not JSON ({exc}): send a LiveRequest such as {{'content': ...}}."
    if not isinstance(data, dict):
        return "A frame must be a JSON object (a LiveRequest: content, blob or close)."
    request = cast("dict[str, Any]", data)
    unknown = sorted(set(request) - _KNOWN)
    if unknown:
        return f"Unknown LiveRequest field(s) {unknown}: use content, blob or close."
    if request.get("content") is not None:
        try:
            request["content"] = Content.model_validate(request["content"])
        except ValidationError as exc:
            first = exc.errors(include_url=False)[0]
            where = ".".join(str(p) for p in first["loc"])
            return f"content is not a Content ({where}: {first['msg']})."
    return request


def _reason(text: str) -> str:
    """A websocket close reason must fit in 123 bytes."""
    encoded = text.encode()
    return text if len(encoded) <= 123 else encoded[:120].decode(errors="ignore") + "..."
