"""Which Runner runs an agent as a tool's child invocation (``AgentTool`` and the Task API's
tools).

The Runner imports the agents (to route a turn, to check an app), and the agents hold these
tools, so a tool importing the Runner closes an import cycle. Instead :mod:`eventide.runner`
registers its class here when it is imported (importing any ``eventide`` module runs the
package's ``__init__``, which imports the runner), and the tools ask for it when they run.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from eventide.runner import Runner

__all__ = ["register_runner", "runner_class"]

_registered: list[type[Runner]] = []


def register_runner(cls: type[Runner]) -> None:
    """Make ``cls`` the Runner of child invocations (called by :mod:`eventide.runner`)."""
    _registered[:] = [cls]


def runner_class() -> type[Runner]:
    """The Runner class child invocations run on."""
    if not _registered:  # eventide/__init__ imports eventide.runner, which registers it
        raise RuntimeError("No Runner registered: import eventide.runner first.")
    return _registered[0]
