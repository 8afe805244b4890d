"""The contexts handed to agents, callbacks and tools.

``InvocationContext`` holds everything about one invocation (services, session, the agent
running, the branch). ``ReadonlyContext`` is what instruction providers see;
``CallbackContext`` adds writable state and artifacts; ``ToolContext`` adds the function call
id and confirmation requests.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from eventide import types
from eventide._fastpath import construct_trusted
from eventide.cancellation import AbortState
from eventide.errors import ConfigurationError, LlmCallsLimitExceededError, UsageError
from eventide.events import EventActions, ToolConfirmation, UiWidget
from eventide.protocol import USER_AUTHOR
from eventide.run_config import RunConfig
from eventide.runtime.markers import BaseAgentState
from eventide.state import State

if TYPE_CHECKING:
    from eventide.agents.base_agent import BaseAgent
    from eventide.apps.app import ResumabilityConfig
    from eventide.artifacts.base_artifact_service import BaseArtifactService
    from eventide.auth.auth_config import AuthConfig, AuthCredential
    from eventide.auth.credential_service import BaseCredentialService
    from eventide.events import Event
    from eventide.flows.contents import ContentsCache
    from eventide.memory.base_memory_service import (
        BaseMemoryService,
        MemoryEntry,
        SearchMemoryResponse,
    )
    from eventide.plugins.plugin_manager import PluginManager
    from eventide.runtime.replay import ResumeScope
    from eventide.sessions.base_session_service import BaseSessionService
    from eventide.sessions.session import Session

__all__ = [
    "CallbackContext",
    "InvocationContext",
    "ReadonlyContext",
    "ToolContext",
]


@dataclass(slots=True)
class _InvocationShared:
    """What every agent's copy of one invocation's context shares."""

    pending_state: dict[str, Any] = field(default_factory=dict)
    llm_calls: int = 0
    end_invocation: bool = False
    resumable: bool = False
    abort: AbortState = field(default_factory=AbortState)
    # google-adk's checkpoint dictionaries, made on first use (see InvocationContext).
    agent_states: dict[str, dict[str, Any]] | None = None
    end_of_agents: dict[str, bool] | None = None


_new_context = object.__new__


def _no_plugins() -> PluginManager:
    from eventide.plugins.plugin_manager import PluginManager

    return PluginManager()


@dataclass(slots=True, kw_only=True)
class InvocationContext:
    """Everything about one invocation, as seen by the agent running now.

    Each agent gets its own copy (``agent`` and ``branch`` differ); the session, services
    and invocation-wide flags are shared by all copies. ``contents_cache`` is the Runner's
    memo of built conversations (None: each model call builds its conversation anew).
    ``resume`` is set while an agent continues an unfinished invocation: the part of the
    committed log it resumes from.
    Built by hand (to unit-test a custom agent), it needs ``invocation_id``, ``agent``,
    ``session`` and ``session_service``; the rest defaults (no plugins, a default
    ``RunConfig``). ``resumability_config=ResumabilityConfig(is_resumable=True)`` (google-adk's
    spelling) makes such an invocation resumable, as ``Runner(resumable=True)`` does.
    """

    invocation_id: str
    agent: BaseAgent
    session: Session
    session_service: BaseSessionService
    plugin_manager: PluginManager = field(default_factory=_no_plugins)
    artifact_service: BaseArtifactService | None = None
    memory_service: BaseMemoryService | None = None
    credential_service: BaseCredentialService | None = None
    user_content: types.Content | None = None
    run_config: RunConfig = field(default_factory=RunConfig)
    branch: str | None = None
    contents_cache: ContentsCache | None = None
    resume: ResumeScope | None = None
    resumability_config: ResumabilityConfig | None = None
    _shared: _InvocationShared = field(default_factory=_InvocationShared)

    def __post_init__(self) -> None:
        # google-adk's spelling of a resumable invocation, for contexts built by hand:
        # ResumabilityConfig(is_resumable=True) makes this invocation record where it is.
        config = self.resumability_config
        if config is not None and config.is_resumable:
            self._shared.resumable = True

    @property
    def is_resumable(self) -> bool:
        """google-adk's name for :attr:`resumable`."""
        return self._shared.resumable

    @property
    def app_name(self) -> str:
        """The app of the session."""
        return self.session.app_name

    @property
    def user_id(self) -> str:
        """The user of the session."""
        return self.session.user_id

    @property
    def end_invocation(self) -> bool:
        """Set to True to stop the whole invocation after the current step."""
        return self._shared.end_invocation

    @end_invocation.setter
    def end_invocation(self, value: bool) -> None:
        self._shared.end_invocation = value

    @property
    def resumable(self) -> bool:
        """Whether this invocation records where it is, so it can be resumed after a crash."""
        return self._shared.resumable

    @resumable.setter
    def resumable(self, value: bool) -> None:
        self._shared.resumable = value

    @property
    def is_aborted(self) -> bool:
        """Whether the invocation was asked to abort (see :mod:`eventide.cancellation`)."""
        return self._shared.abort.is_set

    def abort(self) -> None:
        """Abort the invocation at its next step (safe from any thread)."""
        self._shared.abort.abort()

    @property
    def abort_state(self) -> AbortState:
        """The invocation's abort request: the Runner attaches the caller's signal to it."""
        return self._shared.abort

    @property
    def pending_state(self) -> dict[str, Any]:
        """Writes made during the invocation but not yet committed (for dirty reads)."""
        return self._shared.pending_state

    def for_agent(self, agent: BaseAgent, *, branch: str | None = None) -> InvocationContext:
        """A copy for ``agent`` (optionally on a new branch), sharing invocation-wide data."""
        # Each field copied by hand (every agent run makes one): dataclasses.replace inspects
        # the fields on every call, and the constructor binds fifteen keyword arguments and
        # runs __post_init__, whose work the shared record already holds.
        # tests/core/test_invocation_context_resumability.py checks every field is copied.
        copy = _new_context(InvocationContext)
        copy.invocation_id = self.invocation_id
        copy.agent = agent
        copy.session = self.session
        copy.session_service = self.session_service
        copy.plugin_manager = self.plugin_manager
        copy.artifact_service = self.artifact_service
        copy.memory_service = self.memory_service
        copy.credential_service = self.credential_service
        copy.user_content = self.user_content
        copy.run_config = self.run_config
        copy.branch = self.branch if branch is None else branch
        copy.contents_cache = self.contents_cache
        copy.resume = self.resume
        copy.resumability_config = self.resumability_config
        copy._shared = self._shared
        return copy

    # --- google-adk's checkpoint API (resumable invocations) ---
    @property
    def agent_states(self) -> dict[str, dict[str, Any]]:
        """Agent name -> its resumable state (an ``agent_state`` marker's dict), shared by
        every agent of the invocation.

        A workflow agent that starts with its own entry here continues from it, as from its
        latest committed marker: a ``SequentialAgent`` from ``current_sub_agent`` (run afresh,
        its marker not written again), a ``LoopAgent`` also from ``times_looped``, a
        ``ParallelAgent`` (``{}``) fans out again. The entry is used once. Eventide's Runner
        resumes from the committed log itself; this is google-adk's API for a context built
        by hand, or filled by :meth:`populate_invocation_agent_states`.
        """
        shared = self._shared
        states = shared.agent_states
        if states is None:
            states = shared.agent_states = {}
        return states

    @property
    def end_of_agents(self) -> dict[str, bool]:
        """Agent name -> whether it has finished in this invocation (see
        :meth:`set_agent_state`)."""
        shared = self._shared
        ends = shared.end_of_agents
        if ends is None:
            ends = shared.end_of_agents = {}
        return ends

    def set_agent_state(
        self,
        agent_name: str,
        *,
        agent_state: BaseAgentState | Mapping[str, Any] | None = None,
        end_of_agent: bool = False,
    ) -> None:
        """Record where ``agent_name`` is in this invocation (google-adk's rules):
        ``end_of_agent=True`` marks it finished and drops its state; otherwise an
        ``agent_state`` is stored (as a JSON dict) and the agent is not finished; with
        neither, both are cleared so the agent runs afresh."""
        states = self.agent_states
        ends = self.end_of_agents
        if end_of_agent:
            ends[agent_name] = True
            states.pop(agent_name, None)
        elif agent_state is not None:
            states[agent_name] = (
                agent_state.model_dump(mode="json")
                if isinstance(agent_state, BaseAgentState)
                else dict(agent_state)
            )
            ends[agent_name] = False
        else:
            ends.pop(agent_name, None)
            states.pop(agent_name, None)

    def reset_sub_agent_states(self, agent_name: str) -> None:
        """Clear the state and end flag of every agent below ``agent_name`` (found in the
        tree of the context's agent), so they run afresh."""
        agent = self.agent.find_agent(agent_name)
        if agent is None:
            return
        for sub_agent in agent.walk():
            if sub_agent is not agent:
                self.set_agent_state(sub_agent.name)

    def populate_invocation_agent_states(self) -> None:
        """Fill :attr:`agent_states` and :attr:`end_of_agents` from this invocation's
        events in the session (nothing when the invocation is not resumable).

        Per author (an event's ``node_info.path`` first): ``end_of_agent`` marks it finished
        and drops its state; an ``agent_state`` marker is its state; an agent that wrote
        content but no marker gets the empty state (it had started). The user's events and
        events with none of these are skipped.
        """
        if not self.is_resumable:
            return
        states = self.agent_states
        ends = self.end_of_agents
        invocation_id = self.invocation_id
        for event in self.session.events:
            if event.invocation_id != invocation_id:
                continue
            key = event.node_info.path or event.author
            actions = event.actions
            if actions.end_of_agent:
                ends[key] = True
                states.pop(key, None)
            elif actions.agent_state is not None:
                states[key] = actions.agent_state
                ends[key] = False
            elif event.author != USER_AUTHOR and event.content and not states.get(key):
                states[key] = {}
                ends[key] = False

    def should_pause_invocation(self, event: Event) -> bool:
        """Whether the invocation pauses after ``event``: it calls a function it marks
        long-running (a long-running tool, a confirmation or credential request), so the
        user's answer continues it. Resumable or not."""
        waiting = event.long_running_tool_ids
        if not waiting:
            return False
        return any(call.id in waiting for call in event.get_function_calls())

    def increment_llm_call_count(self) -> None:
        """Count one model call.

        Raises:
            LlmCallsLimitExceededError: past ``run_config.max_llm_calls``.
        """
        shared = self._shared
        shared.llm_calls += 1
        limit = self.run_config.max_llm_calls
        if 0 < limit < shared.llm_calls:
            raise LlmCallsLimitExceededError(limit)

    def hold_temp_state(self, delta: dict[str, Any]) -> None:
        """Keep an event's ``temp:`` keys in the invocation's pending overlay.

        Called before the event is committed (the commit strips ``temp:`` keys from its
        ``state_delta``), so later agents of the same invocation read them even when they
        were written straight into ``state_delta`` (``output_key``, a custom agent).

        They also go on this invocation's copy of the session (``ctx.session.state``), where
        google-adk puts them and code written for it reads them; that copy is loaded for
        this invocation only and is never written back, so nothing stores them."""
        pending = self._shared.pending_state
        session_state: dict[str, Any] | None = None
        for key, value in delta.items():
            if key.startswith("temp:"):
                pending[key] = value
                if session_state is None:
                    session_state = self.session.state
                session_state[key] = value

    def forget_committed(self, delta: dict[str, Any]) -> None:
        """Drop pending entries that a just-committed ``state_delta`` made durable."""
        pending = self._shared.pending_state
        if pending:
            for key, value in delta.items():
                if pending.get(key, pending) is value:
                    del pending[key]


