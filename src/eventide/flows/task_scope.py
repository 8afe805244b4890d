"""The branches of delegated tasks (google-adk 2.x's Task API), and what each one sees.

A chat agent that delegates to a ``mode="task"`` sub-agent runs it on a branch of its own,
``<the caller's branch>.<task agent>@<call id>`` (``picker@call-1`` at the top). The segment
with ``@`` starts a *task scope*: the task agent's conversation holds only the events of
that scope (the request it was given, its own work, the user's replies to it), and the
agents outside it do not see them (the caller sees the task's outcome, as the call's
result). This is google-adk's isolation of a task, expressed with Eventide's branches.
"""

from __future__ import annotations

__all__ = ["TASK_MARK", "task_branch", "task_scope"]

TASK_MARK = "@"
"""Joins a task agent's name and the id of the call that delegated to it, in a branch."""


def task_branch(parent_branch: str | None, agent_name: str, call_id: str) -> str:
    """The branch a task agent runs on, delegated by the call ``call_id``."""
    segment = f"{agent_name}{TASK_MARK}{call_id}"
    return f"{parent_branch}.{segment}" if parent_branch else segment


def task_scope(branch: str | None) -> str | None:
    """The innermost task scope ``branch`` is in (its prefix up to the last task segment),
    or None outside any delegated task."""
    if not branch or TASK_MARK not in branch:
        return None
    end = branch.find(".", branch.rindex(TASK_MARK))
    return branch if end < 0 else branch[:end]
