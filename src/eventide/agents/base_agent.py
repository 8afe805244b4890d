"""``BaseAgent``: the unit of execution logic. Subclasses yield events from
``_run_async_impl``; ``run_async`` wraps it with the before/after agent callbacks."""

from __future__ import annotations

import logging
from collections.abc import AsyncGenerator, Awaitable, Callable, Iterator, Mapping
from contextlib import aclosing
from typing import Any, Self, cast

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from eventide import types
from eventide._callbacks import first_result, own_chain
from eventide._model import raise_own_error
from eventide.agents.resumable_run import run_resumably
from eventide.contexts import CallbackContext, InvocationContext
from eventide.errors import AgentTreeError, ConfigurationError, ResumeError, UsageError
from eventide.events import Event
from eventide.plugins.base_plugin import AFTER_AGENT, BEFORE_AGENT, BasePlugin
from eventide.protocol import USER_AUTHOR
from eventide.runtime.markers import BaseAgentState
from eventide.runtime.replay import AgentProgress, ResumeScope

__all__ = ["AgentCallback", "BaseAgent", "BaseAgentState", "check_resumable"]

_log = logging.getLogger("eventide.agents")

_AgentCallbackFn = Callable[
    [CallbackContext], types.Content | None | Awaitable[types.Content | None]
]
AgentCallback = _AgentCallbackFn | list[_AgentCallbackFn]


