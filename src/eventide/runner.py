"""``Runner``: drives one invocation per user message through the event loop.

For each event an agent yields: a partial event is forwarded without being stored; any other
event is committed through the session service (state and artifact deltas included) and only
then forwarded upstream. The producer resumes when the caller asks for the next event, so it
always resumes after its event is committed.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator, Iterator, Sequence
from contextlib import aclosing
from typing import TYPE_CHECKING, Any

from eventide import types
from eventide._fastpath import fields_of, write_field
from eventide.agents.base_agent import BaseAgent
from eventide.agents.routing import agent_for_turn
from eventide.apps.app import App
from eventide.artifacts.base_artifact_service import BaseArtifactService
from eventide.artifacts.in_memory_artifact_service import InMemoryArtifactService
from eventide.cancellation import seal_aborted
from eventide.child_runs import register_runner
from eventide.errors import RunnerClosedError
from eventide.events import Event
from eventide.flows.contents import ContentsCache
from eventide.history.runner_methods import SessionHistoryMethods
from eventide.invocation_start import RESUME, Turn, answer_before_run, begin
from eventide.memory.base_memory_service import BaseMemoryService
from eventide.memory.in_memory_memory_service import InMemoryMemoryService
from eventide.plugins.base_plugin import BasePlugin
from eventide.plugins.plugin_manager import PluginManager
from eventide.run_config import RunConfig
from eventide.runner_debug import run_debug
from eventide.runner_setup import runner_setup
from eventide.runner_sync import SyncBridge
from eventide.runtime.markers import STARTED, mark
from eventide.sessions.base_session_service import BaseSessionService
from eventide.sessions.in_memory_session_service import InMemorySessionService
from eventide.sessions.session import Session
from eventide.user_event import add_run_metadata

if TYPE_CHECKING:
    from eventide.apps.prepare_ahead import ModelsPreparing
    from eventide.auth.credential_service import BaseCredentialService
    from eventide.history.compaction import EventsCompactionConfig

__all__ = ["InMemoryRunner", "Runner"]


class Runner(SessionHistoryMethods):
    """Runs an agent tree for an app, committing every event through the services.

    Args:
        app_name: the app's name; sessions and state are scoped by it.
        agent: the root agent.
        node: google-adk 2.x's name for ``agent`` when it is a ``Workflow``.
        app: an ``App`` instead of ``app_name`` and ``agent`` (its plugins run first).
        session_service: where sessions and events are stored.
        artifact_service: where artifacts are stored (optional).
        memory_service: long-term memory (optional).
        credential_service: where tool credentials are kept (optional).
        plugins: hooks applied to every agent, model and tool call, in order.
        auto_create_session: create a missing session instead of raising.
        add_sessions_to_memory: after each invocation, add the session to the memory
            service (opt-in; needs ``memory_service``).
        events_compaction_config: summarise older events every N invocations (taken from
            ``app`` when given; see :mod:`eventide.history.compaction`).

    ``runner.app`` is the ``App`` given, or the one ``app_name`` and ``agent`` stand for
    (with the Runner's plugins and settings), as in google-adk.

    With ``App(resumability_config=ResumabilityConfig(is_resumable=True))`` every invocation
    records where it is in its events, and :meth:`resume_async` continues one that stopped
    half way (a crash, a failed commit, an exception) from its last committed event.
    """

    def __init__(
        self,
        *,
        app_name: str | None = None,
        agent: BaseAgent | None = None,
        node: BaseAgent | None = None,
        app: App | None = None,
        session_service: BaseSessionService,
        artifact_service: BaseArtifactService | None = None,
        memory_service: BaseMemoryService | None = None,
        credential_service: BaseCredentialService | None = None,
        plugins: Sequence[BasePlugin] | None = None,
        auto_create_session: bool = False,
        add_sessions_to_memory: bool = False,
        events_compaction_config: EventsCompactionConfig | None = None,
    ) -> None:
        setup = runner_setup(
            app_name=app_name,
            agent=agent,
            node=node,
            app=app,
            plugins=plugins,
            add_sessions_to_memory=add_sessions_to_memory,
            memory_service=memory_service,
            events_compaction_config=events_compaction_config,
        )
        self.app_name = setup.app_name
        self.agent = setup.agent
        self.app = setup.app
        self.session_service = session_service
        self.artifact_service = artifact_service
        self.memory_service = memory_service
        self.credential_service = credential_service
        self.plugin_manager = PluginManager(setup.plugins)
        self._contents_cache = ContentsCache()
        self.auto_create_session = auto_create_session
        self.add_sessions_to_memory = setup.add_sessions_to_memory
        self.resumable = setup.resumable
        self.resumability_config = setup.resumability
        self._compactor = setup.compactor
        self._closed = False
        self._sync = SyncBridge()

    def run_async(
        self,
        *,
        user_id: str,
        session_id: str,
        new_message: types.Content | str | None = None,
        state_delta: dict[str, Any] | None = None,
        run_config: RunConfig | None = None,
        invocation_id: str | None = None,
        resume_unfinished: bool = False,
        abort_signal: asyncio.Event | None = None,
        session: Session | None = None,
    ) -> AsyncGenerator[Event, None]:
        """Run one invocation and yield its events as they are committed.

        Args:
            user_id: the user.
            session_id: the session (see ``auto_create_session``).
            new_message: the user's message (a ``Content``, a string, or genai Content). In
                a resumable app, a message whose function responses answer the calls the
                session's latest invocation paused for (a long-running tool's result, a
                confirmation, a credential) is committed in that invocation, which then goes
                on from its log: the paused agent's loop, and the workflow steps after it.
            state_delta: state to set along with the user's message.
            run_config: per-invocation settings.
            invocation_id: reuse an id; a new one by default. In a resumable app, the id of
                the session's unfinished latest invocation with no ``new_message`` and no
                ``state_delta`` resumes it (as :meth:`resume_async`).
            resume_unfinished: in a resumable app, first continue the session's latest
                invocation if it did not finish (its events are yielded too), then run the
                new message.
            abort_signal: set it (from any task) to abort at the next step; what was committed
                stays, and the abort's events are committed and yielded (eventide.cancellation).
            session: the session named by ``user_id`` and ``session_id``, as the caller has
                just read it from this Runner's session service: the invocation runs on it
                instead of reading it again (a protocol adapter reads it first to map its
                request). An Eventide extension.

        Raises:
            SessionNotFoundError: the session does not exist.
            RunnerClosedError: the runner was closed.
            ResumeError: an invocation to resume cannot be resumed (the message says why).
            UsageError: ``session`` is not the session named.
        """
        # The generator returned is the driver itself (one layer less per event and per
        # invocation); nothing runs, and nothing is raised, until it is iterated.
        turn = Turn(user_id, session_id, new_message, state_delta, run_config, invocation_id)
        turn.resume_unfinished = resume_unfinished
        turn.abort_signal = abort_signal
        turn.session = session
        return self._drive(turn)

    def _check_open(self) -> None:
        if self._closed:
            raise RunnerClosedError("This Runner was closed; create a new one to run again.")

    def resume_async(
        self,
        *,
        user_id: str,
        session_id: str,
        invocation_id: str | None = None,
        run_config: RunConfig | None = None,
    ) -> AsyncGenerator[Event, None]:
        """Continue an unfinished invocation from its last committed event; yield the events
        it commits now.

        Committed model and tool responses are not asked for or run again; a tool call that
        was running when it stopped runs again with the same call id (an idempotency key).
        Needs ``App(resumability_config=ResumabilityConfig(is_resumable=True))``.

        Args:
            user_id: the user.
            session_id: the session.
            invocation_id: the invocation; the session's latest by default.
            run_config: per-invocation settings for the rest of the invocation.

        Raises:
            SessionNotFoundError: the session does not exist.
            InvocationNotFoundError: the session has no such invocation.
            ResumeError: the invocation finished, paused for the user, is not the latest,
                was not run resumably, or names agents no longer in the tree.
        """
        return self._drive(
            Turn(user_id, session_id, None, None, run_config, invocation_id, mode=RESUME)
        )

    async def _drive(self, turn: Turn) -> AsyncGenerator[Event, None]:
        """Run the invocation ``turn`` starts or continues, committing each event before the
        agent resumes; then the turn that follows it, if any."""
        self._check_open()
        start = await begin(self, turn)
        ctx, resumed, then = start.ctx, start.resumed, start.then
        abort = ctx.abort_state
        if turn.abort_signal is not None:
            abort.attach(turn.abort_signal)
        plugins = self.plugin_manager
        session = ctx.session
        # A resumable invocation's first committed event says so (see eventide.runtime.markers).
        mark_start = start.marks_first_event
        early = None
        if plugins.overrides(BasePlugin.before_run_callback):
            early = await answer_before_run(ctx)
        if early is not None:
            await self.session_service.append_event(session, early)
            yield early
        else:
            if not resumed:
                # The agent that answers the turn: see eventide.agents.routing.
                ctx.agent = agent_for_turn(self.agent, ctx)
            has_on_event = plugins.overrides(BasePlugin.on_event_callback)
            commit = self.session_service.append_event
            metadata = ctx.run_config.custom_metadata
            # try/finally rather than ``aclosing``: the same closing, without its two frames.
            events = ctx.agent.run_async(ctx)
            sealed: list[Event] = []
            try:
                async for event in events:
                    if metadata:
                        add_run_metadata(event, metadata)
                    fields = fields_of(event)  # three reads: one lookup, not three generic ones
                    if not fields["partial"]:
                        if not fields["invocation_id"]:
                            write_field(event, "invocation_id", ctx.invocation_id)
                        if mark_start:
                            mark(event, STARTED)
                            mark_start = False
                        delta = fields["actions"].state_delta
                        if delta:
                            ctx.hold_temp_state(delta)
                        await commit(session, event)
                        if delta:
                            ctx.forget_committed(delta)
                    if has_on_event:
                        replaced = await plugins.on_event_callback(
                            invocation_context=ctx, event=event
                        )
                        if replaced is not None:
                            event = replaced
                    yield event
                    if abort.armed and abort.is_set:
                        break
            finally:
                await events.aclose()
                if abort.armed and abort.is_set:  # committed even if the caller's task is cancelled
                    sealed = await seal_aborted(
                        abort,
                        self.session_service,
                        session,
                        invocation_id=ctx.invocation_id,
                        root_agent=self.agent.name,
                        branch=ctx.branch,
                    )
            for event in sealed:
                yield event
        if plugins.overrides(BasePlugin.after_run_callback):
            await plugins.after_run_callback(invocation_context=ctx)
        # An invocation paused for the user is not compacted yet: a summary would hide the
        # calls the user's answer responds to, and the model would get orphan responses.
        if self._compactor is not None and not ctx.end_invocation and not abort.is_set:
            compacted = await self._compactor.after_invocation(self.session_service, session)
            if compacted is not None:
                yield compacted
        if self.add_sessions_to_memory and self.memory_service is not None:
            await self.memory_service.add_session_to_memory(session)
        if then is not None:
            async with aclosing(self._drive(then)) as following:
                async for event in following:
                    yield event

    def run(
        self,
        *,
        user_id: str,
        session_id: str,
        new_message: types.Content | str | None = None,
        state_delta: dict[str, Any] | None = None,
        run_config: RunConfig | None = None,
    ) -> Iterator[Event]:
        """:meth:`run_async` for scripts and notebooks (breaking out early cancels cleanly),
        on this Runner's private event loop, or a worker thread inside a running loop (see
        :mod:`eventide.runner_sync`; there, ``async for ... in run_async`` is better)."""
        events = self.run_async(
            user_id=user_id,
            session_id=session_id,
            new_message=new_message,
            state_delta=state_delta,
            run_config=run_config,
        )
        return self._sync.iterate(events)

    async def run_debug(
        self,
        user_messages: str | list[str],
        *,
        user_id: str = "debug_user_id",
        session_id: str = "debug_session_id",
        run_config: RunConfig | None = None,
        quiet: bool = False,
        verbose: bool = False,
    ) -> list[Event]:
        """Send one or more messages in one session (created when missing) and return
        every event the agents yield (partial ones included); unless ``quiet``, print each
        as ``author > text`` in google-adk's format (with ``verbose``, tool calls, results,
        code and files too). For trying an agent out, not for apps.
        """
        return await run_debug(
            self,
            user_messages,
            user_id=user_id,
            session_id=session_id,
            run_config=run_config,
            quiet=quiet,
            verbose=verbose,
        )

    def prepare_models(self) -> ModelsPreparing:
        """Start the first model call's one-time work now, in a background thread (each
        model imports its provider's SDK and makes its client, about 0.4 s for ``openai``),
        so the first turn costs what later ones do: call it where a process waits anyway (a
        web app's start-up). Returns at once; ``.wait()`` on the result blocks until every
        model is prepared; a model whose preparation fails reports it on its first call.
        """
        from eventide.apps.prepare_ahead import prepare_models_ahead

        return prepare_models_ahead(self.agent)

    async def close(self) -> None:
        """Close the agents' toolsets and the plugins; later runs raise."""
        if self._closed:
            return
        self._closed = True
        try:
            for agent in self.agent.walk():
                closer = getattr(agent, "close", None)
                if closer is not None:
                    await closer()
            await self.plugin_manager.close()
        finally:
            self._sync.stop_worker()

    def close_sync(self) -> None:
        """Close the runner from synchronous code (after using :meth:`run`)."""
        self._sync.close(self.close)

    async def __aenter__(self) -> Runner:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()

    @property
    def contents_cache(self) -> ContentsCache:
        """The conversations built so far per session, branch and agent (runtime state)."""
        return self._contents_cache


class InMemoryRunner(Runner):
    """In-memory services, for tests and demos; an ``agent``, ``node`` or ``app`` as in ADK."""

    def __init__(
        self,
        agent: BaseAgent | None = None,
        *,
        app_name: str | None = None,
        plugins: Sequence[BasePlugin] | None = None,
        app: App | None = None,
        node: BaseAgent | None = None,
    ) -> None:
        super().__init__(
            app_name=app_name or (None if app is not None else "InMemoryRunner"),
            agent=agent,
            node=node,
            app=app,
            session_service=InMemorySessionService(),
            artifact_service=InMemoryArtifactService(),
            memory_service=InMemoryMemoryService(),
            plugins=plugins,
        )


register_runner(Runner)  # the Runner of AgentTool's child invocations
