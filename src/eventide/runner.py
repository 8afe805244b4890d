"""``Runner``: drives one invocation per user message through the event loop.

For each event an agent yields: a partial event is forwarded without being stored; any other
event is committed through the session service (state and artifact deltas included) and only
then forwarded upstream. The producer resumes when the caller asks for the next event, so it
always resumes after its event is committed.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncGenerator, Awaitable, Callable, Iterator, Sequence
from contextlib import aclosing
from functools import partial
from typing import TYPE_CHECKING, Any

from eventide import types
from eventide._ids import new_invocation_id
from eventide._model import construct_trusted
from eventide.agents.base_agent import BaseAgent
from eventide.agents.routing import agent_for_turn
from eventide.apps.app import App
from eventide.artifacts.base_artifact_service import BaseArtifactService
from eventide.artifacts.in_memory_artifact_service import InMemoryArtifactService
from eventide.cancellation import seal_aborted
from eventide.contexts import InvocationContext
from eventide.durable.log import ANSWERED, FINISHED, INVOCATION_KEY, STARTED
from eventide.errors import RunnerClosedError, SessionNotFoundError, UsageError
from eventide.events import Event, EventActions
from eventide.flows.contents import ContentsCache
from eventide.flows.task_delegation import reply_branch
from eventide.memory.base_memory_service import BaseMemoryService
from eventide.memory.in_memory_memory_service import InMemoryMemoryService
from eventide.plugins.base_plugin import BasePlugin
from eventide.plugins.plugin_manager import PluginManager
from eventide.protocol import REQUEST_CREDENTIAL_FUNCTION, USER_AUTHOR
from eventide.run_config import RunConfig
from eventide.runner_debug import run_debug
from eventide.sessions.base_session_service import BaseSessionService
from eventide.sessions.in_memory_session_service import InMemorySessionService
from eventide.sessions.session import Session

if TYPE_CHECKING:
    from eventide.apps.prepare_ahead import ModelsPreparing
    from eventide.auth.credential_service import BaseCredentialService
    from eventide.history.compaction import EventsCompactionConfig
    from eventide.models.base_llm import BaseLlm

__all__ = ["InMemoryRunner", "Runner"]


# The settings of invocations run without a RunConfig (shared: treat it as read-only).
_DEFAULT_RUN_CONFIG = RunConfig()

_NOT_RESUMABLE = (
    "Resuming needs a resumable app: Runner(app=App(..., resumability_config="
    "ResumabilityConfig(is_resumable=True)), ...)."
)


class Runner:
    """Runs an agent tree for an app, committing every event through the services.

    Args:
        app_name: the app's name; sessions and state are scoped by it.
        agent: the root agent.
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

    With ``App(resumability_config=ResumabilityConfig(is_resumable=True))`` every invocation
    records where it is in its events, and :meth:`resume_async` continues one that stopped
    half way (a crash, a failed commit, an exception) from its last committed event.
    """

    def __init__(
        self,
        *,
        app_name: str | None = None,
        agent: BaseAgent | None = None,
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
        compaction = events_compaction_config
        if app is not None:
            compaction = compaction or app.events_compaction_config
            if agent is not None:
                raise UsageError(
                    "Only one of app, agent, or node may be provided. Pass either app=App(...) "
                    "or agent=, not both."
                )
            # An explicit app_name wins over the app's, as in google-adk.
            app_name, agent = app_name or app.name, app.root_agent
            plugins = [*app.plugins, *(plugins or ())]
            add_sessions_to_memory = add_sessions_to_memory or app.add_sessions_to_memory
            resumability = app.resumability_config
            resumable = resumability is not None and resumability.is_resumable
        else:
            resumability = None
            resumable = False
        if agent is None:
            raise UsageError(
                "One of app, agent, or node must be provided: Runner needs app=App(...), or "
                "app_name= and agent=."
            )
        if app_name is None:
            raise UsageError(
                "app_name is required when agent is provided: Runner(app_name=..., agent=...)."
            )
        if not isinstance(agent, BaseAgent):
            raise UsageError(
                f"Runner(agent=...) needs a BaseAgent (e.g. LlmAgent); got {type(agent).__name__}."
            )
        if add_sessions_to_memory and memory_service is None:
            raise UsageError("add_sessions_to_memory=True needs a memory_service.")
        self.app_name = app_name
        self.agent = agent
        self.session_service = session_service
        self.artifact_service = artifact_service
        self.memory_service = memory_service
        self.credential_service = credential_service
        self.plugin_manager = PluginManager(plugins or ())
        # Runtime state, not configuration: the conversations built so far, per session,
        # branch and agent, so a long session costs only its new events per model call.
        self._contents_cache = ContentsCache()
        self.auto_create_session = auto_create_session
        self.add_sessions_to_memory = add_sessions_to_memory
        self.resumable = resumable
        self.resumability_config = resumability
        self._compactor = None
        if compaction is not None:
            from eventide.history.compaction import Compactor

            self._compactor = Compactor(compaction, default_llm=lambda: _root_model(agent))
        self._closed = False
        self._sync_loop: asyncio.AbstractEventLoop | None = None
        self._worker: _WorkerLoop | None = None

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
            abort_signal: set it (from any task) to abort the invocation at its next step;
                what was committed stays, and the events that record the abort are
                committed and yielded (see :mod:`eventide.cancellation`).

        Raises:
            SessionNotFoundError: the session does not exist.
            RunnerClosedError: the runner was closed.
            ResumeError: an invocation to resume cannot be resumed (the message says why).
        """
        # The generator returned is the driver itself (one layer less per event and per
        # invocation); nothing runs, and nothing is raised, until it is iterated.
        if self.resumable:
            return self._run_resumable(
                user_id,
                session_id,
                new_message,
                state_delta,
                run_config,
                invocation_id,
                resume_unfinished,
                abort_signal,
            )
        return self._drive(
            partial(
                self._start,
                user_id,
                session_id,
                new_message,
                state_delta,
                run_config,
                invocation_id,
                resume_unfinished,
            ),
            abort_signal,
        )

    async def _start(
        self,
        user_id: str,
        session_id: str,
        new_message: types.Content | str | None,
        state_delta: dict[str, Any] | None,
        run_config: RunConfig | None,
        invocation_id: str | None,
        resume_unfinished: bool,
    ) -> tuple[InvocationContext, bool]:
        """A new invocation of a Runner that is not resumable, the user's message committed."""
        self._check_open()
        if resume_unfinished:
            raise UsageError(_NOT_RESUMABLE)
        session = await self._load_session(user_id, session_id)
        return await self._fresh(session, new_message, state_delta, run_config, invocation_id)

    async def _run_resumable(
        self,
        user_id: str,
        session_id: str,
        new_message: types.Content | str | None,
        state_delta: dict[str, Any] | None,
        run_config: RunConfig | None,
        invocation_id: str | None,
        resume_unfinished: bool,
        abort_signal: asyncio.Event | None,
    ) -> AsyncGenerator[Event, None]:
        """``run_async`` in a resumable app: continue an unfinished invocation when asked."""
        from eventide.durable import paused_invocation, unfinished_invocation

        self._check_open()
        session = await self._load_session(user_id, session_id)
        if new_message is not None:
            paused = paused_invocation(session, _answer_ids(types.to_content(new_message)))
            if paused is not None:
                # The message answers the calls the latest invocation paused for: it goes
                # on in that invocation, from its log (as google-adk's resumable apps do).
                answer = partial(
                    self._answer_start, session, paused, new_message, state_delta, run_config
                )
                async with aclosing(self._drive(answer, abort_signal)) as answered:
                    async for event in answered:
                        yield event
                return
        resume_id: str | None = None
        if invocation_id is not None and new_message is None and not state_delta:
            if any(e.invocation_id == invocation_id for e in session.events):
                resume_id = invocation_id
        elif resume_unfinished:
            resume_id = unfinished_invocation(session)
        if resume_id is not None:
            resume = partial(self._resume_start, session, resume_id, run_config)
            async with aclosing(self._drive(resume, abort_signal)) as resumed:
                async for event in resumed:
                    yield event
            if invocation_id == resume_id:
                return
            invocation_id = None
        fresh = partial(self._fresh, session, new_message, state_delta, run_config, invocation_id)
        async with aclosing(self._drive(fresh, abort_signal)) as events:
            async for event in events:
                yield event

    async def _fresh(
        self,
        session: Session,
        new_message: types.Content | str | None,
        state_delta: dict[str, Any] | None,
        run_config: RunConfig | None,
        invocation_id: str | None,
    ) -> tuple[InvocationContext, bool]:
        ctx = self._new_context(invocation_id or new_invocation_id(), session, run_config)
        if new_message is not None or state_delta:
            # A reply to a task agent's question goes on the task's branch (Task API).
            branch = reply_branch(session.events)
            await self._append_user_event(ctx, new_message, state_delta, branch=branch)
        return ctx, False

    def _check_open(self) -> None:
        if self._closed:
            raise RunnerClosedError("This Runner was closed; create a new one to run again.")

    async def resume_async(
        self,
        *,
        user_id: str,
        session_id: str,
        invocation_id: str | None = None,
        run_config: RunConfig | None = None,
    ) -> AsyncGenerator[Event, None]:
        """Continue an unfinished invocation from its last committed event; yield the events
        it commits now.

        Committed model responses are not requested again and committed tool responses are
        not run again; a tool call that was running when the invocation stopped runs again
        with the same call id (``tool_context.function_call_id``, an idempotency key).
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
        self._check_open()
        if not self.resumable:
            raise UsageError(_NOT_RESUMABLE)
        session = await self.session_service.get_session(
            app_name=self.app_name, user_id=user_id, session_id=session_id
        )
        if session is None:
            raise SessionNotFoundError(
                app_name=self.app_name, user_id=user_id, session_id=session_id
            )
        resume = partial(self._resume_start, session, invocation_id, run_config)
        async with aclosing(self._drive(resume)) as events:
            async for event in events:
                yield event

    async def _answer_start(
        self,
        session: Session,
        paused: tuple[str, str | None],
        new_message: types.Content | str,
        state_delta: dict[str, Any] | None,
        run_config: RunConfig | None,
    ) -> tuple[InvocationContext, bool]:
        """Commit the answer to a paused invocation in it (on the branch of the calls it
        answers, so parallel siblings do not see it); the context that continues it."""
        invocation_id, branch = paused
        ctx = self._new_context(invocation_id, session, run_config)
        await self._append_user_event(ctx, new_message, state_delta, mark=ANSWERED, branch=branch)
        return await self._resume_start(session, invocation_id, run_config)

    async def _resume_start(
        self, session: Session, invocation_id: str | None, run_config: RunConfig | None
    ) -> tuple[InvocationContext, bool]:
        """The context that continues ``invocation_id``; whether an agent resumes in it."""
        from eventide.durable import plan_resume

        plan = plan_resume(self.agent, session, invocation_id)
        ctx = self._new_context(plan.invocation_id, session, run_config)
        ctx.user_content = plan.user_content
        if plan.start_agent is not None:
            ctx.agent = plan.start_agent
            ctx.resume = plan.scope
        return ctx, plan.start_agent is not None

    def _new_context(
        self, invocation_id: str, session: Session, run_config: RunConfig | None
    ) -> InvocationContext:
        ctx = InvocationContext(
            invocation_id=invocation_id,
            agent=self.agent,
            session=session,
            session_service=self.session_service,
            artifact_service=self.artifact_service,
            memory_service=self.memory_service,
            credential_service=self.credential_service,
            plugin_manager=self.plugin_manager,
            run_config=run_config or _DEFAULT_RUN_CONFIG,
            contents_cache=self._contents_cache,
        )
        if self.resumable:
            ctx.resumable = True
        return ctx

    async def _drive(
        self,
        start: Callable[[], Awaitable[tuple[InvocationContext, bool]]],
        abort_signal: asyncio.Event | None = None,
    ) -> AsyncGenerator[Event, None]:
        """Run the invocation ``start`` sets up, committing each event before the agent
        resumes.

        ``start`` gives the context and whether it resumes: then ``ctx.agent`` and
        ``ctx.resume`` say where to continue; otherwise the agent for the turn is picked now.
        """
        ctx, resumed = await start()
        abort = ctx.abort_state
        if abort_signal is not None:
            abort.attach(abort_signal)
        plugins = self.plugin_manager
        session = ctx.session
        # A resumable invocation's first committed event says so (see eventide.durable.log).
        mark_start = self.resumable and not resumed and not _has_events_of(session, ctx)
        early = (
            await plugins.before_run_callback(invocation_context=ctx)
            if plugins.overrides(BasePlugin.before_run_callback)
            else None
        )
        if early is not None:
            event = Event(
                invocation_id=ctx.invocation_id,
                author="model",
                content=types.to_content(early, role="model"),
            )
            if self.resumable:
                event.custom_metadata = {INVOCATION_KEY: FINISHED}
            await self.session_service.append_event(session, event)
            yield event
        else:
            if not resumed:
                ctx.agent = self._agent_for_turn(ctx)
            has_on_event = plugins.overrides(BasePlugin.on_event_callback)
            commit = self.session_service.append_event
            metadata = ctx.run_config.custom_metadata
            # try/finally rather than ``aclosing``: the same closing, without its two frames.
            events = ctx.agent.run_async(ctx)
            sealed: list[Event] = []
            try:
                async for event in events:
                    if metadata:
                        _add_run_metadata(event, metadata)
                    if not event.partial:
                        if not event.invocation_id:
                            # Straight into the field: pydantic's __setattr__ costs microseconds.
                            object.__setattr__(event, "invocation_id", ctx.invocation_id)
                        if mark_start:
                            _mark_started(event)
                            mark_start = False
                        delta = event.actions.state_delta
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
                    if abort.is_set:
                        break
            finally:
                await events.aclose()
                if abort.is_set:  # committed even when the caller's task is being cancelled
                    sealed = await self._seal_aborted(ctx)
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

    async def rewind_async(
        self, *, user_id: str, session_id: str, rewind_before_invocation_id: str
    ) -> Event:
        """Rewind the session to before an invocation: append an event that restores the
        session's state and artifacts to what they were then (shared ``app:``/``user:`` data
        is left as it is); the later turns stay in the log but no longer reach the model (see
        :mod:`eventide.history.rewind`).

        Returns:
            The committed rewind event.

        Raises:
            SessionNotFoundError: the session does not exist.
            InvocationNotFoundError: the invocation is unknown, of another session, or was
                already rewound; nothing is written.
        """
        from eventide.history.rewind import rewind_session

        return await rewind_session(
            session_service=self.session_service,
            artifact_service=self.artifact_service,
            app_name=self.app_name,
            user_id=user_id,
            session_id=session_id,
            rewind_before_invocation_id=rewind_before_invocation_id,
        )

    async def fork_session_async(
        self,
        *,
        user_id: str,
        session_id: str,
        up_to_event_id: str | None = None,
        new_session_id: str | None = None,
    ) -> Session:
        """Copy the session up to and including ``up_to_event_id`` (all of it when None) into
        a new session: its state then, its artifacts by version and its events (see
        :mod:`eventide.history.fork`). Returns the new session.

        Raises:
            SessionNotFoundError: the session does not exist.
            EventNotFoundError: the event is not in the session; nothing is created.
        """
        from eventide.history.fork import fork_session

        return await fork_session(
            session_service=self.session_service,
            artifact_service=self.artifact_service,
            app_name=self.app_name,
            user_id=user_id,
            session_id=session_id,
            up_to_event_id=up_to_event_id,
            new_session_id=new_session_id,
        )

    def run(
        self,
        *,
        user_id: str,
        session_id: str,
        new_message: types.Content | str | None = None,
        state_delta: dict[str, Any] | None = None,
        run_config: RunConfig | None = None,
    ) -> Iterator[Event]:
        """The synchronous convenience over :meth:`run_async`, for scripts and notebooks.
        Breaking out of the loop early cancels the invocation cleanly.

        It runs the invocation on a private event loop kept by this Runner (so services that
        hold connections keep working across calls). Called where an event loop is already
        running (a notebook cell, an async test), it runs that private loop on a worker
        thread and blocks until each event is committed, as google-adk does; there,
        ``async for event in runner.run_async(...)`` is the better choice.
        """
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            loop = self._sync_loop
            if loop is None or loop.is_closed():
                loop = self._sync_loop = asyncio.new_event_loop()
            step: Callable[[Awaitable[Any]], Any] = loop.run_until_complete
        else:
            step = self._worker_loop().run
        events = self.run_async(
            user_id=user_id,
            session_id=session_id,
            new_message=new_message,
            state_delta=state_delta,
            run_config=run_config,
        )
        try:
            while True:
                try:
                    event = step(anext(events))
                except StopAsyncIteration:
                    return
                yield event
        finally:
            step(events.aclose())
            # Let finalizers of generators the caller's code left open run now, on this
            # loop, rather than be destroyed pending.
            step(asyncio.sleep(0))

    def _worker_loop(self) -> _WorkerLoop:
        worker = self._worker
        if worker is None or worker.closed:
            worker = self._worker = _WorkerLoop()
        return worker

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
        """Start the first model call's one-time work now, in a background thread: each
        model of the agent tree imports its provider's SDK and makes its client (about
        0.4 s for the ``openai`` SDK), so the first turn costs what later ones do.

        Call it where a process starts and waits anyway (a web app's start-up, before
        reading the user's first message); ``eventide run`` and ``eventide api-server`` do
        it themselves. Returns at once; ``.wait()`` on the result blocks until every model
        is prepared. A model whose preparation fails reports the failure on its first call.
        """
        from eventide.apps.prepare_ahead import prepare_models_ahead

        return prepare_models_ahead(self.agent)

    async def close(self) -> None:
        """Close the runner: its agents' toolsets and its plugins are closed; later runs
        raise."""
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
            worker = self._worker
            if worker is not None:
                self._worker = None
                worker.stop()

    def close_sync(self) -> None:
        """Close the runner from synchronous code (after using :meth:`run`)."""
        loop = self._sync_loop
        if loop is None or loop.is_closed():
            asyncio.run(self.close())
            return
        loop.run_until_complete(self.close())
        loop.run_until_complete(loop.shutdown_asyncgens())
        loop.run_until_complete(loop.shutdown_default_executor())
        loop.close()

    async def __aenter__(self) -> Runner:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()

    # --- steps of run_async ---
    async def _load_session(self, user_id: str, session_id: str) -> Session:
        session = await self.session_service.get_session(
            app_name=self.app_name, user_id=user_id, session_id=session_id
        )
        if session is None:
            if not self.auto_create_session:
                raise SessionNotFoundError(
                    app_name=self.app_name, user_id=user_id, session_id=session_id
                )
            session = await self.session_service.create_session(
                app_name=self.app_name, user_id=user_id, session_id=session_id
            )
        return session

    async def _append_user_event(
        self,
        ctx: InvocationContext,
        new_message: types.Content | str | None,
        state_delta: dict[str, Any] | None,
        *,
        mark: str = STARTED,
        branch: str | None = None,
    ) -> None:
        content = None
        if new_message is not None:
            content = types.to_content(new_message)
            if content.role is None:
                content = content.model_copy(update={"role": "user"})
            plugins = self.plugin_manager
            # Hooks that are off cost a check, not an awaited coroutine.
            if plugins.overrides(BasePlugin.on_user_message_callback):
                replaced = await plugins.on_user_message_callback(
                    invocation_context=ctx, user_message=content
                )
                if replaced is not None:
                    content = types.to_content(replaced)
            if _answers_credential_request(content):
                content = await _store_credentials(ctx, content)
            ctx.user_content = content
        # Every value is already of its field's type (the content was validated by
        # to_content): taken as it is.
        event = construct_trusted(
            Event,
            {
                "invocation_id": ctx.invocation_id,
                "author": USER_AUTHOR,
                "branch": branch,
                "content": content,
                "actions": EventActions(state_delta=dict(state_delta))
                if state_delta
                else EventActions(),
            },
        )
        if ctx.run_config.custom_metadata:
            _add_run_metadata(event, ctx.run_config.custom_metadata)
        if self.resumable:
            event.custom_metadata = {**(event.custom_metadata or {}), INVOCATION_KEY: mark}
        if state_delta:
            ctx.hold_temp_state(event.actions.state_delta)
        await self.session_service.append_event(ctx.session, event)

    async def _seal_aborted(self, ctx: InvocationContext) -> list[Event]:
        """Commit the events that record the abort of ``ctx``'s invocation (once)."""
        return await seal_aborted(
            ctx.abort_state,
            self.session_service,
            ctx.session,
            invocation_id=ctx.invocation_id,
            root_agent=self.agent.name,
            branch=ctx.branch,
        )

    def _agent_for_turn(self, ctx: InvocationContext) -> BaseAgent:
        """The agent that answers this turn.

        A function response from the user (resuming a long-running tool or answering a
        confirmation) goes to the agent that made the call; otherwise the last agent that
        answered keeps the conversation if it may transfer back up to the root
        (``LlmAgent`` routing), else the root agent answers.
        """
        return agent_for_turn(self.agent, ctx)


def _answers_credential_request(content: types.Content) -> bool:
    """Whether the user's message answers a credential request (see _store_credentials)."""
    for part in content.parts or ():
        answer = part.function_response
        if answer is not None and answer.name == REQUEST_CREDENTIAL_FUNCTION:
            return True
    return False


async def _store_credentials(ctx: InvocationContext, content: types.Content) -> types.Content:
    """Store credentials the user's message answers requests with, and keep them out of the log.

    The answer to an ``eventide_request_credential`` call carries a secret (an API key, a
    token, an OAuth2 code). It goes to the credential service now; the event committed to
    the session keeps only a note that the credential arrived. Called only for a message
    that does answer one (:func:`_answers_credential_request`).
    """
    parts = content.parts or []
    from eventide.auth import store_auth_response

    redacted: list[types.Part] = []
    for part in parts:
        answer = part.function_response
        if answer is not None and answer.name == REQUEST_CREDENTIAL_FUNCTION:
            await store_auth_response(ctx, response=answer.response or {})
            part = types.Part(
                function_response=types.FunctionResponse(
                    id=answer.id,
                    name=answer.name,
                    response={"status": "credential stored; not kept in the session log"},
                )
            )
        redacted.append(part)
    return types.Content(role=content.role, parts=redacted)


def _add_run_metadata(event: Event, metadata: dict[str, Any]) -> None:
    """Put ``RunConfig.custom_metadata`` on ``event`` (its own entries win on a clash)."""
    own = event.custom_metadata
    event.custom_metadata = {**metadata, **own} if own else dict(metadata)


class _WorkerLoop:
    """An event loop on its own thread, for ``Runner.run()`` called inside a running loop."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.closed = False
        self._thread = threading.Thread(
            target=self.loop.run_forever, name="eventide-runner-run", daemon=True
        )
        self._thread.start()

    def run(self, awaitable: Awaitable[Any]) -> Any:
        """Run ``awaitable`` on the worker loop and wait for its result."""

        async def wrapper() -> Any:
            return await awaitable

        return asyncio.run_coroutine_threadsafe(wrapper(), self.loop).result()

    def stop(self) -> None:
        """Stop the loop and its thread."""
        if self.closed:
            return
        self.closed = True
        self.run(self.loop.shutdown_asyncgens())
        self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join()
        self.loop.close()


def _mark_started(event: Event) -> None:
    event.custom_metadata = {**(event.custom_metadata or {}), INVOCATION_KEY: STARTED}


def _answer_ids(content: types.Content) -> set[str]:
    """The ids of the function responses in a message (answers to paused calls)."""
    return {
        p.function_response.id
        for p in content.parts or []
        if p.function_response is not None and p.function_response.id
    }


def _has_events_of(session: Session, ctx: InvocationContext) -> bool:
    events = session.events
    return bool(events) and events[-1].invocation_id == ctx.invocation_id


class InMemoryRunner(Runner):
    """A Runner with in-memory session, artifact and memory services: for tests and demos."""

    def __init__(
        self,
        agent: BaseAgent,
        *,
        app_name: str = "InMemoryRunner",
        plugins: Sequence[BasePlugin] | None = None,
    ) -> None:
        super().__init__(
            app_name=app_name,
            agent=agent,
            session_service=InMemorySessionService(),
            artifact_service=InMemoryArtifactService(),
            memory_service=InMemoryMemoryService(),
            plugins=plugins,
        )


def _root_model(root: BaseAgent) -> BaseLlm:
    """The model of the default compaction summarizer: the root agent's."""
    from eventide.agents.llm_agent import LlmAgent

    if not isinstance(root, LlmAgent):
        raise UsageError(
            f"Event compaction needs a summarizer: the root agent {root.name!r} is not an "
            "LlmAgent, so pass EventsCompactionConfig(summarizer=LlmEventSummarizer(llm=...))."
        )
    return root.canonical_model
