"""The agents' runtime: how an invocation records where it is, and how it continues.

Every agent, the workflow agents included, runs on one mechanism. While running resumably it
commits small markers in its own events (:mod:`eventide.runtime.markers`); when an invocation
continues (after a crash, on another worker, after the user's answer) each agent reads its
part of the committed log through a replay index (:mod:`eventide.runtime.replay`): completed
children are skipped (their outputs are in the log), the child that was in flight continues,
and the rest run.

A graph ``Workflow`` (``eventide.workflow``) is an agent here too: it reads the position
of its nodes from their ``node_info`` paths itself (``eventide.workflow.replay``) and says so
with ``resumes_from_log``, so resuming runs it again and it replays its finished nodes.

This package imports nothing from ``eventide.agents``: the agents import it.
"""
