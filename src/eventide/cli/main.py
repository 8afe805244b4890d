"""The ``eventide`` command: scaffold, chat with, evaluate and serve agent apps.

Exit codes (the same for every command, so scripts can rely on them):

- 0: success.
- 1: a runtime error: the model reported an error, a tool or the app's code failed, a
  storage backend failed; for ``eval``: a case did not pass.
- 2: a usage error: bad options, an unknown or broken app, a bad database URL, a model that
  is not configured.
- 130: interrupted (Ctrl-C) during ``run``; servers exit 0 after a graceful shutdown.
"""

from __future__ import annotations

import dataclasses
import sys
from pathlib import Path
from typing import Any

import click
from rich.console import Console
from rich.text import Text

from eventide.cli.run_command import (
    EXIT_ERROR,
    EXIT_INTERRUPTED,
    EXIT_OK,
    EXIT_USAGE,
    RunOptions,
    run_app,
)
from eventide.errors import UsageError

__all__ = ["cli", "main"]

_EPILOG = """\b
Exit codes: 0 ok; 1 runtime error (model error event, tool or app failure,
storage failure) or a failed eval; 2 usage error (bad option, unknown or broken app, bad URL,
model not configured); 130 interrupted.

\b
Models: an app's agents use the model named in their code, or EVENTIDE_MODEL,
or a default for the provider key that is set (GOOGLE_API_KEY/GEMINI_API_KEY,
OPENAI_API_KEY (+ OPENAI_BASE_URL for a local OpenAI-compatible server),
ANTHROPIC_API_KEY). With none, apps run on the offline demo model, and the
first line of output says so.
"""


def _consoles() -> tuple[Console, Console]:
    return Console(highlight=False, soft_wrap=True), Console(
        stderr=True, highlight=False, soft_wrap=True
    )


class _Failure(click.ClickException):
    """A runtime error already worded for people (exit code 1)."""

    exit_code = EXIT_ERROR

    def show(self, file: Any = None) -> None:
        _, errors = _consoles()
        errors.print(Text(f"Error: {self.format_message()}", style="bold red"))


class _UsageFailure(_Failure):
    """A usage error already worded for people (exit code 2)."""

    exit_code = EXIT_USAGE


@click.group(epilog=_EPILOG, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="eventide", prog_name="eventide")
def cli() -> None:
    """Eventide: scaffold, chat with and serve LLM agent apps.

    An app is a folder whose agent.py defines `root_agent` (or `app = App(...)`);
    `eventide new NAME` creates one that runs at once.
    """


@cli.command(epilog=_EPILOG)
@click.argument("name")
@click.option(
    "--dir",
    "parent",
    type=click.Path(file_okay=False, path_type=Path),
    default=Path("."),
    show_default=True,
    help="The folder to create the app folder in.",
)
def new(name: str, parent: Path) -> None:
    """Create the app folder NAME with an agent and a tool, ready to run."""
    from eventide.cli.scaffold import create_app_folder

    console, _ = _consoles()
    try:
        folder = create_app_folder(name, parent)
    except UsageError as exc:
        raise _UsageFailure(str(exc)) from exc
    console.print(f"Created {folder}/ (agent.py, __init__.py, .gitignore).")
    console.print("Chat with it:")
    console.print(f"  eventide run {folder}")
    console.print(f'  eventide run {folder} --query "what is the weather in Paris?"')


@cli.command(epilog=_EPILOG)
@click.argument("app")
@click.option("--query", "-q", help="Run one turn with this message, print it, and exit.")
@click.option("--session", "session_id", help="Resume this session (created if missing).")
@click.option("--user", "user_id", default="user", show_default=True, help="The user id.")
@click.option(
    "--session-db",
    envvar="EVENTIDE_SESSION_DB",
    help="Database URL for sessions (sqlite+aiosqlite:///file.db, postgresql://..., or "
    "memory:). Default: SQLite in <app folder>/.eventide/sessions.db.",
)
@click.option("--trace", is_flag=True, help="Print OpenTelemetry spans to stderr.")
@click.option(
    "--no-stream", is_flag=True, help="Print each answer when complete instead of streaming."
)
@click.option(
    "--rewind-to",
    metavar="TURN",
    help="First rewind --session to before TURN (a turn number, 1 = the first, or an "
    "invocation id): state and artifacts go back; the log keeps every event.",
)
def run(
    app: str,
    query: str | None,
    session_id: str | None,
    user_id: str,
    session_db: str | None,
    trace: bool,
    no_stream: bool,
    rewind_to: str | None,
) -> None:
    """Chat with APP in the terminal (an app folder, a .py file or module:attribute).

    Answers stream as they arrive; tool calls, tool results, transfers and state
    changes show as short lines. Type 'exit' or press Ctrl-D to quit; '/turns' lists the
    session's turns and '/rewind TURN' rewinds to before one.
    """
    console, errors = _consoles()
    options = RunOptions(
        app=app,
        query=query,
        session_id=session_id,
        user_id=user_id,
        session_db=session_db,
        trace=trace,
        stream=not no_stream,
        rewind_to=rewind_to,
    )
    try:
        code = run_app(options, console, errors)
    except KeyboardInterrupt:
        code = EXIT_INTERRUPTED
    except UsageError as exc:
        raise _UsageFailure(str(exc)) from exc
    except Exception as exc:
        raise _Failure(f"{type(exc).__name__}: {exc}") from exc
    sys.exit(code)


