"""The chain a ``SequentialAgent`` and a ``LoopAgent`` share: steps run one after another,
once (a sequence) or round after round (a loop, the chain with a route back from its last
step to its first).

Each step is a sub-agent run in the chain's invocation; its events are forwarded as they
come (no channel: the chain's generator is the step's, so a step resumes after its own
commit at no cost per event). In a resumable invocation the chain commits its step marker
before each step (``{"current_sub_agent": name}``, a loop's with ``"times_looped"``);
resumed (:class:`~eventide.runtime.replay.Continuation`), it continues the step in flight
from its own events and runs the rest. When the chain ends after a step (its last step of
its last round, or an escalation) and its owner's end marker waits for an after-agent
callback (``ends_late``), a step that commits no end marker of its own (a custom agent) gets
one: a crash in that callback must not leave the step looking half-run. See
docs/architecture.md, sections 11 and 15.1.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, Callable, Sequence
from contextlib import aclosing
from typing import Any, Protocol

from eventide.contexts import InvocationContext
from eventide.events import Event
from eventide.runtime.replay import Continuation, end_marker, step_marker

__all__ = ["Step", "run_chain"]


class Step(Protocol):
    """What the chain reads of a sub-agent."""

    @property
    def name(self) -> str: ...

    def run_async(self, parent_context: InvocationContext) -> AsyncGenerator[Event, None]: ...

    def _marks_its_end(self) -> bool: ...


async def run_chain(
    owner: str,
    steps: Sequence[Step],
    ctx: InvocationContext,
    where: Continuation,
    *,
    rounds: int | None = 1,
    ends_on: Callable[[str], bool] | None = None,
    ends_late: bool = False,
) -> AsyncGenerator[Event, None]:
    """Run ``steps`` for ``owner`` (the chain agent's name) from ``where``.

    Args:
        rounds: 1 for a sequence; a loop's ``max_iterations`` (None: until an escalation).
        ends_on: a loop's escalation rule: whether an ``escalate`` event by ``author`` ends
            the chain, once that author's step has finished. None: a sequence, which does
            not watch escalations and writes no ``times_looped``.
        ends_late: in a resumable invocation, an after-agent callback runs between the
            chain's last step and the owner's end marker.
    """
    looping = ends_on is not None
    times_looped = int(where.state.get("times_looped", 0))
    start, scope, escalated = where.start, where.scope, where.escalated
    last = len(steps) - 1
    while rounds is None or times_looped < rounds:
        for index in range(start, len(steps)):
            step = steps[index]
            ended = False  # the step's end marker is in the log already
            if scope is not None:
                ended = ends_late and scope.progress(step.name, ctx.branch).ended
                ctx.resume, scope = scope, None  # the step in flight continues from its events
            elif ctx.resumable:
                state: dict[str, Any] = {"current_sub_agent": step.name}
                if looping:
                    state["times_looped"] = times_looped
                yield step_marker(owner, ctx, state)
            async with aclosing(step.run_async(ctx)) as events:
                if ends_on is None:
                    async for event in events:
                        yield event
                else:
                    async for event in events:
                        yield event
                        if event.actions.escalate and ends_on(event.author):
                            escalated = True
            ctx.resume = None  # the step took its copy of the scope; later steps run fresh
            if ctx.end_invocation:
                return
            if (
                ends_late
                and (escalated or (index == last and times_looped + 1 == rounds))
                and not ended
                and not step._marks_its_end()  # pyright: ignore[reportPrivateUsage]
            ):
                # Nothing else in the log would say this step finished before the callback.
                yield end_marker(step.name, ctx, None, top=False)
            if escalated:
                return
        start = 0
        times_looped += 1
