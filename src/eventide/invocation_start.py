"""The one way an invocation starts or continues: what the Runner's commit loop drives.

Every ``run_async`` and ``resume_async`` call is a :class:`Turn`; :func:`begin` loads the
session and gives the invocation's context: a new invocation with the user's message
committed, or (in a resumable app) an unfinished one continued from its log
(:mod:`eventide.durable.plan` decides which and where; every agent then continues itself
from the replay index, :mod:`eventide.runtime.replay`).
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Protocol

from eventide import types
from eventide._ids import new_invocation_id
from eventide.contexts import InvocationContext
from eventide.errors import SessionNotFoundError, UsageError
from eventide.events import Event
from eventide.flows.task_delegation import reply_branch
from eventide.run_config import RunConfig
from eventide.runtime.markers import ANSWERED, FINISHED, STARTED, mark
from eventide.user_event import user_event

if TYPE_CHECKING:
    from eventide.agents.base_agent import BaseAgent
    from eventide.artifacts.base_artifact_service import BaseArtifactService
    from eventide.auth.credential_service import BaseCredentialService
    from eventide.flows.contents import ContentsCache
    from eventide.memory.base_memory_service import BaseMemoryService
    from eventide.plugins.plugin_manager import PluginManager
    from eventide.sessions.base_session_service import BaseSessionService
    from eventide.sessions.session import Session

__all__ = [
    "FRESH",
    "RESUME",
    "RUN",
    "Services",
    "Start",
    "Turn",
    "answer_before_run",
    "begin",
]

# What a Turn asks for: run a message (or continue an invocation, in a resumable app),
# continue an invocation only (resume_async), or run a message in a new invocation only.
RUN, RESUME, FRESH = "run", "resume", "fresh"

# The settings of invocations run without a RunConfig (shared: treat it as read-only).
_DEFAULT_RUN_CONFIG = RunConfig()

NOT_RESUMABLE = (
    "Resuming needs a resumable app: Runner(app=App(..., resumability_config="
    "ResumabilityConfig(is_resumable=True)), ...)."
)


class Services(Protocol):
    """What starting an invocation reads of the Runner (read at each start: a Runner's
    fields may be changed between turns)."""

    app_name: str
    agent: BaseAgent
    session_service: BaseSessionService
    artifact_service: BaseArtifactService | None
    memory_service: BaseMemoryService | None
    credential_service: BaseCredentialService | None
    plugin_manager: PluginManager
    auto_create_session: bool
    resumable: bool

    @property
    def contents_cache(self) -> ContentsCache: ...


@dataclass(slots=True)
class Turn:
    """One call of ``run_async`` or ``resume_async``: what to start or continue."""

    user_id: str
    session_id: str
    new_message: types.Content | str | None
    state_delta: dict[str, Any] | None
    run_config: RunConfig | None
    invocation_id: str | None = None
    resume_unfinished: bool = False
    mode: str = RUN
    abort_signal: asyncio.Event | None = None
    session: Session | None = None  # as the caller just read it (run_async(session=...))


@dataclass(slots=True)
class Start:
    """Where the commit loop starts.

    Attributes:
        ctx: the invocation's context.
        resumed: an agent continues in it (``ctx.agent`` and ``ctx.resume`` say where);
            otherwise the agent for the turn is picked as for a new turn.
        then: the turn to run after this invocation (``resume_unfinished``: the new
            message, after the unfinished invocation), if any.
    """

    ctx: InvocationContext
    resumed: bool = False
    then: Turn | None = None

    @property
    def marks_first_event(self) -> bool:
        """The agent's first committed event must carry the ``started`` marker: a resumable
        invocation that starts with nothing of it committed yet (no user event)."""
        events, ctx = self.ctx.session.events, self.ctx
        committed = bool(events) and events[-1].invocation_id == ctx.invocation_id
        return ctx.resumable and not self.resumed and not committed


async def begin(runner: Services, turn: Turn) -> Start:
    """Start or continue the invocation ``turn`` asks for (see the module docstring).

    Raises:
        UsageError: a resume asked of a Runner that is not resumable.
        SessionNotFoundError: the session does not exist (and is not created).
        InvocationNotFoundError, ResumeError: the invocation cannot be continued.
    """
    if turn.mode == RESUME:
        if not runner.resumable:
            raise UsageError(NOT_RESUMABLE)
        session = await _load_session(runner, turn, create=False)
        return _continue(runner, session, turn.invocation_id, turn.run_config)
    if turn.resume_unfinished and not runner.resumable:
        raise UsageError(NOT_RESUMABLE)
    session = await _load_session(runner, turn, create=runner.auto_create_session)
    if runner.resumable and turn.mode == RUN:
        from eventide.durable import pickup

        message, delta = turn.new_message, turn.state_delta
        found = pickup(session, message, bool(delta), turn.invocation_id, turn.resume_unfinished)
        if found is not None:
            if found.answers:
                # The message answers the calls the invocation paused for: committed in
                # it (on the calls' branch), it goes on from its log, as google-adk's
                # resumable apps do.
                ctx = _new_context(runner, found.invocation_id, session, turn.run_config)
                answer = await user_event(
                    ctx, message, delta, invocation_mark=ANSWERED, branch=found.branch
                )
                await _commit(runner, ctx, answer)
            start = _continue(runner, session, found.invocation_id, turn.run_config)
            if found.then_new:
                start.then = replace(turn, mode=FRESH, invocation_id=None)
            return start
    invocation_id = turn.invocation_id or new_invocation_id()
    ctx = _new_context(runner, invocation_id, session, turn.run_config)
    if turn.new_message is not None or turn.state_delta:
        marker = STARTED if runner.resumable else None
        # A reply to a task agent's question goes on the task's branch (Task API).
        branch = reply_branch(session.events)
        event = await user_event(
            ctx, turn.new_message, turn.state_delta, invocation_mark=marker, branch=branch
        )
        await _commit(runner, ctx, event)
    return Start(ctx)


async def answer_before_run(ctx: InvocationContext) -> Event | None:
    """The answer a plugin's ``before_run_callback`` gives instead of the agent, as the
    invocation's one event (its ``finished`` marker on it in a resumable app), or None."""
    early = await ctx.plugin_manager.before_run_callback(invocation_context=ctx)
    if early is None:
        return None
    event = Event(
        invocation_id=ctx.invocation_id,
        author="model",
        content=types.to_content(early, role="model"),
    )
    if ctx.resumable:
        mark(event, FINISHED)
    return event


