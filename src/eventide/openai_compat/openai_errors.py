"""Errors in the OpenAI API's shape: ``{"error": {"message", "type", "param", "code"}}``.

The official SDKs turn the status code into an exception class (400 ``BadRequestError``, 404
``NotFoundError``, ...) and read the message from this body, so a client sees what went
wrong in the words below.
"""

from __future__ import annotations

import json
from typing import Any

from starlette.requests import Request
from starlette.responses import Response

__all__ = ["OpenAIError", "openai_error_handler", "openai_error_json"]


class OpenAIError(Exception):
    """A request the OpenAI-compatible endpoints refuse, answered in the OpenAI error shape.

    Args:
        status: the HTTP status (400 bad input, 404 unknown model or response, 503 ...).
        message: what happened and what to do.
        param: the request field at fault, when one is.
        code: a short machine-readable code (``model_not_found``...).
        kind: the error's ``type`` (``invalid_request_error``, ``server_error``...).
    """

    def __init__(
        self,
        status: int,
        message: str,
        *,
        param: str | None = None,
        code: str | None = None,
        kind: str = "invalid_request_error",
    ) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.param = param
        self.code = code
        self.kind = kind

    def body(self) -> dict[str, Any]:
        """The JSON body of the answer."""
        return openai_error_json(self.message, kind=self.kind, param=self.param, code=self.code)


def openai_error_json(
    message: str, *, kind: str, param: str | None = None, code: str | None = None
) -> dict[str, Any]:
    """``{"error": {...}}`` for ``message``."""
    return {"error": {"message": message, "type": kind, "param": param, "code": code}}


async def openai_error_handler(request: Request, exc: Exception) -> Response:
    """The FastAPI exception handler answering :class:`OpenAIError`."""
    assert isinstance(exc, OpenAIError)
    return Response(
        json.dumps(exc.body(), ensure_ascii=False),
        status_code=exc.status,
        media_type="application/json",
    )