@cli.command("eval", epilog=_EPILOG)
@click.argument("app")
@click.argument("eval_set", metavar="EVALSET")
@click.option(
    "--metric",
    "metrics",
    multiple=True,
    metavar="NAME=THRESHOLD",
    help="Score this metric with this threshold (repeatable): tool_trajectory_avg_score, "
    "response_match_score. Default: both, at 1.0 and 0.8.",
)
@click.option(
    "--config",
    type=click.Path(dir_okay=False, path_type=Path),
    help='Thresholds as {"criteria": {"metric": threshold}}. Default: test_config.json '
    "beside the eval set, if any.",
)
@click.option("--details", is_flag=True, help="Show every turn, not only failing cases'.")
@click.option("--no-save", is_flag=True, help="Do not store the result in the app's folder.")
def eval_(
    app: str,
    eval_set: str,
    metrics: tuple[str, ...],
    config: Path | None,
    details: bool,
    no_save: bool,
) -> None:
    """Run the eval set EVALSET against APP and report each case.

    EVALSET is an .evalset.json file or the id of an eval set in the app's folder
    (google-adk's format); add :case1,case2 to run only those cases. Each case replays
    its conversation in a fresh in-memory session and scores every turn's tool calls and
    final response. Exit code 0 when every case passes, 1 when one does not.
    """
    from eventide.cli.eval_command import EvalOptions, run_eval_command

    console, _ = _consoles()
    options = EvalOptions(
        app=app,
        eval_set=eval_set,
        metrics=metrics,
        config=config,
        details=details,
        save=not no_save,
    )
    try:
        passed = run_eval_command(options, console)
    except UsageError as exc:
        raise _UsageFailure(str(exc)) from exc
    sys.exit(EXIT_OK if passed else EXIT_ERROR)


def _serve_options(command: Any) -> Any:
    options = [
        click.argument(
            "apps_dir", type=click.Path(file_okay=False, path_type=Path), default=Path(".")
        ),
        click.option("--host", default="127.0.0.1", show_default=True, help="Interface."),
        click.option("--port", default=8000, show_default=True, type=int, help="TCP port."),
        click.option(
            "--session-db",
            envvar="EVENTIDE_SESSION_DB",
            help="Database URL for sessions (sqlite+aiosqlite:///..., postgresql://..., "
            "memory:). Default: SQLite in APPS_DIR/.eventide/sessions.db. Give several "
            "servers one PostgreSQL URL to serve the same sessions.",
        ),
        click.option(
            "--auth-token",
            envvar="EVENTIDE_AUTH_TOKEN",
            help="Require 'Authorization: Bearer TOKEN' on API calls.",
        ),
        click.option(
            "--cors",
            "cors",
            multiple=True,
            help="An origin allowed to call the API from a browser (repeatable; '*' for any).",
        ),
        click.option(
            "--allowed-host",
            "allowed_hosts",
            multiple=True,
            help="A host name the server answers to besides loopback names and IP addresses "
            "(repeatable; '*' for any, behind a proxy that checks Host).",
        ),
        click.option("--trace", is_flag=True, help="Print OpenTelemetry spans to stderr."),
        click.option(
            "--log-level",
            type=click.Choice(["debug", "info", "warning", "error"]),
            default="info",
            show_default=True,
            help="The server's log level ('warning' drops the line per request).",
        ),
        click.option(
            "--workers",
            type=click.Choice(["local", "dbos"]),
            default="local",
            show_default=True,
            help="Where turns run: in this process, or enqueued for `eventide worker` "
            "processes (DBOS over PostgreSQL; needs --session-db on the workers' database).",
        ),
        click.option(
            "--dbos-db",
            envvar="EVENTIDE_DBOS_DB",
            help="With --workers dbos: PostgreSQL URL of the DBOS tables (default: --session-db).",
        ),
        click.option(
            "--openai",
            is_flag=True,
            help="Also serve the OpenAI-compatible /v1/chat/completions, /v1/responses and "
            "/v1/models (a model is an app).",
        ),
        click.option(
            "--ag-ui",
            "ag_ui",
            is_flag=True,
            help="Also serve AG-UI at POST /ag-ui/APP (needs the ag-ui extra).",
        ),
        click.option(
            "--a2a",
            is_flag=True,
            help="Also serve every app as an A2A agent at /a2a/APP (card at "
            "/a2a/APP/.well-known/agent-card.json; needs the a2a extra).",
        ),
        click.option(
            "--a2a-send-wait",
            type=float,
            envvar="EVENTIDE_A2A_SEND_WAIT",
            help="With --a2a: answer a blocking message/send after this many seconds with "
            "the task still working (default: when it ends or pauses).",
        ),
    ]
    for option in reversed(options):
        command = option(command)
    return command


