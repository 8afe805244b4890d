"""Durable invocations: a crashed or failed turn continues from its committed events.

With ``App(resumability_config=ResumabilityConfig(is_resumable=True))`` every invocation
records where it is in small markers on its own events (:mod:`eventide.runtime.markers`), and
``Runner.resume_async`` continues an unfinished one from its last committed event: this
package finds where (:mod:`eventide.durable.plan`), and every agent continues itself from its
part of the log (:mod:`eventide.runtime.replay`, ``BaseAgent._resume_async_impl``).
"""

from eventide.durable.plan import (
    Pickup,
    ResumePlan,
    paused_invocation,
    pickup,
    plan_resume,
    unfinished_invocation,
)
from eventide.runtime.replay import ResumeScope

__all__ = [
    "Pickup",
    "ResumePlan",
    "ResumeScope",
    "paused_invocation",
    "pickup",
    "plan_resume",
    "unfinished_invocation",
]