class ReadonlyContext:
    """A read-only view of the invocation, for instruction providers."""

    __slots__ = ("_invocation_context",)

    def __init__(self, invocation_context: InvocationContext) -> None:
        self._invocation_context = invocation_context

    @property
    def invocation_context(self) -> InvocationContext:
        """The underlying invocation context."""
        return self._invocation_context

    @property
    def invocation_id(self) -> str:
        """The id of the current invocation."""
        return self._invocation_context.invocation_id

    @property
    def user_id(self) -> str:
        """The user of the session (the invocation context's, as google-adk reads it)."""
        return self._invocation_context.user_id

    @property
    def app_name(self) -> str:
        """The app of the session (the invocation context's, as google-adk reads it)."""
        return self._invocation_context.app_name

    @property
    def run_config(self) -> RunConfig:
        """The invocation's settings."""
        return self._invocation_context.run_config

    @property
    def agent_name(self) -> str:
        """The name of the agent running now."""
        return self._invocation_context.agent.name

    @property
    def user_content(self) -> types.Content | None:
        """The user message that started the invocation."""
        return self._invocation_context.user_content

    @property
    def is_aborted(self) -> bool:
        """Whether the invocation was asked to abort: a long tool may stop early."""
        return self._invocation_context.is_aborted

    @property
    def session(self) -> Session:
        """The session (read it, do not change it: changes go through events)."""
        return self._invocation_context.session

    @property
    def state(self) -> MappingProxyType[str, Any]:
        """The state as this invocation sees it (committed plus pending), read-only."""
        ictx = self._invocation_context
        pending = ictx.pending_state
        if not pending:
            return MappingProxyType(ictx.session.state)
        return MappingProxyType({**ictx.session.state, **pending})