@cli.command(epilog=_EPILOG)
@click.argument("apps_dir", type=click.Path(file_okay=False, path_type=Path), default=Path("."))
@click.option(
    "--database",
    envvar="EVENTIDE_DBOS_DB",
    required=True,
    help="PostgreSQL URL of the DBOS tables (the invocation queue); the same for every "
    "worker and server of one deployment.",
)
@click.option(
    "--session-db",
    envvar="EVENTIDE_SESSION_DB",
    help="Database URL for sessions (default: --database).",
)
@click.option(
    "--executor-id",
    envvar="EVENTIDE_EXECUTOR_ID",
    required=True,
    help="This worker's id, unique among the workers (e.g. the host name and a number).",
)
@click.option("--concurrency", type=int, help="Invocations running at once, all workers.")
@click.option("--worker-concurrency", type=int, help="Invocations running at once here.")
def worker(
    apps_dir: Path,
    database: str,
    session_db: str | None,
    executor_id: str,
    concurrency: int | None,
    worker_concurrency: int | None,
) -> None:
    """Run the invocations queued for the apps in APPS_DIR (DBOS workers over PostgreSQL)."""
    from eventide.cli.worker_command import run_worker

    try:
        run_worker(
            apps_dir=apps_dir,
            database=database,
            session_db=session_db,
            executor_id=executor_id,
            concurrency=concurrency,
            worker_concurrency=worker_concurrency,
        )
    except UsageError as exc:
        raise _UsageFailure(str(exc)) from exc
    sys.exit(EXIT_OK)


@cli.command("api-server", epilog=_EPILOG)
@_serve_options
def api_server(**kwargs: Any) -> None:
    """Serve the apps in APPS_DIR over HTTP (/run, /run_sse, sessions, artifacts)."""
    _serve(web=False, adk_ui=None, **kwargs)


@cli.command("mcp-server", epilog=_EPILOG)
@click.argument("apps_dir", type=click.Path(file_okay=False, path_type=Path), default=Path("."))
@click.option(
    "--http",
    "http_port",
    type=int,
    metavar="PORT",
    help="Serve streamable HTTP on this port (MCP at http://HOST:PORT/mcp) instead of stdio.",
)
@click.option("--host", default="127.0.0.1", show_default=True, help="Interface, with --http.")
@click.option(
    "--session-db",
    envvar="EVENTIDE_SESSION_DB",
    help="Database URL for sessions. Default: SQLite in APPS_DIR/.eventide/sessions.db.",
)
@click.option(
    "--user", "user_id", default="mcp", show_default=True, help="The user the sessions belong to."
)
def mcp_server(
    apps_dir: Path, http_port: int | None, host: str, session_db: str | None, user_id: str
) -> None:
    """Serve the apps in APPS_DIR as MCP tools: each app's root agent is a tool taking a
    request and an optional session_id; artifacts are resources. Stdio by default (for
    Claude Desktop, IDEs), streamable HTTP with --http."""
    from eventide.cli.mcp_server_command import run_mcp_server

    try:
        run_mcp_server(
            apps_dir=apps_dir,
            http_port=http_port,
            host=host,
            session_db=session_db,
            user_id=user_id,
        )
    except UsageError as exc:
        raise _UsageFailure(str(exc)) from exc
    except KeyboardInterrupt:
        pass
    sys.exit(EXIT_OK)


