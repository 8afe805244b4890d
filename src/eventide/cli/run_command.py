"""``eventide run APP``: chat with an app in the terminal, or run one turn with ``--query``."""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.text import Text

from eventide import types
from eventide.apps.app import App
from eventide.apps.demo_model import ModelSetup, prepare_models
from eventide.apps.loader import resolve_app
from eventide.apps.prepare_ahead import prepare_models_ahead
from eventide.apps.services import Services, build_services
from eventide.cli.adk_apps import load_any_app
from eventide.cli.event_printer import EventPrinter
from eventide.errors import EventideError, UsageError
from eventide.plugins.base_plugin import BasePlugin
from eventide.run_config import RunConfig, StreamingMode
from eventide.runner import Runner
from eventide.workflow import REQUEST_INPUT_FUNCTION

__all__ = [
    "EXIT_ERROR",
    "EXIT_INTERRUPTED",
    "EXIT_OK",
    "EXIT_USAGE",
    "RunOptions",
    "redact_password",
    "run_app",
]

EXIT_OK = 0
EXIT_ERROR = 1
EXIT_USAGE = 2
EXIT_INTERRUPTED = 130
_QUIT = {"exit", "quit", ":q", "/exit", "/quit"}
_HELP = """Commands (anything else is sent to the agent):
  /help          this list
  /turns         the session's turns, numbered
  /rewind TURN   undo the session back to before turn TURN (a number from /turns)
  exit, /quit    leave (Ctrl-D too); the session is kept: --session ID resumes it"""


@dataclass(slots=True, kw_only=True)
class RunOptions:
    """The options of ``eventide run``."""

    app: str
    query: str | None
    session_id: str | None
    user_id: str
    session_db: str | None
    trace: bool
    stream: bool
    rewind_to: str | None = None


def run_app(options: RunOptions, console: Console, errors: Console) -> int:
    """Run the app as the options say and return the process's exit code.

    Raises:
        UsageError: the app, its model or its storage settings are wrong (exit code 2).
    """
    if options.rewind_to is not None and options.session_id is None:
        raise UsageError("--rewind-to needs --session: the session to rewind.")
    source = resolve_app(options.app)
    app = load_any_app(options.app).app
    setup = prepare_models(app.root_agent)
    try:
        setup.check_model_names()
    except UsageError:
        setup.restore()
        raise
    # The first line says which model answers: people must know when it is the demo.
    style = "bold yellow" if setup.uses_demo_model else "dim"
    console.print(Text(setup.notice(), style=style))
    # The provider SDKs' import and client set-up run while the session opens and the
    # user types, not in the first turn.
    preparing = prepare_models_ahead(app.root_agent)
    provider = _tracer_provider(options.trace)
    try:
        with asyncio.Runner() as loop:
            chat = _Chat(options, app, source.folder, setup, provider, console, errors)
            try:
                loop.run(chat.open())
                if options.rewind_to is not None:
                    loop.run(chat.rewind(options.rewind_to))
                if options.query is not None:
                    return loop.run(chat.turn(options.query))
                return chat.interact(loop)
            finally:
                with contextlib.suppress(Exception):
                    loop.run(chat.close())
    finally:
        preparing.wait()
        setup.restore()
        if provider is not None:
            provider.shutdown()


def answer_message(call_id: str, text: str) -> types.Content:
    """The user's answer to a workflow's request ``call_id``: the typed JSON value, or the
    text itself when it is not JSON."""
    try:
        value: Any = json.loads(text)
    except json.JSONDecodeError:
        value = text
    response = types.FunctionResponse(
        id=call_id, name=REQUEST_INPUT_FUNCTION, response={"result": value}
    )
    return types.Content(role="user", parts=[types.Part(function_response=response)])


def redact_password(url: str) -> str:
    """``url`` with its password (if any) replaced by ``***``, for printing."""
    return re.sub(r"(://[^:/@]*):[^@/]*@", r"\1:***@", url)


def _tracer_provider(console_trace: bool) -> Any | None:
    from eventide.plugins.tracing_plugin import configure_tracing

    return configure_tracing(console=console_trace)