class BaseAgent(BaseModel):
    """Base of all agents.

    Attributes:
        name: a Python identifier, unique in the agent tree, and not ``user``.
        description: what the agent does; other agents read it to decide on transfers.
        sub_agents: the agent's children; each may have only one parent.
        parent_agent: set when the agent is added to a parent's ``sub_agents``.
        before_agent_callback: called with ``callback_context=`` before the agent runs. A
            returned ``Content`` skips the agent's own logic and becomes its answer.
        after_agent_callback: called with ``callback_context=`` after the agent ran. A
            returned ``Content`` is yielded as the agent's last event.
    """

    model_config = ConfigDict(arbitrary_types_allowed=True, extra="forbid", defer_build=True)

    name: str
    description: str = ""
    parent_agent: BaseAgent | None = Field(default=None, exclude=True, repr=False)
    sub_agents: list[BaseAgent] = Field(default_factory=list, repr=False)
    before_agent_callback: AgentCallback | None = Field(default=None, repr=False)
    after_agent_callback: AgentCallback | None = Field(default=None, repr=False)

    def __init__(self, /, **data: Any) -> None:
        try:
            super().__init__(**data)
        except ValidationError as exc:
            raise_own_error(exc)
            raise

    def clone(self, update: Mapping[str, Any] | None = None) -> Self:
        """A copy of this agent (its sub-agents cloned too), with ``update``'s fields changed.

        The copy has no parent; list fields (tools, callbacks) are new lists holding the
        same items.

        Raises:
            UsageError: ``update`` names ``parent_agent`` or a field the agent lacks.
        """
        changes = dict(update or {})
        if "parent_agent" in changes:
            raise UsageError(
                "Cannot update `parent_agent` field in clone: an agent gets its parent when it "
                "is put in another agent's sub_agents."
            )
        unknown = set(changes) - set(type(self).model_fields)
        if unknown:
            raise UsageError(
                f"Cannot update nonexistent fields in {type(self).__name__}: "
                f"{', '.join(sorted(unknown))}. clone(update=...) takes the agent's fields."
            )
        data: dict[str, Any] = {}
        for name in type(self).model_fields:
            if name == "parent_agent" or name in changes:
                continue
            value: object = getattr(self, name)
            if name == "sub_agents":
                value = [sub.clone() for sub in self.sub_agents]
            elif isinstance(value, list):
                value = list(cast("list[object]", value))
            data[name] = value
        data.update(changes)
        return type(self)(**data)

    def model_post_init(self, context: Any, /) -> None:
        # Checked here rather than in a field validator so the caller gets AgentTreeError
        # itself (pydantic wraps validator errors in ValidationError).
        _check_name(self.name)
        for sub in self.sub_agents:
            if sub.parent_agent is not None and sub.parent_agent is not self:
                raise AgentTreeError(
                    f"Agent {sub.name!r} already has parent {sub.parent_agent.name!r} and "
                    f"cannot also be a sub-agent of {self.name!r}. Create a second agent "
                    "instance (e.g. agent.model_copy(update={'name': ...})) instead."
                )
            sub.parent_agent = self
        if self.sub_agents:
            _warn_duplicate_names(self)

    # --- tree navigation ---
    @property
    def root_agent(self) -> BaseAgent:
        """The root of the tree this agent belongs to."""
        agent = self
        while agent.parent_agent is not None:
            agent = agent.parent_agent
        return agent

    def find_agent(self, name: str) -> BaseAgent | None:
        """This agent or a descendant named ``name``, or None."""
        if self.name == name:
            return self
        return self.find_sub_agent(name)

    def find_sub_agent(self, name: str) -> BaseAgent | None:
        """A descendant named ``name``, or None."""
        for sub in self.sub_agents:
            found = sub.find_agent(name)
            if found is not None:
                return found
        return None

    def walk(self) -> Iterator[BaseAgent]:
        """This agent and all its descendants, depth first."""
        yield self
        for sub in self.sub_agents:
            yield from sub.walk()

    # --- running ---
    def run_async(self, parent_context: InvocationContext) -> AsyncGenerator[Event, None]:
        """Run the agent: before callbacks, ``_run_async_impl``, after callbacks.

        Each yielded event is committed by the Runner before this generator resumes. An
        agent without agent callbacks (its own or a plugin's), outside a resumable app, has
        nothing to add around its body: its events come from ``_run_async_impl``'s own
        generator, without one more generator for each of them to pass through.
        """
        ctx = parent_context.for_agent(self)
        if (
            not ctx.resumable
            and self.before_agent_callback is None
            and self.after_agent_callback is None
        ):
            plugins = ctx.plugin_manager
            if not plugins.overrides(BasePlugin.before_agent_callback) and not plugins.overrides(
                BasePlugin.after_agent_callback
            ):
                return self._run_async_impl(ctx)
        # A context made for this agent by its caller: the Runner's for the agent it started
        # for the turn, or a fan-out's for one of its branches (on a branch).
        own = parent_context.agent is self
        top = own and parent_context.branch is None
        return self._run_with_callbacks(ctx, top=top, alone=own and not top)

    async def _run_with_callbacks(
        self, ctx: InvocationContext, *, top: bool, alone: bool
    ) -> AsyncGenerator[Event, None]:
        """:meth:`run_async` around the body: agent callbacks, or the resumable run."""
        if ctx.resumable:
            run = run_resumably(self, ctx, top=top, alone=alone)
            async with aclosing(run) as resumable_events:
                async for resumable_event in resumable_events:
                    yield resumable_event
            return
        plugins = ctx.plugin_manager
        if self.before_agent_callback is not None or plugins.overrides(
            BasePlugin.before_agent_callback
        ):
            event, skip = await self._before_agent(ctx)
            if event is not None:
                yield event
            if skip or ctx.end_invocation:
                return
        # try/finally rather than ``aclosing``: the same closing, without its two frames.
        events = self._run_async_impl(ctx)
        try:
            async for event in events:
                yield event
        finally:
            await events.aclose()
        if ctx.end_invocation:
            return
        if self.after_agent_callback is not None or plugins.overrides(
            BasePlugin.after_agent_callback
        ):
            event = await self._after_agent(ctx)
            if event is not None:
                yield event

    async def _run_async_impl(self, ctx: InvocationContext) -> AsyncGenerator[Event, None]:
        """The agent's own logic: yield events. Override in subclasses."""
        raise NotImplementedError(
            f"{type(self).__name__} must implement `async def _run_async_impl(self, ctx)` "
            "yielding Events."
        )
        yield  # pragma: no cover - makes this an async generator

    def _continuation(
        self, ctx: InvocationContext, scope: ResumeScope, progress: AgentProgress
    ) -> AsyncGenerator[Event, None]:
        """The agent's logic from where ``progress`` (read from ``scope``, the committed log)
        says it was: its class's ``_resume_async_impl`` when that was written for its
        ``_run_async_impl``, else BaseAgent's rule for agents whose position is their own.

        A subclass that overrides ``_run_async_impl`` of a class that resumes (e.g. of
        ``SequentialAgent``) gets BaseAgent's rule unless it overrides
        ``_resume_async_impl`` as well: the parent's continuation knows the parent's
        logic, not the subclass's.
        """
        if _continues_itself(type(self)):
            return self._resume_async_impl(ctx, scope, progress)
        return BaseAgent._resume_async_impl(self, ctx, scope, progress)

    def _marks_its_end(self) -> bool:
        """Whether the agent commits ``end_of_agent`` when it finishes in a resumable
        invocation (google-adk's shape): an agent whose position the log holds (its class
        continues its own logic, as the workflow agents and ``LlmAgent`` do, or it reads its
        position from the session, ``resumes_from_log``). Another agent (a custom agent's
        own ``_run_async_impl``) commits none where its parent's next marker says it is done;
        it does as a fan-out's branch, and as the last step of a sequence or loop whose
        end waits for an after-agent callback (see ``resumable_run``)."""
        return _position_in_log(self)

    def _has_after_callback(self, ctx: InvocationContext) -> bool:
        """Whether an after-agent callback (the agent's own or a plugin's) runs when the
        agent's body ends, before its end marker."""
        return self.after_agent_callback is not None or ctx.plugin_manager.overrides(
            BasePlugin.after_agent_callback
        )

    def _resume_async_impl(
        self, ctx: InvocationContext, scope: ResumeScope, progress: AgentProgress
    ) -> AsyncGenerator[Event, None]:
        """Continue the agent's own logic in a resumed invocation, where ``progress`` (read
        from ``scope``) says it had started and not ended. Override it together with
        ``_run_async_impl`` (a workflow agent continues the child that was in flight, an
        ``LlmAgent`` its model/tool loop).

        This default is for an agent whose position the log does not hold: it runs again
        when it had committed nothing but markers, or when it reads its position from the
        session itself (``resumes_from_log = True``, as ``RemoteA2aAgent`` does); otherwise
        resuming it raises ``ResumeError`` rather than repeat what it already committed.
        """
        if not progress.committed_output or getattr(self, "resumes_from_log", False) is True:
            return self._run_async_impl(ctx)
        name = type(self).__name__
        raise ResumeError(
            f"Agent {self.name!r} ({name}) had started when invocation {ctx.invocation_id} "
            f"stopped, and its position cannot be read from the log: {name} overrides "
            "_run_async_impl without _resume_async_impl(ctx, scope, progress). Override that "
            "too (or set resumes_from_log = True on an agent that reads its position from "
            "the session), or start a new turn (the committed events stay in the session).",
            invocation_id=ctx.invocation_id,
        )

    async def _before_agent(self, ctx: InvocationContext) -> tuple[Event | None, bool]:
        callback_context = CallbackContext(ctx)
        chain = ctx.plugin_manager.chain(BEFORE_AGENT)
        chain += own_chain(BEFORE_AGENT, self.before_agent_callback)
        content: Any = await first_result(chain, self, callback_context)
        if content is not None:
            return self._callback_event(ctx, callback_context, content), True
        if callback_context.state.has_delta() or callback_context.actions.artifact_delta:
            return self._callback_event(ctx, callback_context, None), False
        return None, False

    async def _after_agent(self, ctx: InvocationContext) -> Event | None:
        callback_context = CallbackContext(ctx)
        chain = ctx.plugin_manager.chain(AFTER_AGENT)
        chain += own_chain(AFTER_AGENT, self.after_agent_callback)
        content: Any = await first_result(chain, self, callback_context)
        if content is not None or not callback_context.actions.is_empty():
            return self._callback_event(ctx, callback_context, content)
        return None

    def _callback_event(
        self, ctx: InvocationContext, callback_context: CallbackContext, content: Any
    ) -> Event:
        if content is not None:
            content = types.to_content(content, role="model")
        return Event(
            invocation_id=ctx.invocation_id,
            author=self.name,
            branch=ctx.branch,
            content=content,
            actions=callback_context.actions,
        )


