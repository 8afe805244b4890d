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

import sys
from pathlib import Path
from typing import Any

import click
from rich.text import Text

from eventide.cli.failures import consoles, failure, usage_failure
from eventide.cli.run_command import (
    EXIT_ERROR,
    EXIT_INTERRUPTED,
    EXIT_OK,
    RunOptions,
    run_app,
)
from eventide.cli.serve_command import serve
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

    console, _ = consoles()
    try:
        folder = create_app_folder(name, parent)
    except UsageError as exc:
        raise usage_failure(str(exc)) from exc
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
    console, errors = consoles()
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
        raise usage_failure(str(exc)) from exc
    except Exception as exc:
        raise failure(f"{type(exc).__name__}: {exc}") from exc
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

    console, _ = consoles()
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
        raise usage_failure(str(exc)) from exc
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
        raise usage_failure(str(exc)) from exc
    sys.exit(EXIT_OK)


@cli.command("api-server", epilog=_EPILOG)
@_serve_options
def api_server(**kwargs: Any) -> None:
    """Serve the apps in APPS_DIR over HTTP (/run, /run_sse, sessions, artifacts)."""
    serve(web=False, adk_ui=None, **kwargs)


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
        raise usage_failure(str(exc)) from exc
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
            raise usage_failure(str(exc)) from exc
    serve(web=True, adk_ui=ui_folder, **kwargs)


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

    console, errors = consoles()
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
