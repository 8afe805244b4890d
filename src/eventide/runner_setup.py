"""What a ``Runner``'s arguments come to: the app's name, root agent, plugins and settings.

``Runner(app=App(...))`` and ``Runner(app_name=..., agent=...)`` are two spellings of one
configuration; :func:`runner_setup` checks the arguments (with an error that says which
spelling to use) and merges an ``App``'s plugins and settings with the Runner's own.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from eventide.agents.base_agent import BaseAgent, check_resumable
from eventide.errors import UsageError

if TYPE_CHECKING:
    from eventide.apps.app import App, ResumabilityConfig
    from eventide.history.compaction import Compactor, EventsCompactionConfig
    from eventide.memory.base_memory_service import BaseMemoryService
    from eventide.models.base_llm import BaseLlm
    from eventide.plugins.base_plugin import BasePlugin

__all__ = ["RunnerSetup", "runner_setup"]


@dataclass(slots=True, frozen=True)
class RunnerSetup:
    """A Runner's resolved configuration (see ``Runner``'s arguments)."""

    app_name: str
    agent: BaseAgent
    plugins: Sequence[BasePlugin]
    add_sessions_to_memory: bool
    resumability: ResumabilityConfig | None
    compactor: Compactor | None
    app: App

    @property
    def resumable(self) -> bool:
        """Invocations record where they are, so they can be resumed."""
        return self.resumability is not None and self.resumability.is_resumable


def runner_setup(
    *,
    app_name: str | None,
    agent: BaseAgent | None,
    app: App | None,
    plugins: Sequence[BasePlugin] | None,
    node: BaseAgent | None = None,
    add_sessions_to_memory: bool,
    memory_service: BaseMemoryService | None,
    events_compaction_config: EventsCompactionConfig | None,
) -> RunnerSetup:
    """Check and merge a Runner's arguments.

    Raises:
        UsageError: both or neither of ``app`` and ``agent`` (``node``, google-adk 2.x's
            name for it); no ``app_name``; an agent
            that is not a ``BaseAgent``; memory asked for without a memory service.
    """
    compaction = events_compaction_config
    resumability = None
    if node is not None:  # google-adk 2.x's keyword for a workflow at the root
        if agent is not None:
            raise UsageError("Only one of app, agent, or node may be provided.")
        agent = node
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
    if resumability is not None and resumability.is_resumable:
        check_resumable(agent)  # an App built resumable checked it; one changed since, too
    if add_sessions_to_memory and memory_service is None:
        raise UsageError("add_sessions_to_memory=True needs a memory_service.")
    compactor = None
    if compaction is not None:
        from eventide.history.compaction import Compactor

        root = agent
        compactor = Compactor(compaction, default_llm=lambda: _root_model(root))
    if app is None:
        from eventide.apps.app import runner_app

        app = runner_app(
            name=app_name,
            root_agent=agent,
            plugins=list(plugins or ()),
            add_sessions_to_memory=add_sessions_to_memory,
            events_compaction_config=compaction,
        )
    return RunnerSetup(
        app_name, agent, list(plugins or ()), add_sessions_to_memory, resumability, compactor, app
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