class _Chat:
    def __init__(
        self,
        options: RunOptions,
        app: App,
        folder: Path,
        setup: ModelSetup,
        tracer_provider: Any | None,
        console: Console,
        errors: Console,
    ) -> None:
        self._options = options
        self._app = app
        self._folder = folder
        self._setup = setup
        self._tracer_provider = tracer_provider
        self._console = console
        self._errors = errors
        self._printer = EventPrinter(console)
        self._services: Services | None = None
        self._runner: Runner | None = None
        self._session_id = ""

    async def open(self) -> None:
        options = self._options
        services = self._services = build_services(
            session_db=options.session_db, artifact_root=None, base_dir=self._folder
        )
        plugins: list[BasePlugin] = list(self._app.plugins)
        if self._tracer_provider is not None and not any(p.name == "tracing" for p in plugins):
            from eventide.plugins.tracing_plugin import TracingPlugin

            plugins.append(TracingPlugin(tracer_provider=self._tracer_provider))
        self._runner = Runner(
            app_name=self._app.name,
            agent=self._app.root_agent,
            session_service=services.session_service,
            artifact_service=services.artifact_service,
            memory_service=services.memory_service,
            plugins=plugins,
            add_sessions_to_memory=self._app.add_sessions_to_memory,
            events_compaction_config=self._app.events_compaction_config,
        )
        sessions = services.session_service
        session = None
        if options.session_id is not None:
            session = await sessions.get_session(
                app_name=self._app.name, user_id=options.user_id, session_id=options.session_id
            )
        if session is None and options.rewind_to is not None:
            # Rewinding names a session that holds turns: creating it would leave an empty
            # session behind an error.
            raise UsageError(
                f"Session {options.session_id!r} of user {options.user_id!r} not found in app "
                f"{self._app.name!r}: --rewind-to rewinds an existing session (nothing was "
                "created). Check --session and --user."
            )
        if session is None:
            session = await sessions.create_session(
                app_name=self._app.name, user_id=options.user_id, session_id=options.session_id
            )
            status = "new session"
        else:
            status = f"resumed session, {len(session.events)} events"
        self._session_id = session.id
        where = options.session_db or str(self._folder / ".eventide" / "sessions.db")
        where = redact_password(where)
        self._console.print(
            Text(
                f"app {self._app.name} · session {session.id} ({status}) · user "
                f"{options.user_id} · sessions in {where}",
                style="dim",
            )
        )

    async def turn(self, message: str | types.Content) -> int:
        """Run one turn; the exit code it deserves."""
        runner = self._runner
        assert runner is not None, "open() runs first"
        printer = self._printer
        printer.start_turn()
        mode = StreamingMode.SSE if self._options.stream else StreamingMode.NONE
        try:
            async for event in runner.run_async(
                user_id=self._options.user_id,
                session_id=self._session_id,
                new_message=message,
                run_config=RunConfig(streaming_mode=mode),
            ):
                printer.print_event(event)
        except UsageError:
            printer.finish_turn()
            raise
        except EventideError as exc:
            printer.finish_turn()
            self._errors.print(Text(f"Error: {exc}", style="bold red"))
            return EXIT_ERROR
        except Exception as exc:  # the app's own code failed: say so, keep the traceback short
            printer.finish_turn()
            self._errors.print(
                Text(f"Error: {type(exc).__name__} in the app: {exc}", style="bold red")
            )
            return EXIT_ERROR
        printer.finish_turn()
        return EXIT_ERROR if printer.had_error else EXIT_OK

    async def rewind(self, target: str) -> None:
        """Rewind the session to before the turn ``target`` names (number or invocation id)."""
        from eventide.history.rewind import find_turn

        runner = self._runner
        assert runner is not None, "open() runs first"
        session = await runner.session_service.get_session(
            app_name=runner.app_name, user_id=self._options.user_id, session_id=self._session_id
        )
        assert session is not None, "open() created it"
        chosen = find_turn(session.events, target)
        await runner.rewind_async(
            user_id=self._options.user_id,
            session_id=self._session_id,
            rewind_before_invocation_id=chosen.invocation_id,
        )
        self._console.print(
            Text(f"rewound to before turn {chosen.number}: {chosen.text!r}", style="yellow")
        )

    async def list_turns(self) -> None:
        """Print the session's turns (those not rewound), numbered for ``/rewind``."""
        from eventide.history.rewind import turns_of

        runner = self._runner
        assert runner is not None, "open() runs first"
        session = await runner.session_service.get_session(
            app_name=runner.app_name, user_id=self._options.user_id, session_id=self._session_id
        )
        assert session is not None, "open() created it"
        turns = turns_of(session.events)
        if not turns:
            self._console.print(Text("no turns yet", style="dim"))
        for turn in turns:
            self._console.print(Text(f"{turn.number:>3}  {turn.text}", style="dim"))

    async def command(self, line: str) -> bool:
        """Run ``/help``, ``/turns`` or ``/rewind TURN``; False when ``line`` is not a
        command."""
        name, _, argument = line.partition(" ")
        if name in ("/help", "/?"):
            self._console.print(Text(_HELP, style="dim"))
        elif name == "/turns":
            await self.list_turns()
        elif name == "/rewind":
            if not argument.strip():
                raise UsageError("Say which turn: /rewind 2 (see /turns for the numbers).")
            await self.rewind(argument.strip())
        else:
            return False
        return True

    def interact(self, loop: asyncio.Runner) -> int:
        """Read messages until end of input or ``exit``; errors are shown, not fatal."""
        self._console.print(
            Text("Type a message; /help for commands; 'exit' or Ctrl-D to quit.", style="dim")
        )
        with contextlib.suppress(ImportError):
            # Imported for its effect: line editing and history for input().
            importlib.import_module("readline")
        while True:
            prompt = f"{self._printer.questions[0][1]} › " if self._printer.questions else "you › "
            try:
                line = input(prompt)
            except EOFError:
                self._console.print()
                return EXIT_OK
            except KeyboardInterrupt:
                self._console.print()
                return EXIT_INTERRUPTED
            message = line.strip()
            if not message:
                continue
            if message.lower() in _QUIT:
                return EXIT_OK
            if self._printer.questions:
                # The workflow asked something: this line is the answer, not a new message.
                call_id, _ = self._printer.questions[0]
                self._printer.answered(call_id)
                loop.run(self.turn(answer_message(call_id, message)))
                continue
            try:
                if not (message.startswith("/") and loop.run(self.command(message))):
                    loop.run(self.turn(message))
            except KeyboardInterrupt:
                self._printer.finish_turn()
                self._errors.print(Text("(turn interrupted)", style="yellow"))
            except UsageError as exc:
                self._printer.finish_turn()
                self._errors.print(Text(f"Error: {exc}", style="bold red"))

    async def close(self) -> None:
        if self._runner is not None:
            await self._runner.close()
        if self._services is not None:
            await self._services.close()