def _owner(cls: type[BaseAgent], method: str) -> type:
    """The class of ``cls``'s MRO that defines ``method``."""
    return next(klass for klass in cls.__mro__ if method in vars(klass))


def _continues_itself(cls: type[BaseAgent]) -> bool:
    """Whether ``cls``'s ``_resume_async_impl`` was written for its ``_run_async_impl``
    (not BaseAgent's default, and defined in the class that defines the logic or below)."""
    resume_owner = _owner(cls, "_resume_async_impl")
    return resume_owner is not BaseAgent and issubclass(
        resume_owner, _owner(cls, "_run_async_impl")
    )


def _position_in_log(agent: BaseAgent) -> bool:
    """Whether the log holds where ``agent`` is: its class continues its own logic, or it
    reads its position from the session (``resumes_from_log``)."""
    return _continues_itself(type(agent)) or getattr(agent, "resumes_from_log", False) is True


def check_resumable(root: BaseAgent) -> None:
    """Refuse, when a resumable app is built, an agent tree with an agent that could not
    continue an unfinished invocation: one whose class overrides ``_run_async_impl`` of a
    class that resumes (``SequentialAgent``, ``LoopAgent``, ``LlmAgent``...) without its
    own ``_resume_async_impl``. Its parent's continuation follows the parent's logic, not
    the subclass's, so resuming it would fail (``ResumeError``) or repeat its work.

    Agents whose class never had a continuation (a custom ``BaseAgent``) keep BaseAgent's
    rule (run again when they had committed nothing) and pass, as do agents that read their
    position from the session (``resumes_from_log = True``). The agents of a workflow's
    graph nodes are checked with the tree.

    Raises:
        ConfigurationError: naming the agent, its class and what to implement.
    """
    if not issubclass(type(root), BaseAgent):
        return  # a stand-in (a test's Mock(spec=BaseAgent)) has no tree to check
    for agent in _agents_of(root):
        if _position_in_log(agent):
            continue
        cls = type(agent)
        parent = _owner(cls, "_resume_async_impl")
        if parent is BaseAgent:
            continue
        raise ConfigurationError(
            f"Agent {agent.name!r} ({cls.__name__}) overrides _run_async_impl of "
            f"{parent.__name__} without _resume_async_impl, so this resumable app could not "
            "continue an invocation it was running (after a crash, on another worker): "
            f"{parent.__name__}'s continuation follows {parent.__name__}'s logic, not "
            f"{cls.__name__}'s. Implement _resume_async_impl(self, ctx, scope, progress) in "
            f"{cls.__name__} (continue from progress, the agent's committed events), set "
            "resumes_from_log = True if the agent reads its position from the session, or "
            "build the app without resumability_config."
        )


