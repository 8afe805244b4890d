"""The durable log's markers and replay index, under their historical name.

They live in :mod:`eventide.runtime` (the agents read them, and must not import
``eventide.durable``); this module keeps ``from eventide.durable.log import ...`` working.
"""

from eventide.runtime.markers import (
    ANSWERED,
    CALL_KEY,
    ENDED,
    FINISHED,
    INVOCATION_KEY,
    STARTED,
    WAITING_KEY,
    WARNING_KEY,
    invocation_mark,
    invocation_status,
    is_log_maintenance,
    on_branch,
    waiting_calls,
)
from eventide.runtime.replay import AgentProgress, ResumeScope

__all__ = [
    "ANSWERED",
    "CALL_KEY",
    "ENDED",
    "FINISHED",
    "INVOCATION_KEY",
    "STARTED",
    "WAITING_KEY",
    "WARNING_KEY",
    "AgentProgress",
    "ResumeScope",
    "invocation_mark",
    "invocation_status",
    "is_log_maintenance",
    "on_branch",
    "waiting_calls",
]