@cli.command(epilog=_EPILOG)
@_serve_options
@click.option(
    "--adk-ui",
    is_flag=True,
    help="Serve the dev UI of an installed google-adk instead of Eventide's own.",
)
@click.option(
    "--adk-python",
    type=click.Path(dir_okay=False, path_type=Path),
    help="With --adk-ui: the Python of another environment that has google-adk.",
)
def web(adk_ui: bool, adk_python: Path | None, **kwargs: Any) -> None:
    """Serve the apps in APPS_DIR with the dev web UI at http://HOST:PORT/dev-ui/."""
    ui_folder = None
    if adk_ui or adk_python is not None:
        from eventide.server.adk_ui import find_adk_ui

        try:
            ui_folder = find_adk_ui(adk_python)
        except UsageError as exc:
            raise _UsageFailure(str(exc)) from exc
    _serve(web=True, adk_ui=ui_folder, **kwargs)


def _serve(
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
    console, _ = _consoles()
    try:
        queue = _invocation_queue(workers, dbos_db, session_db)
        api, apps = _build_server(
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
        raise _UsageFailure(str(exc)) from exc
    from eventide.server.serve import serve

    if auth_token is None and not _is_loopback(host):
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
        raise _Failure(f"Cannot serve on {host}:{port}: {exc}") from exc
    sys.exit(EXIT_OK)


def _build_server(
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
    from eventide.apps.loader import discover_apps, load_app
    from eventide.apps.services import build_services
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
    broken: list[str] = []
    for name, folder in folders.items():
        try:
            app = load_app(folder)
        except EventideError as exc:
            broken.append(f"App {name!r} will not load: {exc}")
            continue
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
    for message in broken:
        console.print(Text(message, style="yellow"))
    if a2a:
        _check_a2a_extra()
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


def _is_loopback(host: str) -> bool:
    """Whether ``host`` (an interface to bind) is reachable from this machine only."""
    import ipaddress

    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def _check_a2a_extra() -> None:
    """``--a2a`` needs the a2a extra; say so up front rather than on the first request."""
    import importlib.util

    if importlib.util.find_spec("a2a") is None:
        raise UsageError(
            "--a2a needs the A2A SDK: pip install 'eventide[a2a]' (the official a2a-sdk)."
        )


def _invocation_queue(workers: str, dbos_db: str | None, session_db: str | None) -> Any:
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


@cli.command()
@click.argument("path", type=click.Path(exists=True, path_type=Path))
@click.option(
    "--check",
    is_flag=True,
    help="Change nothing; exit 1 when a file would change (for CI).",
)
def migrate(path: Path, check: bool) -> None:
    """Rewrite the google-adk imports of the Python files under PATH to Eventide.

    Prints each change and every use it could not map, with the reason. Exit codes: 0
    done (or, with --check, nothing to change); 1 with --check, files would change;
    2 usage error.
    """
    from eventide.cli.migrate import migrate_path

    console, errors = _consoles()
    reports = migrate_path(path, write=not check)
    changed = [r for r in reports if r.new_source is not None]
    verb = "would change" if check else "changed"
    for report in reports:
        if report.error is not None:
            errors.print(Text(f"{report.path}: {report.error}", style="yellow"))
        for change in report.changes:
            console.print(Text(f"{report.path}:{change.line}: {change.old}  ->  {change.new}"))
        for use in report.unmapped:
            console.print(
                Text(f"{report.path}:{use.line}: not mapped: {use.code}: {use.reason}", "yellow")
            )
    unmapped = sum(len(r.unmapped) for r in reports)
    console.print(
        f"{len(reports)} file(s) read, {len(changed)} {verb}, {unmapped} use(s) not mapped."
    )
    if check and changed:
        raise SystemExit(EXIT_ERROR)


def main(argv: list[str] | None = None) -> None:
    """The console entry point (``eventide = eventide.cli.main:main``)."""
    # A terminal with an ASCII locale must not turn an arrow in the output into a crash.
    for stream in (sys.stdout, sys.stderr):
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is not None:
            reconfigure(errors="replace")
    cli.main(args=argv, prog_name="eventide")


if __name__ == "__main__":  # pragma: no cover - `python -m eventide.cli.main`
    main()