class CallbackContext(ReadonlyContext):
    """The context of a callback: writable state and artifact access.

    State writes and artifact saves are recorded in ``actions``, which the event produced
    after the callback carries to the Runner for commit.
    """

    __slots__ = ("_event_actions", "_state")

    def __init__(
        self,
        invocation_context: InvocationContext,
        *,
        event_actions: EventActions | None = None,
    ) -> None:
        super().__init__(invocation_context)
        # Both made on first use: many contexts (a workflow node's, a callback's that
        # returns at once) never touch them, and an EventActions costs about 1 KiB.
        self._event_actions = event_actions
        self._state: State | None = None

    @property
    def state(self) -> State:  # type: ignore[override]  # writable here
        """The state: reads see pending writes; writes go to ``actions.state_delta``."""
        state = self._state
        if state is None:
            ictx = self._invocation_context
            state = self._state = State(
                ictx.session.state, self.actions.state_delta, ictx.pending_state
            )
        return state

    @property
    def actions(self) -> EventActions:
        """The actions the next event from this context will carry."""
        actions = self._event_actions
        if actions is None:
            actions = self._event_actions = construct_trusted(EventActions, {})  # all defaults
        return actions

    @property
    def actions_if_any(self) -> EventActions | None:
        """:attr:`actions` when something made them (wrote state, saved an artifact, asked
        for them), else None: a reader that only looks need not make an empty record."""
        return self._event_actions

    def _artifacts(self) -> BaseArtifactService:
        service = self._invocation_context.artifact_service
        if service is None:
            raise ConfigurationError(
                "Artifact service is not initialized. Pass artifact_service=... to Runner "
                "(InMemoryArtifactService() or FileArtifactService(root)) to use artifacts."
            )
        return service

    def render_ui_widget(self, ui_widget: UiWidget) -> None:
        """Add a widget (an ``eventide.events.UiWidget``) for the UI to render with the
        event this context produces (an MCP App's iframe, for one).

        Raises:
            UsageError: a widget with the same id is already on the event.
        """
        actions = self.actions
        widgets = actions.render_ui_widgets
        if widgets is None:
            widgets = actions.render_ui_widgets = []
        if any(widget.id == ui_widget.id for widget in widgets):
            raise UsageError(
                f"UI widget with ID '{ui_widget.id}' already exists in the current event "
                "actions; give each widget of an event its own id."
            )
        widgets.append(ui_widget)

    async def save_artifact(
        self,
        filename: str,
        artifact: types.Part,
        custom_metadata: dict[str, Any] | None = None,
    ) -> int:
        """Save a new version of ``filename``; returns its version number.

        The version is recorded in ``actions.artifact_delta``. ``custom_metadata`` (JSON
        values) is kept with the version (see ``get_artifact_version`` of the service).
        """
        ictx = self._invocation_context
        # Passed on only when given: artifact services written before it existed still work.
        extra = {"custom_metadata": custom_metadata} if custom_metadata else {}
        version = await self._artifacts().save_artifact(
            app_name=ictx.app_name,
            user_id=ictx.user_id,
            session_id=ictx.session.id,
            filename=filename,
            artifact=artifact,
            **extra,
        )
        self.actions.artifact_delta[filename] = version
        return version

    async def load_artifact(self, filename: str, version: int | None = None) -> types.Part | None:
        """Load a version (the latest by default) of ``filename``; None when absent."""
        ictx = self._invocation_context
        return await self._artifacts().load_artifact(
            app_name=ictx.app_name,
            user_id=ictx.user_id,
            session_id=ictx.session.id,
            filename=filename,
            version=version,
        )

    async def list_artifacts(self) -> list[str]:
        """The artifact file names visible to this session."""
        ictx = self._invocation_context
        return await self._artifacts().list_artifact_keys(
            app_name=ictx.app_name, user_id=ictx.user_id, session_id=ictx.session.id
        )

    def _memory(self, doing: str) -> BaseMemoryService:
        service = self._invocation_context.memory_service
        if service is None:
            # google-adk's wording first (apps and tests match on it), then what to do.
            raise ConfigurationError(
                f"{doing}memory service is not available. Pass memory_service=... to Runner "
                "(InMemoryMemoryService() or a SQL memory service) to use memory."
            )
        return service

    async def search_memory(self, query: str) -> SearchMemoryResponse:
        """Search the user's memory of past sessions."""
        ictx = self._invocation_context
        return await self._memory("Memory service is not available. ").search_memory(
            app_name=ictx.app_name, user_id=ictx.user_id, query=query
        )

    async def add_session_to_memory(self) -> None:
        """Add this session (as committed so far) to the memory service."""
        service = self._memory("Cannot add session to memory: ")
        await service.add_session_to_memory(self._invocation_context.session)

    async def add_events_to_memory(
        self,
        *,
        events: Sequence[Event],
        custom_metadata: Mapping[str, object] | None = None,
    ) -> None:
        """Add these events (e.g. the latest turn) to the user's memory, scoped to this
        session, without re-adding the whole session.

        Raises:
            ConfigurationError: the Runner has no memory service.
            NotImplementedError: the memory service cannot add events one batch at a time.
        """
        service = self._memory("Cannot add events to memory: ")
        session = self._invocation_context.session
        await service.add_events_to_memory(
            app_name=session.app_name,
            user_id=session.user_id,
            session_id=session.id,
            events=events,
            custom_metadata=custom_metadata,
        )

    async def add_memory(
        self,
        *,
        memories: Sequence[MemoryEntry],
        custom_metadata: Mapping[str, object] | None = None,
    ) -> None:
        """Write these memory entries to the user's memory directly.

        Raises:
            ConfigurationError: the Runner has no memory service.
            NotImplementedError: the memory service takes no direct writes.
        """
        service = self._memory("Cannot add memory: ")
        session = self._invocation_context.session
        await service.add_memory(
            app_name=session.app_name,
            user_id=session.user_id,
            memories=memories,
            custom_metadata=custom_metadata,
        )

    async def delete_memory(self, memory_id: str | None = None) -> None:
        """Forget one of the user's memories by its id.

        Raises:
            ConfigurationError: the Runner has no memory service.
            NotImplementedError: the memory service cannot delete single memories.
        """
        ictx = self._invocation_context
        await self._memory("Cannot delete memory: ").delete_memory(
            app_name=ictx.app_name, user_id=ictx.user_id, memory_id=memory_id
        )

    async def save_credential(self, auth_config: AuthConfig) -> None:
        """Store the credential in ``auth_config.exchanged_auth_credential`` with the
        Runner's credential service, under ``auth_config.credential_key``."""
        from eventide.auth import save_credential

        await save_credential(self._invocation_context, auth_config)

    async def load_credential(self, auth_config: AuthConfig) -> AuthCredential | None:
        """The stored credential for ``auth_config``, or None."""
        from eventide.auth import load_credential

        return await load_credential(self._invocation_context, auth_config)


