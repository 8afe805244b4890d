"""``eventide api-server`` and ``eventide web``: build the server for a folder of apps (with
its invocation queue, protocol endpoints and dev UI) and run it until interrupted."""

from __future__ import annotations

import dataclasses
import sys
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.text import Text

from eventide.cli.failures import consoles, failure, usage_failure
from eventide.cli.run_command import EXIT_OK
from eventide.errors import UsageError

__all__ = ["build_server", "check_a2a_extra", "invocation_queue", "is_loopback", "serve"]


def serve(
    *,
    web: bool,
    adk_ui: Path | None,
    apps_dir: Path,
    host: str,
    port: int,
    session_db: str | None,
    auth_token: str | None,
    cors: tuple[str, ...],
    allowed_hosts: tuple[str, ...],
    trace: bool,
    log_level: str,
    workers: str,
    dbos_db: str | None,
    openai: bool,
    ag_ui: bool,
    a2a: bool = False,
    a2a_send_wait: float | None = None,
) -> None:
    console, _ = consoles()
    try:
        queue = invocation_queue(workers, dbos_db, session_db)
        api, apps = build_server(
            apps_dir,
            session_db,
            auth_token,
            cors,
            trace,
            web,
            console,
            adk_ui,
            queue,
            openai=openai,
            ag_ui=ag_ui,
            a2a=a2a,
            a2a_send_wait=a2a_send_wait,
            allowed_hosts=(host, *allowed_hosts),
        )
    except UsageError as exc:
        raise usage_failure(str(exc)) from exc
    from eventide.server.serve import serve

    if auth_token is None and not is_loopback(host):
        console.print(
            Text(
                f"Warning: serving on {host} without --auth-token: anyone who can reach this "
                "address can run the agents and read every session. Set --auth-token (or "
                "EVENTIDE_AUTH_TOKEN), or serve on 127.0.0.1.",
                style="bold yellow",
            )
        )

    where = f"http://{host}:{port}" + ("/dev-ui/" if web else "/docs")
    console.print(f"Serving {len(apps)} app(s) from {apps_dir.resolve()} at {where}")
    try:
        serve(api, host=host, port=port, log_level=log_level)
    except KeyboardInterrupt:
        # uvicorn re-raises Ctrl-C after its graceful shutdown: for a server that is the
        # normal way to stop, not a failure.
        pass
    except OSError as exc:  # the port is taken, the host cannot be bound
        raise failure(f"Cannot serve on {host}:{port}: {exc}") from exc
    sys.exit(EXIT_OK)


def build_server(
    apps_dir: Path,
    session_db: str | None,
    auth_token: str | None,
    cors: tuple[str, ...],
    trace: bool,
    web: bool,
    console: Console,
    adk_ui: Path | None = None,
    invocation_queue: Any = None,
    *,
    openai: bool = False,
    ag_ui: bool = False,
    a2a: bool = False,
    a2a_send_wait: float | None = None,
    allowed_hosts: tuple[str, ...] = (),
) -> tuple[Any, dict[str, Any]]:
    from eventide.apps.demo_model import prepare_models
    from eventide.apps.loader import discover_apps
    from eventide.apps.services import build_services
    from eventide.cli.adk_apps import load_any_app
    from eventide.errors import EventideError
    from eventide.plugins.tracing_plugin import TracingPlugin, configure_tracing
    from eventide.server.api_server import create_app

    folders = discover_apps(apps_dir)
    services = None
    if session_db is not None:
        services = build_services(session_db=session_db, artifact_root=None, base_dir=apps_dir)
    provider = configure_tracing(console=trace)
    # Apps are loaded here, not lazily by the server, so that each one's models are chosen
    # (the demo model where none is configured) before the first request. An app that fails
    # to load is left to the server, which reports the error on use.
    apps: dict[str, Any] = {}
    demo: list[str] = []
    mapped: list[str] = []
    broken: list[str] = []
    for name, folder in folders.items():
        try:
            loaded = load_any_app(folder)
        except EventideError as exc:
            broken.append(f"App {name!r} will not load: {exc}")
            continue
        app = loaded.app
        if loaded.written_for_adk:
            mapped.append(name)
        setup = prepare_models(app.root_agent)
        if setup.uses_demo_model:
            demo.append(name)
        if provider is not None:
            plugins = [*app.plugins, TracingPlugin(tracer_provider=provider)]
            app = dataclasses.replace(app, plugins=plugins)
        apps[name] = app
    if demo:
        from eventide.apps.demo_model import HOW_TO_CONFIGURE

        console.print(
            Text(
                f"Using the offline demo model for {', '.join(demo)}: {HOW_TO_CONFIGURE}.",
                style="bold yellow",
            )
        )
    if mapped:
        console.print(
            Text(
                f"Written for google-adk, served on Eventide: {', '.join(mapped)} (their "
                "google.adk imports mapped in memory; `eventide migrate FOLDER` rewrites them).",
                style="dim",
            )
        )
    for message in broken:
        console.print(Text(message, style="yellow"))
    if a2a:
        check_a2a_extra()
    api = create_app(
        apps_dir=apps_dir,
        apps=apps,
        services=services,
        auth_token=auth_token,
        cors_origins=list(cors) or None,
        allowed_hosts=list(allowed_hosts),
        web=web,
        adk_ui=adk_ui,
        invocation_queue=invocation_queue,
        openai=openai,
        ag_ui=ag_ui,
        a2a=a2a,
        a2a_send_wait=a2a_send_wait,
    )
    return api, folders


def is_loopback(host: str) -> bool:
    """Whether ``host`` (an interface to bind) is reachable from this machine only."""
    import ipaddress

    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def check_a2a_extra() -> None:
    """``--a2a`` needs the a2a extra; say so up front rather than on the first request."""
    import importlib.util

    if importlib.util.find_spec("a2a") is None:
        raise UsageError(
            "--a2a needs the A2A SDK: pip install 'eventide[a2a]' (the official a2a-sdk)."
        )


def invocation_queue(workers: str, dbos_db: str | None, session_db: str | None) -> Any:
    """The DBOS queue turns are enqueued on with ``--workers dbos`` (None for local turns)."""
    if workers != "dbos":
        return None
    database = dbos_db or session_db
    if database is None or not database.startswith(("postgresql", "postgres")):
        raise UsageError(
            "--workers dbos needs the workers' PostgreSQL database: pass --session-db "
            "postgresql://... (and --dbos-db if DBOS's tables live elsewhere)."
        )
    try:
        from eventide.durable.dbos_workers import InvocationQueue
    except ImportError as exc:
        raise UsageError(
            "--workers dbos needs the dbos extra: pip install 'eventide[dbos]'."
        ) from exc
    return InvocationQueue(database)
