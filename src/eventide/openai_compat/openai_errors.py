"""Errors in the OpenAI API's shape: ``{"error": {"message", "type", "param", "code"}}``.

The official SDKs turn the status code into an exception class (400 ``BadRequestError``, 404
``NotFoundError``, ...) and read the message from this body, so a client sees what went
wrong in the words below. The exception is :class:`eventide.errors.ProtocolInputError`.
"""

from __future__ import annotations

import json
from typing import Any

from starlette.requests import Request
from starlette.responses import Response

from eventide.errors import ProtocolInputError

__all__ = ["openai_error", "openai_error_handler", "openai_error_json"]


def openai_error(
    status: int,
    message: str,
    *,
    param: str | None = None,
    code: str | None = None,
    kind: str = "invalid_request_error",
) -> ProtocolInputError:
    """The error answering a request with ``status`` (400 bad input, 404 unknown model or
    response id, 500 a failed turn) and ``message`` (what happened and what to do)."""
    return ProtocolInputError(message, code=code, status=status, param=param, kind=kind)


def openai_error_json(
    message: str, *, kind: str, param: str | None = None, code: str | None = None
) -> dict[str, Any]:
    """``{"error": {...}}`` for ``message``."""
    return {"error": {"message": message, "type": kind, "param": param, "code": code}}


async def openai_error_handler(request: Request, exc: Exception) -> Response:
    """The FastAPI exception handler answering :class:`ProtocolInputError`."""
    assert isinstance(exc, ProtocolInputError)
    body = openai_error_json(exc.message, kind=exc.kind, param=exc.param, code=exc.code)
    return Response(
        json.dumps(body, ensure_ascii=False), status_code=exc.status, media_type="application/json"
    )
