"""Durable invocations: a crashed or failed turn continues from its committed events.

With ``App(resumability_config=ResumabilityConfig(is_resumable=True))`` every invocation
records where it is in small markers on its own events (:mod:`eventide.durable.log`), and
``Runner.resume_async`` continues an unfinished one from its last committed event
(:mod:`eventide.durable.agents`, :mod:`eventide.durable.llm_resume`).
"""

from eventide.durable.log import ResumeScope
from eventide.durable.plan import (
    ResumePlan,
    paused_invocation,
    plan_resume,
    unfinished_invocation,
)

__all__ = [
    "ResumePlan",
    "ResumeScope",
    "paused_invocation",
    "plan_resume",
    "unfinished_invocation",
]
