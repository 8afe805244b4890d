"""The error answers every route may give, written into the OpenAPI document.

FastAPI documents a route's own responses and its 422; the answers given around the routes
(the browser guard's 403/408/415, the body limit's 413, bearer auth's 401) and the 4xx the
handlers raise are not in it, so a client generated from the document, or a fuzzer checking
answers against it, would take them for a broken server. Each operation gets the ones it
lacks, all in the one shape they share: ``{"detail": ...}``.
"""

from __future__ import annotations

from typing import Any, cast

__all__ = ["document_error_answers"]

_ERRORS = {
    "400": "The request names something invalid (an artifact name, a metric, an eval case).",
    "401": "The server needs a bearer token and none, or a wrong one, was sent.",
    "403": "Another site's Origin on a write or websocket, or a Host the server does not serve.",
    "404": "No such app, user's session, artifact, eval set or event.",
    "405": "The path exists with other methods.",
    "408": "The request body did not arrive in time.",
    "409": "The thing to create exists already, or the server has no service for it.",
    "413": "The body, or the record it would store, is over a size limit.",
    "415": "A write whose body is not JSON (Content-Type: application/json).",
    "422": "The body, a parameter or an id breaks the request's rules; `detail` says which.",
    "500": "The app failed to load (the answer gives the id of the server's log entry), or "
    "the turn failed (the answer carries the events so far).",
    "503": "The server is shutting down.",
}
_ERROR_SCHEMA: dict[str, Any] = {
    "title": "ErrorAnswer",
    "type": "object",
    "properties": {"detail": {"title": "Detail"}},
    "required": ["detail"],
}


def document_error_answers(spec: dict[str, Any]) -> None:
    """Add the error answers each operation of ``spec`` lacks (see the module docstring)."""
    spec.setdefault("components", {}).setdefault("schemas", {})["ErrorAnswer"] = _ERROR_SCHEMA
    reference = {"$ref": "#/components/schemas/ErrorAnswer"}
    for path_item in cast("dict[str, dict[str, Any]]", spec.get("paths", {})).values():
        for operation in path_item.values():
            if not isinstance(operation, dict):
                continue
            responses = cast("dict[str, Any]", operation).setdefault("responses", {})
            for status, description in _ERRORS.items():
                responses.setdefault(
                    status,
                    {
                        "description": description,
                        "content": {"application/json": {"schema": reference}},
                    },
                )
