"""``App``: an agent application, the unit the CLI and the HTTP server load and run."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, cast

from eventide.agents.base_agent import BaseAgent, check_resumable
from eventide.errors import UsageError
from eventide.plugins.base_plugin import BasePlugin
from eventide.protocol import USER_AUTHOR

if TYPE_CHECKING:
    from eventide.history.compaction import EventsCompactionConfig

__all__ = ["App", "ResumabilityConfig"]

_APP_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_-]*")


@dataclass(slots=True, kw_only=True, frozen=True)
class ResumabilityConfig:
    """Whether an app's invocations can be resumed after a crash (google-adk's name).

    Attributes:
        is_resumable: record, in each invocation's committed events, where the invocation
            is (small markers: ``actions.agent_state`` before each step of a workflow agent,
            ``actions.end_of_agent`` when an agent finishes), so ``Runner.resume_async``
            can continue an unfinished invocation from its last committed event.
    """

    is_resumable: bool = False


@dataclass(slots=True, kw_only=True)
class App:
    """An agent app: a root agent plus the plugins and settings it runs with.

    A folder or module that defines ``root_agent`` (or ``app = App(...)``) is an app; see
    :mod:`eventide.apps.loader`.

    Attributes:
        name: the app's name; sessions and ``app:`` state are scoped by it. A letter, then
            letters, digits, ``_`` or ``-`` (not ``user``); by convention the folder's name.
        root_agent: the agent that answers each turn.
        plugins: hooks applied to every agent, model and tool call.
        add_sessions_to_memory: add each finished invocation's session to memory.
        events_compaction_config: summarise older events every N invocations, so the model's
            context stays bounded (see :mod:`eventide.history.compaction`).
        resumability_config: make invocations resumable (see ``ResumabilityConfig``).
    """

    name: str
    # Required; None only so that leaving it out is google-adk's ValueError, not a TypeError.
    root_agent: BaseAgent = cast("BaseAgent", None)
    plugins: list[BasePlugin] = field(default_factory=list)
    add_sessions_to_memory: bool = False
    events_compaction_config: EventsCompactionConfig | None = None
    resumability_config: ResumabilityConfig | None = None

    def __post_init__(self) -> None:
        # google-adk's rule: a letter first, then letters, digits, '_' or '-'; not 'user'.
        if not _APP_NAME.fullmatch(self.name):
            raise UsageError(
                f"App name {self.name!r} is not valid: start with a letter and use letters, "
                "digits, underscores and hyphens (it is usually the app folder's name)."
            )
        if self.name == USER_AUTHOR:
            raise UsageError(
                "An app cannot be named 'user': that name is reserved for the end user's input."
            )
        if self.root_agent is None:  # pyright: ignore[reportUnnecessaryComparison]
            raise UsageError(
                f"App {self.name!r}: root_agent must be provided: pass "
                "root_agent=<the agent that answers each turn>."
            )
        if not isinstance(self.root_agent, BaseAgent):
            raise UsageError(
                f"App {self.name!r}: root_agent must be a BaseAgent, "
                f"got {type(self.root_agent).__name__}."
            )
        if self.resumability_config is not None and self.resumability_config.is_resumable:
            check_resumable(self.root_agent)


def runner_app(
    *,
    name: str,
    root_agent: BaseAgent,
    plugins: list[BasePlugin],
    add_sessions_to_memory: bool,
    events_compaction_config: EventsCompactionConfig | None,
) -> App:
    """The ``App`` that ``Runner(app_name=..., agent=...)`` stands for (``Runner.app``).

    Its name is not checked as ``App(name=...)``'s is: the Runner already accepted it, and
    google-adk wraps a bare agent the same way (a Runner's app name may be any string).
    """
    app = object.__new__(App)
    app.name = name
    app.root_agent = root_agent
    app.plugins = plugins
    app.add_sessions_to_memory = add_sessions_to_memory
    app.events_compaction_config = events_compaction_config
    app.resumability_config = None
    return app
