"""Aborting an invocation, and the events that record it in the session.

A caller aborts an invocation with the ``asyncio.Event`` it passed as
``Runner.run_async(abort_signal=...)`` (google-adk 2.x's name), or with
``InvocationContext.abort()`` from the agent's own code; agents, callbacks and tools see it
as ``is_aborted`` on their context. The invocation stops at its next step: the event the
agent is making when the abort comes is committed (a tool that already ran keeps its
result), and nothing after it; the LLM flow makes no further model call and runs no further
tool, and an ``AgentTool``'s inner invocation is aborted with its caller. A caller that
also cancels its task (``/run_sse`` when the client hangs up) stops a model call at once.

What was committed stays committed. The Runner then commits the events that *seal* the
invocation (:func:`abort_events`), so a reload shows that it was aborted and the next turn's
conversation is well formed: each function call left without a response gets an error
response (the model then knows the call did not finish), or, when none is pending, one
content-less event with ``error_code="INVOCATION_ABORTED"``. The codes and the shape are
google-adk's, so ADK's web UI shows the marker.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import TYPE_CHECKING

from eventide import types
from eventide.events import Event

if TYPE_CHECKING:
    from eventide.sessions.base_session_service import BaseSessionService
    from eventide.sessions.session import Session

__all__ = [
    "ABORT_MESSAGE",
    "INVOCATION_ABORTED",
    "AbortSignal",
    "AbortState",
    "abort_events",
    "seal_aborted",
]

INVOCATION_ABORTED = "INVOCATION_ABORTED"
"""The ``error_code`` of the events that seal an aborted invocation (google-adk's code)."""

ABORT_MESSAGE = "The invocation was aborted by its caller before it finished."
"""Their ``error_message``, and the ``error`` of the responses to calls left pending."""


class AbortSignal(asyncio.Event):
    """An ``asyncio.Event`` to abort invocations with that tells them the moment it is set.

    Any ``asyncio.Event`` works as ``abort_signal``, but an invocation must then read it at
    each of its steps (a property and a method call per event). Attached to this one, an
    invocation is not even armed until :meth:`set` is called: its steps read one slot, as
    for an invocation nobody can abort. ``/run_sse`` gives one to every turn.
    """

    def __init__(self) -> None:
        super().__init__()
        self._listeners: list[AbortState] = []

    def arm_when_set(self, state: AbortState) -> None:
        """Arm ``state`` when this event is set (it is not set yet)."""
        self._listeners.append(state)

    def set(self) -> None:
        """Set the event, and arm the invocations attached to it."""
        super().set()
        listeners, self._listeners = self._listeners, []
        for state in listeners:
            state.armed = True


class AbortState:
    """One invocation's abort request, shared by every agent's copy of its context.

    ``signal`` is the caller's ``asyncio.Event`` (None until one is attached or awaited: an
    invocation nobody can abort costs no event). ``sealed`` records that the sealing
    events were committed, so an invocation is sealed once however it unwinds. ``armed``
    says whether it can be set at all (a signal was attached or an abort asked): the
    checks made per event and per model step read ``armed and is_set``, one slot read for
    the invocation nobody can abort instead of a property call.
    """

    __slots__ = ("aborted", "armed", "loop", "sealed", "signal")

    def __init__(self) -> None:
        self.aborted = False
        self.armed = False
        self.sealed = False
        self.signal: asyncio.Event | None = None
        self.loop: asyncio.AbstractEventLoop | None = None

    @property
    def is_set(self) -> bool:
        """Whether the invocation was asked to abort."""
        if self.aborted:
            return True
        signal = self.signal
        return signal is not None and signal.is_set()

    def attach(self, signal: asyncio.Event) -> None:
        """Take the caller's ``signal`` (before the invocation starts)."""
        self.signal = signal
        if isinstance(signal, AbortSignal) and not signal.is_set():
            signal.arm_when_set(self)
        else:
            self.armed = True
        try:
            self.loop = asyncio.get_running_loop()
        except RuntimeError:
            self.loop = None

    def wait_signal(self) -> asyncio.Event:
        """The event an inner invocation (an ``AgentTool``'s) is aborted with."""
        if self.signal is None:
            self.attach(AbortSignal())
        assert self.signal is not None
        if self.aborted:
            self.signal.set()
        return self.signal

    def abort(self) -> None:
        """Ask the invocation to abort; safe from any thread."""
        self.aborted = True
        self.armed = True
        signal = self.signal
        if signal is None or signal.is_set():
            return
        loop = self.loop
        try:
            running = asyncio.get_running_loop()
        except RuntimeError:
            running = None
        if loop is None or running is loop or not loop.is_running():
            signal.set()
        else:  # another thread: asyncio.Event is not thread-safe
            loop.call_soon_threadsafe(signal.set)


def abort_events(
    events: Sequence[Event], *, invocation_id: str, root_agent: str, branch: str | None
) -> list[Event]:
    """The events that seal the aborted invocation ``invocation_id`` of ``events``.

    One event per agent (and branch) with function calls left unanswered, holding an error
    response to each, authored like the calls so the agent's own view pairs them; or, when
    no call is pending, one content-less event by ``root_agent``. Calls a long-running tool
    or a confirmation left waiting are sealed too: the invocation that would take their
    answer is gone.
    """
    own = [event for event in events if event.invocation_id == invocation_id]
    answered = {
        response.id for event in own for response in event.get_function_responses() if response.id
    }
    pending: dict[tuple[str, str | None], list[types.FunctionCall]] = {}
    for event in own:
        for call in event.get_function_calls():
            if call.id and call.id not in answered:
                pending.setdefault((event.author, event.branch or branch), []).append(call)
    if not pending:
        return [
            Event(
                invocation_id=invocation_id,
                author=root_agent,
                branch=branch,
                error_code=INVOCATION_ABORTED,
                error_message=ABORT_MESSAGE,
            )
        ]
    return [
        Event(
            invocation_id=invocation_id,
            author=author,
            branch=call_branch,
            content=types.Content(
                role="user",
                parts=[
                    types.Part(
                        function_response=types.FunctionResponse(
                            id=call.id, name=call.name, response={"error": ABORT_MESSAGE}
                        )
                    )
                    for call in calls
                ],
            ),
            error_code=INVOCATION_ABORTED,
            error_message=ABORT_MESSAGE,
        )
        for (author, call_branch), calls in pending.items()
    ]


async def seal_aborted(
    state: AbortState,
    session_service: BaseSessionService,
    session: Session,
    *,
    invocation_id: str,
    root_agent: str,
    branch: str | None,
) -> list[Event]:
    """Commit the events that seal an aborted invocation (once); the events committed."""
    if state.sealed:
        return []
    state.sealed = True
    sealing = abort_events(
        session.events, invocation_id=invocation_id, root_agent=root_agent, branch=branch
    )
    for event in sealing:
        await session_service.append_event(session, event)
    return sealing
