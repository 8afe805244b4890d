"""ADK's UI asks once whether it may send usage data, and asks again only while the server
has no answer: ``GET /config/telemetry`` answers ``{"telemetry": null}`` until the UI posts
the user's choice, then the choice. Eventide sends no usage data whatever the answer; the
answer is kept so the UI behaves as it does against ``adk web`` (which keeps it in the
user's ADK config): in ``<apps_dir>/.eventide/ui-config.json`` when the server has an apps
folder, else for the life of the server process.

``POST /config/telemetry`` needs the header ``x-adk-telemetry-request: true`` (as ``adk web``
does, so that a plain cross-site form cannot set it) and a body ``{"telemetry": true|false}``.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any, cast

from fastapi import FastAPI, HTTPException, Request

from eventide.server.json_responses import read_json

__all__ = ["TelemetryConsent", "add_telemetry_consent_routes"]

logger = logging.getLogger("eventide.server")

_HEADER = "x-adk-telemetry-request"


class TelemetryConsent:
    """The UI user's answer (None: not asked yet), kept in ``file`` when one is given."""

    def __init__(self, file: Path | None) -> None:
        self.file = file
        self._answer: bool | None = None

    def get(self) -> bool | None:
        if self.file is None:
            return self._answer
        try:
            stored = json.loads(self.file.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return None
        except (OSError, ValueError) as exc:
            logger.warning("Ignoring unreadable %s: %s", self.file, exc)
            return None
        return _answer(stored)

    def set(self, answer: bool) -> None:
        self._answer = answer
        if self.file is None:
            return
        self.file.parent.mkdir(parents=True, exist_ok=True)
        self.file.write_text(json.dumps({"telemetry": answer}) + "\n", encoding="utf-8")


def _answer(data: object) -> bool | None:
    """``data["telemetry"]`` when ``data`` is an object holding a boolean there."""
    if not isinstance(data, dict):
        return None
    value = cast("dict[str, object]", data).get("telemetry")
    return value if isinstance(value, bool) else None


def add_telemetry_consent_routes(api: FastAPI, consent: TelemetryConsent) -> None:
    """``GET`` and ``POST /config/telemetry``, as ``adk web`` answers them."""

    @api.get("/config/telemetry", include_in_schema=False)
    async def get_consent() -> dict[str, Any]:
        return {"telemetry": consent.get()}

    @api.post("/config/telemetry", include_in_schema=False)
    async def set_consent(request: Request) -> dict[str, Any]:
        if request.headers.get(_HEADER) != "true":
            raise HTTPException(
                400,
                detail=f"Forbidden: missing required security header {_HEADER}: true "
                "(ADK's UI sends it; add it to set the usage-data answer).",
            )
        answer = _answer(await read_json(request, required=True))
        if answer is None:
            raise HTTPException(
                422,
                detail='The body must be {"telemetry": true} or {"telemetry": false}.',
            )
        consent.set(answer)
        return {"telemetry": answer}