def _agents_of(root: BaseAgent) -> Iterator[BaseAgent]:
    """The agents of ``root``'s tree and of its workflows' agent nodes (a graph node's
    ``agent``; read by attribute, since this module knows nothing of workflows)."""
    for agent in root.walk():
        yield agent
        graph: Any = getattr(agent, "graph", None)
        for node in getattr(graph, "nodes", None) or ():
            inner: Any = getattr(node, "agent", None)
            if isinstance(inner, BaseAgent) and inner is not agent:
                yield from _agents_of(inner)


def _warn_duplicate_names(root: BaseAgent) -> None:
    """Log a warning when two agents of the tree under ``root`` share a name (as google-adk
    does, rather than refusing the tree): transfers and ``find_agent`` then reach the first
    of them in a depth-first walk."""
    seen: set[str] = set()
    duplicates: list[str] = []
    for agent in root.walk():
        if agent.name in seen and agent.name not in duplicates:
            duplicates.append(agent.name)
        seen.add(agent.name)
    if duplicates:
        _log.warning(
            "Agent tree %r has several agents named %s; give each agent a unique name: "
            "transfers and find_agent() reach the first one in a depth-first walk.",
            root.name,
            ", ".join(repr(name) for name in duplicates),
        )


def _check_name(name: str) -> None:
    if not name.isidentifier():
        raise AgentTreeError(
            f"Agent name {name!r} is not a valid identifier: use letters, digits and "
            "underscores, not starting with a digit (e.g. 'billing_agent')."
        )
    if name == USER_AUTHOR:
        raise AgentTreeError(
            "An agent cannot be named 'user': that name is reserved for the end user's events."
        )
