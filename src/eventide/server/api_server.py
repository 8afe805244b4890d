"""``create_app``: the FastAPI application that serves agent apps over HTTP.

Endpoints follow ``adk api_server`` and ``adk web``'s developer routes, with the same
methods, paths, status codes and camelCase JSON (``/list-apps``, ``/version``,
``/apps/{app}/app-info``, ``/apps/{app}/users/{user}/sessions/...``, ``/run``, ``/run_sse``,
artifacts, memory, ``/dev/apps/{app}/...`` traces and agent graph), plus ``/health`` and
``/debug/model_request/{event_id}``. The OpenAPI spec is at ``/openapi.json`` (browsable at
``/docs``).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncGenerator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from fastapi import FastAPI, HTTPException, Response
from fastapi.responses import RedirectResponse

from eventide.apps.app import App
from eventide.apps.prepare_ahead import prepare_models_ahead
from eventide.artifacts.base_artifact_service import BaseArtifactService
from eventide.artifacts.in_memory_artifact_service import InMemoryArtifactService
from eventide.memory.base_memory_service import BaseMemoryService
from eventide.memory.in_memory_memory_service import InMemoryMemoryService
from eventide.plugins.base_plugin import BasePlugin
from eventide.server.app_registry import AppRegistry, ServicesLike
from eventide.server.artifact_routes import add_artifact_routes
from eventide.server.bearer_auth import BearerAuthMiddleware
from eventide.server.body_limit import DEFAULT_MAX_BODY_BYTES, BodyLimitMiddleware
from eventide.server.browser_guard import DEFAULT_BODY_TIMEOUT, BrowserGuardMiddleware
from eventide.server.dev_routes import add_dev_routes
from eventide.server.eval_routes import add_eval_routes
from eventide.server.history_routes import add_history_routes
from eventide.server.info_routes import add_info_routes, detailed_app_list
from eventide.server.json_responses import internal_error, json_response
from eventide.server.live_routes import add_live_routes
from eventide.server.model_request_recorder import ModelRequestRecorder
from eventide.server.openapi_errors import document_error_answers
from eventide.server.protocol_fast_path import ProtocolFastPath, ProtocolHandler
from eventide.server.queued_turns import QueuedTurns
from eventide.server.request_limits import IdCheckedRoute
from eventide.server.run_routes import InflightTurns, TurnRoutes, Turns, add_run_routes
from eventide.server.session_routes import add_session_routes
from eventide.server.telemetry_consent import TelemetryConsent, add_telemetry_consent_routes
from eventide.server.trace_store import TraceStore, build_trace_recording
from eventide.sessions.base_session_service import BaseSessionService
from eventide.sessions.in_memory_session_service import InMemorySessionService
from eventide.web import STATIC_DIR as WEB_STATIC

if TYPE_CHECKING:
    from eventide.durable.dbos_workers import InvocationQueue

__all__ = ["create_app"]

logger = logging.getLogger("eventide.server")

_OPEN_PATHS = ("/", "/health", "/docs", "/docs/oauth2-redirect", "/redoc", "/openapi.json")
_A2A_CARD_PATHS = ("/.well-known/agent-card.json", "/.well-known/agent.json")
# How long shutdown waits for turns that uvicorn cancelled to finish cleaning up before the
# services they write to are closed.
_CANCELLED_TURNS_GRACE = 5.0


@dataclass(slots=True, kw_only=True)
class _InMemoryServices:
    session_service: BaseSessionService
    artifact_service: BaseArtifactService | None
    memory_service: BaseMemoryService | None


def create_app(
    *,
    apps_dir: str | Path | None = None,
    apps: dict[str, App] | None = None,
    services: ServicesLike | None = None,
    auth_token: str | None = None,
    cors_origins: list[str] | None = None,
    allowed_hosts: list[str] | None = None,
    web: bool = False,
    adk_ui: str | Path | None = None,
    max_body_bytes: int = DEFAULT_MAX_BODY_BYTES,
    body_timeout: float = DEFAULT_BODY_TIMEOUT,
    traces: bool = True,
    invocation_queue: InvocationQueue | None = None,
    openai: bool = False,
    ag_ui: bool = False,
    a2a: bool = False,
    a2a_send_wait: float | None = None,
) -> FastAPI:
    """Build the HTTP API (and optionally the dev web UI) for a set of agent apps.

    Each app gets one ``Runner``, built on first use and reused by every request.

    Args:
        apps_dir: a folder of app folders (see :mod:`eventide.apps.loader`); apps are
            discovered on each listing and loaded on first use.
        apps: apps given directly, by the name they are served under.
        services: the session, artifact and memory services shared by all apps. By default:
            with ``apps_dir``, SQLite sessions in ``<apps_dir>/.eventide/sessions.db`` and
            artifact files under ``<apps_dir>/.eventide/artifacts``; without it, in memory.
            For several server processes serving the same sessions, pass services built on
            one PostgreSQL database (``build_services(session_db="postgresql+asyncpg://...")``).
        auth_token: when set, every endpoint but ``/health``, the docs and the dev UI's static
            files needs ``Authorization: Bearer <auth_token>``.
        cors_origins: origins allowed to call the API from a browser (``["*"]`` for any);
            None adds no CORS headers. These origins, and the server's own, are the only
            ones a browser may write from or open ``/run_live`` from (see
            :mod:`eventide.server.browser_guard`).
        allowed_hosts: host names served besides loopback names and IP addresses (the
            ``Host`` check against DNS rebinding); ``["*"]`` serves any name.
        web: also serve the dev web UI under ``/dev-ui/`` (``/`` redirects there).
        adk_ui: serve the UI found in this folder under ``/dev-ui/`` instead of Eventide's
            own: the built dev UI of an installed google-adk (see
            :func:`eventide.server.adk_ui.find_adk_ui`). Implies ``web``.
        max_body_bytes: request bodies longer than this are refused with a 413.
        body_timeout: seconds a client may take between two parts of a request body
            before it is answered 408.
        traces: record each turn's spans in memory (when the OpenTelemetry SDK is
            installed) and serve them on ``/dev/apps/{app}/debug/trace/...`` for the dev
            UIs' trace views.
        invocation_queue: run ``/run`` and ``/run_sse`` turns on DBOS workers through this
            queue (``eventide.durable.dbos_workers``) instead of in this process; the
            services must use the workers' session database.
        openai: also serve the OpenAI-compatible ``/v1/chat/completions``,
            ``/v1/responses`` and ``/v1/models`` (see :mod:`eventide.openai_compat`).
        ag_ui: also serve ``POST /ag-ui/{app_name}`` (see :mod:`eventide.ag_ui`).
        a2a: also serve every app as an A2A agent at ``/a2a/{app_name}``, its agent card at
            ``/a2a/{app_name}/.well-known/agent-card.json`` (needs the ``a2a`` extra; see
            :mod:`eventide.a2a`). The cards stay readable without the token.
        a2a_send_wait: with ``a2a``, a blocking ``message/send`` answers after this many
            seconds with the task still working (None: when it ends or pauses).

    Raises:
        AppLoadError: ``apps_dir`` is not a folder.
        ValueError: neither ``apps_dir`` nor ``apps`` was given.
    """
    if apps_dir is None and not apps:
        raise ValueError("create_app needs apps_dir=..., apps={...} or both.")
    folder = Path(apps_dir).expanduser().resolve() if apps_dir is not None else None
    if folder is not None:
        from eventide.apps.loader import discover_apps

        discover_apps(folder)  # fail now, with the loader's message, if it is not a folder
    owns_services = services is None
    resolved = services if services is not None else _default_services(folder)
    recorder = ModelRequestRecorder()
    plugins: list[BasePlugin] = [recorder]
    trace_store: TraceStore | None = None
    if traces:
        trace_store = TraceStore()
        recording = build_trace_recording(trace_store)
        if recording is None:
            trace_store = None
        else:
            plugins.extend(recording)
    registry = AppRegistry(services=resolved, apps_dir=folder, apps=apps, plugins=plugins)
    inflight = InflightTurns()
    a2a_apps = None
    if a2a:
        from eventide.a2a.served_apps import A2aApps

        a2a_apps = A2aApps(registry, bearer_auth=auth_token is not None, send_wait=a2a_send_wait)

    @asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncGenerator[None, None]:
        # The provider SDKs' import and client set-up for the apps given directly run in the
        # background from start-up on, not inside the first request's turn (about 0.3 s for
        # the openai SDK). Apps found in apps_dir load on first use and pay it then; with an
        # invocation queue the workers call the models, not this process.
        direct = (apps or {}).values() if invocation_queue is None else ()
        preparing = [prepare_models_ahead(app.root_agent) for app in direct]
        yield
        for models in preparing:
            await asyncio.to_thread(models.wait)
        # uvicorn has let running turns finish (or cancelled them past its graceful-shutdown
        # timeout); wait for cancelled ones to unwind before closing what they write to.
        if not await inflight.wait_idle(_CANCELLED_TURNS_GRACE):
            logger.warning("%d turn(s) still unwinding at shutdown", inflight.count)
        if a2a_apps is not None:
            await a2a_apps.close()
        await registry.close()
        if owns_services:
            await _close_services(resolved)

    from eventide import __version__

    api = FastAPI(
        title="Eventide API",
        version=__version__,
        summary="Run Eventide agent apps over HTTP: sessions, turns (JSON or SSE), artifacts.",
        lifespan=lifespan,
    )
    # Ids in paths are checked by every route (length, characters): see IdCheckedRoute.
    api.router.route_class = IdCheckedRoute
    # Starlette's own answer to an unexpected exception is plain text without an id.
    api.add_exception_handler(Exception, internal_error)
    api.state.eventide_registry = registry
    api.state.eventide_recorder = recorder
    api.state.eventide_inflight = inflight
    # Requests are matched against the routes in order: the turn routes, which take nearly all
    # the traffic, come first (no other route's path can match theirs). Well-formed turn
    # requests do not even reach the router: TurnRoutes below serves them.
    queued = QueuedTurns(invocation_queue) if invocation_queue is not None else None
    turns = Turns(registry, inflight, queued)
    add_run_routes(api, turns)

    @api.get("/health", summary="Liveness check (never needs a token)", tags=["server"])
    async def health() -> dict[str, str]:
        """``{"status": "ok"}`` while the server accepts requests."""
        return {"status": "ok", "version": __version__}

    @api.get("/list-apps", summary="List the apps served", tags=["server"], response_model=None)
    async def list_apps(detailed: bool = False) -> list[str] | Response:
        """The names of the apps this server serves, sorted; with ``?detailed=true``,
        ``{"apps": [...]}`` describing each app that loads, as ``adk api_server`` answers."""
        if detailed:
            return json_response({"apps": await detailed_app_list(registry)})
        return registry.names()

    @api.get(
        "/debug/model_request/{event_id}",
        summary="The request sent to the model for an event",
        tags=["debug"],
        responses={404: {"description": "No request recorded for that event."}},
    )
    async def model_request(event_id: str) -> Any:
        """The ``LlmRequest`` (model, contents, config) whose response is ``event_id``.

        Only model-response events have one, and the server keeps the most recent
        ones (in memory, per process).
        """
        data = recorder.request_json(event_id)
        if data is None:
            raise HTTPException(
                404,
                detail=f"No model request recorded for event {event_id!r}: only events "
                "produced by a model call have one, and this server process keeps the last "
                f"{recorder.max_requests}.",
            )
        return data

    _use_camel_case_schemas(api)
    add_info_routes(api, registry)
    add_session_routes(api, registry)
    add_live_routes(api, registry, inflight)
    add_artifact_routes(api, registry)
    add_history_routes(api, registry)
    add_eval_routes(api, registry)
    add_dev_routes(api, registry, traces=trace_store, recorder=recorder)
    if a2a_apps is not None:
        api.router.routes.extend(a2a_apps.routes())
    consent_file = folder / ".eventide" / "ui-config.json" if folder is not None else None
    add_telemetry_consent_routes(api, TelemetryConsent(consent_file))
    # Protocol adapters: loaded only when asked for (their packages are optional).
    exact: dict[str, ProtocolHandler] = {}
    prefixes: dict[str, ProtocolHandler] = {}
    if openai:
        from eventide.openai_compat import add_openai_routes

        exact.update(add_openai_routes(api, registry, inflight))
    if ag_ui:
        from eventide.ag_ui import add_ag_ui_routes

        prefixes.update(add_ag_ui_routes(api, registry, inflight))

    open_prefixes: tuple[str, ...] = ()
    if web or adk_ui is not None:
        from starlette.staticfiles import StaticFiles

        @api.get("/", include_in_schema=False)
        async def root() -> RedirectResponse:
            return RedirectResponse("/dev-ui/")

        @api.get("/dev-ui", include_in_schema=False)
        async def dev_ui() -> RedirectResponse:
            return RedirectResponse("/dev-ui/")

        folder_served = WEB_STATIC if adk_ui is None else Path(adk_ui)
        api.mount("/dev-ui", StaticFiles(directory=folder_served, html=True), name="dev-ui")
        open_prefixes = ("/dev-ui",)

    # Middleware added last runs first: CORS must see preflights before auth refuses them
    # and must add its headers to 401 answers too; auth refuses before a body is read; the
    # turn routes' fast path, innermost, sees only requests all of them let through.
    # The app's exception handlers (its own dict: handlers registered later count too).
    api.add_middleware(TurnRoutes, turns=turns, exception_handlers=api.exception_handlers)
    if exact or prefixes:
        api.add_middleware(
            ProtocolFastPath,
            exact=exact,
            prefixes=prefixes,
            exception_handlers=api.exception_handlers,
        )
    api.add_middleware(BodyLimitMiddleware, max_bytes=max_body_bytes)
    if auth_token is not None:
        api.add_middleware(
            BearerAuthMiddleware,
            token=auth_token,
            open_paths=_OPEN_PATHS,
            open_prefixes=open_prefixes,
            # A2A agent cards are discovery documents: they say how to authenticate.
            open_suffixes=_A2A_CARD_PATHS if a2a else (),
        )
    # Inside CORS, so that preflights are answered and refusals carry CORS headers; before
    # auth, so that a foreign page learns nothing even of whether a token is needed.
    api.add_middleware(
        BrowserGuardMiddleware,
        allowed_hosts=allowed_hosts or (),
        allowed_origins=cors_origins or (),
        body_timeout=body_timeout,
    )
    if cors_origins is not None:
        from starlette.middleware.cors import CORSMiddleware

        api.add_middleware(
            CORSMiddleware,
            allow_origins=cors_origins,
            # Browsers refuse credentials with a wildcard origin; bearer tokens are headers,
            # not credentials, so the wildcard still works with auth.
            allow_credentials="*" not in cors_origins,
            allow_methods=["*"],
            allow_headers=["*"],
        )
    return api


def _default_services(folder: Path | None) -> ServicesLike:
    if folder is None:
        return _InMemoryServices(
            session_service=InMemorySessionService(),
            artifact_service=InMemoryArtifactService(),
            memory_service=InMemoryMemoryService(),
        )
    from eventide.apps.services import build_services

    # SQLite sessions in <apps_dir>/.eventide/sessions.db, artifact files beside them.
    built: ServicesLike = build_services(session_db=None, artifact_root=None, base_dir=folder)
    return built


async def _close_services(services: ServicesLike) -> None:
    for service in (services.session_service, services.artifact_service, services.memory_service):
        if service is None:
            continue
        try:
            await service.close()
        except Exception:
            logger.exception("Closing %s failed", type(service).__name__)


def _use_camel_case_schemas(api: FastAPI) -> None:
    """Describe the JSON the API sends and accepts with camelCase field names.

    FastAPI documents Eventide's records by their snake_case field names; the API sends
    camelCase (and accepts both), so property names in the generated schemas are renamed.
    Data fields (state, tool arguments) have no fixed properties, so nothing of them changes.
    """
    from fastapi.openapi.utils import get_openapi

    def camel(name: str) -> str:
        head, *rest = name.split("_")
        return head + "".join(word[:1].upper() + word[1:] for word in rest)

    def openapi() -> dict[str, Any]:
        if api.openapi_schema is not None:
            return api.openapi_schema
        spec = get_openapi(
            title=api.title,
            version=api.version,
            summary=api.summary,
            routes=api.routes,
        )
        for schema in spec.get("components", {}).get("schemas", {}).values():
            properties = schema.get("properties")
            if isinstance(properties, dict):
                named = cast("dict[str, Any]", properties)
                schema["properties"] = {camel(key): value for key, value in named.items()}
            if isinstance(schema.get("required"), list):
                schema["required"] = [camel(key) for key in schema["required"]]
        document_error_answers(spec)
        api.openapi_schema = spec
        return spec

    api.openapi = openapi  # type: ignore[method-assign]  # FastAPI's documented override
