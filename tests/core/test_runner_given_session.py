"""``Runner.run_async(session=...)``: an invocation on the session its caller just read.

The protocol adapters (AG-UI, the OpenAI endpoints, the MCP server) read the session to map
their request (the open calls, the state to diff, whether it exists), then hand it to the
Runner so that it is not read a second time per turn.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator
from typing import Any

import pytest

from eventide import (
    App,
    BaseAgent,
    Event,
    InMemorySessionService,
    InvocationContext,
    ResumabilityConfig,
    Runner,
    types,
)
from eventide.errors import UsageError
from eventide.sessions.session import Session


class _Echo(BaseAgent):
    """Answers with the number of events its context's session holds."""

    async def _run_async_impl(self, ctx: InvocationContext) -> AsyncGenerator[Event, None]:
        yield Event(
            author=self.name,
            content=types.Content(
                role="model", parts=[types.Part(text=str(len(ctx.session.events)))]
            ),
        )


class _CountingSessions(InMemorySessionService):
    """Counts the reads of a session."""

    def __init__(self) -> None:
        super().__init__()
        self.reads = 0

    async def get_session(self, **kwargs: Any) -> Session | None:
        self.reads += 1
        return await super().get_session(**kwargs)


def _runner(sessions: _CountingSessions, *, resumable: bool) -> Runner:
    app = App(
        name="app",
        root_agent=_Echo(name="echo"),
        resumability_config=ResumabilityConfig(is_resumable=resumable),
    )
    return Runner(app=app, session_service=sessions)


@pytest.mark.parametrize("resumable", [False, True])
async def test_given_session_is_run_on_without_a_second_read(resumable: bool) -> None:
    """The invocation runs on the session handed in: no read of the service, its events
    appended to that object and committed to the service as usual."""
    sessions = _CountingSessions()
    runner = _runner(sessions, resumable=resumable)
    await sessions.create_session(app_name="app", user_id="u", session_id="s")
    session = await sessions.get_session(app_name="app", user_id="u", session_id="s")
    assert session is not None
    sessions.reads = 0
    events = [
        e
        async for e in runner.run_async(
            user_id="u", session_id="s", new_message="hi", session=session
        )
    ]
    assert sessions.reads == 0
    assert events[0].text == "1"  # the agent saw the user's message on it
    # (a resumable app's invocation ends with its marker event)
    assert [e.id for e in session.events[1:]] == [e.id for e in events]
    stored = await sessions.get_session(app_name="app", user_id="u", session_id="s")
    assert stored is not None
    assert [e.id for e in stored.events] == [e.id for e in session.events]


async def test_without_a_session_the_runner_reads_it() -> None:
    """Without ``session`` the Runner reads the session itself, as before (one read)."""
    sessions = _CountingSessions()
    runner = _runner(sessions, resumable=False)
    await sessions.create_session(app_name="app", user_id="u", session_id="s")
    [e async for e in runner.run_async(user_id="u", session_id="s", new_message="hi")]
    assert sessions.reads == 1


@pytest.mark.parametrize(("user_id", "session_id"), [("someone-else", "s"), ("u", "other-session")])
async def test_a_session_that_is_not_the_one_named_is_refused(
    user_id: str, session_id: str
) -> None:
    """Bad input: a session whose user or id differs from the call's is a UsageError naming
    both, and nothing is committed."""
    sessions = _CountingSessions()
    runner = _runner(sessions, resumable=False)
    session = await sessions.create_session(app_name="app", user_id="u", session_id="s")
    with pytest.raises(UsageError, match="run_async\\(session=...\\)") as info:
        [
            e
            async for e in runner.run_async(
                user_id=user_id, session_id=session_id, new_message="hi", session=session
            )
        ]
    assert repr(("app", "u", "s")) in str(info.value)
    stored = await sessions.get_session(app_name="app", user_id="u", session_id="s")
    assert stored is not None
    assert stored.events == []
