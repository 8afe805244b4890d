"""Small helpers shared by the route modules: JSON bodies and the app-name check."""

from __future__ import annotations

from collections.abc import Sequence

from fastapi import HTTPException, Response
from pydantic import BaseModel

from eventide.errors import AppNotFoundError
from eventide.server.app_registry import AppRegistry

__all__ = ["json_response", "known_app"]


def json_response(data: BaseModel | Sequence[BaseModel], *, by_alias: bool = False) -> Response:
    """Serialize pydantic records straight to a JSON response (unset fields left out).

    This skips FastAPI's generic encoder, which walks every value in Python; events and
    sessions serialize in pydantic's compiled core instead.
    """
    if isinstance(data, BaseModel):
        body = data.model_dump_json(exclude_none=True, by_alias=by_alias)
    else:
        body = (
            "["
            + ",".join(d.model_dump_json(exclude_none=True, by_alias=by_alias) for d in data)
            + "]"
        )
    return Response(body, media_type="application/json")


def known_app(registry: AppRegistry, app_name: str) -> None:
    """Raise a 404 naming the known apps unless ``app_name`` is served."""
    try:
        registry.check_known(app_name)
    except AppNotFoundError as exc:
        raise HTTPException(404, detail=str(exc)) from exc
