"""Small helpers shared by the route modules: camelCase JSON bodies, request bodies, the
app-name check.

Responses use ADK's spelling: field names in camelCase (``appName``, ``lastUpdateTime``,
``inlineData``), keys that are data (state, tool arguments and results) as they were stored.
"""

from __future__ import annotations

import json
import logging
import secrets
from collections.abc import Sequence
from typing import Any, cast

from fastapi import HTTPException, Request, Response
from pydantic import BaseModel, ValidationError

from eventide.errors import AppLoadError, AppNotFoundError
from eventide.server.app_registry import AppRegistry
from eventide.server.camel_json import camel_json
from eventide.server.request_limits import json_depth_problem, json_text_shallow, too_deep

__all__ = [
    "app_load_failed",
    "internal_error",
    "json_response",
    "known_app",
    "read_json",
    "validation_error",
]

logger = logging.getLogger("eventide.server")


def json_response(data: Any, *, status_code: int = 200) -> Response:
    """A JSON response in ADK's spelling: records become camelCase, plain data is sent as is."""
    if isinstance(data, BaseModel):
        body = camel_json(data)
    elif isinstance(data, list | tuple) and data and isinstance(data[0], BaseModel):
        records = cast("Sequence[BaseModel]", data)
        body = "[" + ",".join(camel_json(record) for record in records) + "]"
    else:
        body = json.dumps(data, separators=(",", ":"), ensure_ascii=False)
    return Response(body, status_code=status_code, media_type="application/json")


def known_app(registry: AppRegistry, app_name: str) -> None:
    """Raise a 404 naming the known apps unless ``app_name`` is served."""
    try:
        registry.check_known(app_name)
    except AppNotFoundError as exc:
        raise HTTPException(404, detail=str(exc)) from exc


async def read_json(request: Request, *, required: bool) -> Any:
    """The request's JSON body (None when empty and not ``required``).

    Raises:
        HTTPException: 422 when the body is not JSON, is nested deeper than the limit
            (:data:`~eventide.server.request_limits.MAX_JSON_DEPTH`), or is empty but
            ``required``.
    """
    raw = await request.body()
    if not raw.strip():
        if required:
            raise HTTPException(
                422,
                detail=[{"type": "missing", "loc": ["body"], "msg": "A JSON body is required."}],
            )
        return None
    try:
        data = json.loads(raw)
    except RecursionError as exc:  # nested deeper than the parser goes
        raise HTTPException(422, detail=_too_deep(too_deep())) from exc
    except ValueError as exc:
        raise HTTPException(
            422,
            detail=[
                {
                    "type": "json_invalid",
                    "loc": ["body", getattr(exc, "pos", 0)],
                    "msg": f"The body is not valid JSON: {exc}. Send a JSON object.",
                }
            ],
        ) from exc
    problem = None if json_text_shallow(raw) else json_depth_problem(data)
    if problem is not None:
        raise HTTPException(422, detail=_too_deep(problem))
    return data


def _too_deep(problem: str) -> list[dict[str, Any]]:
    return [{"type": "json_too_deep", "loc": ["body"], "msg": problem}]


def validation_error(exc: ValidationError) -> HTTPException:
    """A 422 in FastAPI's shape for a body that parsed as JSON but has the wrong fields."""
    return HTTPException(
        422,
        detail=[
            {"type": e["type"], "loc": ["body", *e["loc"]], "msg": e["msg"]}
            for e in exc.errors(include_url=False, include_input=False)
        ],
    )


async def internal_error(request: Request, exc: Exception) -> Response:
    """The answer to an exception no route expected: a 500 with an error id, never the
    traceback (it goes to the server's log under that id)."""
    error_id = secrets.token_hex(4)
    logger.error(
        "%s %s failed (error id %s)", request.method, request.url.path, error_id, exc_info=exc
    )
    return json_response(
        {
            "detail": f"Internal error (error id {error_id}): the server's log has the "
            "traceback under that id. This is a bug; please report it with that log entry."
        },
        status_code=500,
    )


def app_load_failed(app_name: str, exc: AppLoadError) -> HTTPException:
    """A 500 for an app that fails to load, without its traceback or file paths.

    The loader's message holds the app's traceback, with absolute paths of the machine: it
    goes to the server's log under an id the response gives, so the developer can find it
    and a caller learns nothing of the file system.
    """
    error_id = secrets.token_hex(4)
    logger.error("App %r failed to load (error id %s): %s", app_name, error_id, exc)
    # The exception's own last line ("ModuleNotFoundError: No module named 'x'") says what
    # to fix; it is kept unless it names a path.
    last = str(exc).strip().rsplit("\n", 1)[-1].strip()
    said = f" {last}" if last and "/" not in last and "\\" not in last else ""
    return HTTPException(
        500,
        detail=f"App {app_name!r} failed to load (error id {error_id}):{said} The server's "
        "log has the whole error and its traceback under that id. Fix the app and retry.",
    )