class ToolContext(CallbackContext):
    """The context of a tool call.

    Attributes:
        function_call_id: the id of the model's function call that triggered the tool; it
            links auth and confirmation requests to this call.
        tool_confirmation: the user's answer when the call was confirmed or declined.
    """

    __slots__ = ("function_call_id", "tool_confirmation")

    def __init__(
        self,
        invocation_context: InvocationContext,
        *,
        function_call_id: str | None = None,
        event_actions: EventActions | None = None,
        tool_confirmation: ToolConfirmation | None = None,
    ) -> None:
        super().__init__(invocation_context, event_actions=event_actions)
        self.function_call_id = function_call_id
        self.tool_confirmation = tool_confirmation

    def request_confirmation(self, *, hint: str | None = None, payload: Any = None) -> None:
        """Pause the invocation until the user confirms or declines this tool call."""
        if self.function_call_id is None:
            raise ConfigurationError(
                "request_confirmation requires function_call_id: call it from a tool, whose "
                "context carries the id of the model's function call."
            )
        self.actions.requested_tool_confirmations[self.function_call_id] = ToolConfirmation(
            hint=hint or "", payload=payload
        )

    def request_credential(self, auth_config: AuthConfig) -> None:
        """Ask the user for the credential ``auth_config`` (an ``eventide.auth.AuthConfig``)
        describes, for this tool call.

        The invocation pauses with an ``eventide_request_credential`` call; once the client
        answers, this tool call runs again and ``get_auth_response`` returns the credential.
        The request sent to the client never contains the OAuth2 client secret.
        """
        from eventide.auth import credential_request

        if self.function_call_id is None:
            raise ConfigurationError(
                "request_credential requires function_call_id: call it from a tool, whose "
                "context carries the id of the model's function call."
            )
        self.actions.requested_auth_configs[self.function_call_id] = credential_request(auth_config)

    async def get_auth_response(self, auth_config: AuthConfig) -> AuthCredential | None:
        """The user's credential (an ``eventide.auth.AuthCredential``) for ``auth_config``,
        or None when the user has not given one yet.

        Credentials are stored per app, user and ``auth_config.credential_key`` by the
        Runner's credential service; OAuth2 codes are exchanged for tokens on first read.
        """
        from eventide.auth import load_credential

        return await load_credential(self._invocation_context, auth_config)