def _continue(
    runner: Services, session: Session, invocation_id: str | None, run_config: RunConfig | None
) -> Start:
    """The start that continues ``invocation_id`` (the session's latest when None)."""
    from eventide.durable import plan_resume

    plan = plan_resume(runner.agent, session, invocation_id)
    ctx = _new_context(runner, plan.invocation_id, session, run_config)
    ctx.user_content = plan.user_content
    if plan.start_agent is None:  # only the user's event was committed
        return Start(ctx)
    ctx.agent = plan.start_agent
    ctx.resume = plan.scope
    return Start(ctx, resumed=True)


async def _load_session(runner: Services, turn: Turn, *, create: bool) -> Session:
    """The turn's session; a missing one is created when ``create`` (resuming needs the
    session that ran the invocation)."""
    service, app_name = runner.session_service, runner.app_name
    user_id, session_id = turn.user_id, turn.session_id
    if turn.session is not None:
        _check_given_session(turn.session, app_name, user_id, session_id)
        return turn.session
    session = await service.get_session(app_name=app_name, user_id=user_id, session_id=session_id)
    if session is None:
        if not create:
            raise SessionNotFoundError(app_name=app_name, user_id=user_id, session_id=session_id)
        session = await service.create_session(
            app_name=app_name, user_id=user_id, session_id=session_id
        )
    return session


def _new_context(
    runner: Services, invocation_id: str, session: Session, run_config: RunConfig | None
) -> InvocationContext:
    ctx = InvocationContext(
        invocation_id=invocation_id,
        agent=runner.agent,
        session=session,
        session_service=runner.session_service,
        artifact_service=runner.artifact_service,
        memory_service=runner.memory_service,
        credential_service=runner.credential_service,
        plugin_manager=runner.plugin_manager,
        run_config=run_config or _DEFAULT_RUN_CONFIG,
        contents_cache=runner.contents_cache,
    )
    if runner.resumable:
        ctx.resumable = True
    return ctx


async def _commit(runner: Services, ctx: InvocationContext, event: Event) -> None:
    delta = event.actions.state_delta
    if delta:
        ctx.hold_temp_state(delta)
    await runner.session_service.append_event(ctx.session, event)


def _check_given_session(session: Session, app_name: str, user_id: str, session_id: str) -> None:
    """Refuse a ``session`` handed to ``run_async`` that is not the one its ids name."""
    given = (session.app_name, session.user_id, session.id)
    if given != (app_name, user_id, session_id):
        raise UsageError(
            f"run_async(session=...) got session {given!r}, but the call names "
            f"{(app_name, user_id, session_id)!r}: pass the session those ids name, as just "
            "read from this Runner's session service (or no session, to have it read)."
        )
