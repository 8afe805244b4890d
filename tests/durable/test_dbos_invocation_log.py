"""Issue 31 (the DBOS same-session fault), in one process: what a DBOS invocation workflow
does when it runs again (``dbos_workers._run_or_resume``, the workflow's body without DBOS
around it) and what its follower (``InvocationQueue.events``) yields, over an in-memory
session log. ``tests/durable/test_dbos_same_session.py`` runs the same cases on real worker
processes killed with SIGKILL."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator
from pathlib import Path
from typing import Any

import pytest

from eventide import App, InMemorySessionService, LlmAgent, ResumabilityConfig, Runner, types
from eventide.durable.dbos_invocation_log import (
    INTERRUPTED,
    WORKFLOW_KEY,
    interruption_of,
    workflow_events,
    workflow_tag,
)
from eventide.durable.plan import latest_invocation
from eventide.errors import InvocationFailedError, InvocationNotFoundError, ResumeError
from eventide.events import Event
from eventide.models.llm_request import LlmRequest
from eventide.models.llm_response import LlmResponse
from eventide.runtime.markers import ENDED, FINISHED, invocation_mark, invocation_status
from eventide.sessions.base_session_service import BaseSessionService
from eventide.sessions.session import Session
from eventide.testing import FunctionModel, text_response, tool_call_response
from tests.durable.durable_app import Probe
from tests.durable.paused_app import answer_for
from tests.durable.paused_app import build_app as build_paused_app

pytest.importorskip("dbos")
from eventide.durable.dbos_workers import InvocationQueue, _run_or_resume  # noqa: E402


class Crash(Exception):
    """The worker dying inside a tool, as an exception the test process survives."""


class Relay:
    """An app whose model calls ``work(text=<the user's text>)`` and answers ``did <text>``;
    ``work`` raises :class:`Crash` once for each text in ``crash``. Every model request is
    kept."""

    def __init__(self) -> None:
        self.crash: set[str] = set()
        self.calls: list[str] = []  # "<call id> <text>" per start of work
        self.requests: list[LlmRequest] = []
        self.sessions = InMemorySessionService()
        self.runner = Runner(app=self._app(), session_service=self.sessions)
        self.session_id = ""

    def _app(self) -> App:
        def answer(request: LlmRequest) -> LlmResponse:
            self.requests.append(request)
            last = request.contents[-1].parts or []
            if last and last[-1].function_response is not None:
                return text_response(f"did {(last[-1].function_response.response or {})['done']}")
            return tool_call_response(("work", {"text": last[-1].text if last else ""}))

        def work(text: str, tool_context: Any) -> dict[str, Any]:
            """Do some work."""
            self.calls.append(f"{tool_context.function_call_id} {text}")
            if text in self.crash:
                self.crash.discard(text)
                raise Crash(text)
            return {"done": text}

        return App(
            name="relay",
            root_agent=LlmAgent(name="relayer", model=FunctionModel(function=answer), tools=[work]),
            resumability_config=ResumabilityConfig(is_resumable=True),
        )

    async def start(self) -> Relay:
        self.session_id = (await self.sessions.create_session(app_name="relay", user_id="u")).id
        return self

    async def workflow(self, workflow_id: str, message: str | dict[str, Any]) -> int:
        """Run the DBOS workflow ``workflow_id`` of ``message`` (again), as a worker does."""
        return await _run_or_resume(
            self.runner, "u", self.session_id, message, workflow_id, None, False
        )

    async def crashed(self, workflow_id: str, text: str) -> None:
        """Run the workflow, its worker dying inside ``work``."""
        self.crash.add(text)
        with pytest.raises(Exception) as caught:
            await self.workflow(workflow_id, text)
        assert isinstance(caught.value, Crash) or isinstance(caught.value.__cause__, Crash)

    async def session(self) -> Session:
        session = await self.sessions.get_session(
            app_name="relay", user_id="u", session_id=self.session_id
        )
        assert session is not None
        return session

    async def of(self, invocation_id: str) -> list[Event]:
        return [e for e in (await self.session()).events if e.invocation_id == invocation_id]


async def test_an_invocation_a_later_one_overtook_ends_with_one_interruption() -> None:
    """Issue 31: workflow A's worker dies inside A's tool; B runs in the session and
    finishes; A's workflow runs again. It commits one event ending A (no content,
    INVOCATION_INTERRUPTED, naming B, saying what to do, marked ended) and fails with
    InvocationFailedError, which DBOS records as ERROR, never SUCCESS. Running it once more
    fails the same way and commits nothing (the worker died after the commit). B stays the
    session's latest invocation, Runner.resume_async(A) refuses, and a later turn's model
    never sees the interruption."""
    relay = await Relay().start()
    await relay.crashed("e-alpha", "alpha")
    assert await relay.workflow("e-beta", "beta") > 0

    with pytest.raises(InvocationFailedError, match="(?s)'e-beta'.*send its message again"):
        await relay.workflow("e-alpha", "alpha")
    alpha = await relay.of("e-alpha")
    ended = alpha[-1]
    assert [e.author for e in alpha] == ["user", "relayer", "relayer"]
    assert ended.error_code == INTERRUPTED and ended.content is None
    assert invocation_mark(ended) == ENDED and interruption_of(alpha) == ended
    assert "'e-alpha' was interrupted" in (ended.error_message or "")

    count = len((await relay.session()).events)
    with pytest.raises(InvocationFailedError) as again:
        await relay.workflow("e-alpha", "alpha")
    assert str(again.value) == ended.error_message
    assert len((await relay.session()).events) == count
    assert [c.split()[1] for c in relay.calls] == ["alpha", "beta"]  # A's tool never re-ran

    session = await relay.session()
    assert latest_invocation(session) == "e-beta"
    with pytest.raises(ResumeError):
        async for _ in relay.runner.resume_async(
            user_id="u", session_id=relay.session_id, invocation_id="e-alpha"
        ):
            pass
    assert await relay.workflow("e-gamma", "gamma") > 0
    seen = [p.text for c in relay.requests[-1].contents for p in c.parts or () if p.text]
    assert not any("interrupted" in text for text in seen)
    assert invocation_status(await relay.of("e-gamma")) == FINISHED


async def test_an_invocation_overtaken_while_the_later_one_runs_does_not_disturb_it() -> None:
    """Issue 31 (A recovered while B still runs): B's worker dies inside B's tool after A's
    interruption was committed in the middle of B's events; B, still the latest
    invocation, resumes from its log and finishes (its tool re-runs with the same call
    id)."""
    relay = await Relay().start()
    await relay.crashed("e-alpha", "alpha")
    await relay.crashed("e-beta", "beta")
    with pytest.raises(InvocationFailedError, match="'e-beta'"):
        await relay.workflow("e-alpha", "alpha")
    assert await relay.workflow("e-beta", "beta") > 0
    beta = await relay.of("e-beta")
    assert [e.text for e in beta if e.text] == ["beta", "did beta"]
    assert invocation_status(beta) == FINISHED
    assert [c for c in relay.calls if c.endswith("beta")] == [relay.calls[1]] * 2


async def test_the_latest_unfinished_invocation_resumes_and_a_finished_one_is_left() -> None:
    """A workflow that runs again continues its invocation when it is still the session's
    latest (the tool that was running runs again with the same call id) and finishes it;
    run once more, a finished invocation's workflow commits nothing and succeeds."""
    relay = await Relay().start()
    await relay.crashed("e-alpha", "alpha")
    assert await relay.workflow("e-alpha", "alpha") > 0
    alpha = await relay.of("e-alpha")
    assert [e.text for e in alpha if e.text] == ["alpha", "did alpha"]
    assert invocation_mark(alpha[-1]) == FINISHED
    assert relay.calls[0] == relay.calls[1]
    assert await relay.workflow("e-alpha", "alpha") == 0
    assert await relay.of("e-alpha") == alpha


async def test_answers_to_a_paused_invocation_are_tagged_with_their_workflow(
    tmp_path: Path,
) -> None:
    """Issue 31 (A paused for the user): an answer's workflow commits in the paused
    invocation, its events tagged with the workflow's id, so the workflow finds them when
    it runs again: paused again, it succeeds without committing; its worker dead inside
    the refund, it resumes the paused invocation (the answer is not committed twice); and
    when a later turn started meanwhile, it ends that invocation with the interruption."""
    probe = Probe(tmp_path / "ledger")
    sessions = InMemorySessionService()
    runner = Runner(app=build_paused_app(probe), session_service=sessions)
    session_id = (await sessions.create_session(app_name="paused_app", user_id="u")).id

    async def log() -> list[Event]:
        session = await sessions.get_session(
            app_name="paused_app", user_id="u", session_id=session_id
        )
        assert session is not None
        return session.events

    async def workflow(workflow_id: str, message: str | types.Content) -> int:
        wire = message if isinstance(message, str) else message.model_dump(exclude_none=True)
        return await _run_or_resume(runner, "u", session_id, wire, workflow_id, None, False)

    await workflow("e-go", "go")
    approval = answer_for("approve", await log())
    await workflow("e-approve", approval)
    answered = workflow_events(await log(), "e-approve")
    assert {e.invocation_id for e in answered} == {"e-go"}
    assert all((e.custom_metadata or {}).get(WORKFLOW_KEY) == "e-approve" for e in answered)
    assert invocation_mark(answered[-1]) == ENDED  # paused for the confirmation
    count = len(await log())
    assert await workflow("e-approve", approval) == 0
    assert len(await log()) == count

    confirmation = answer_for("confirm", await log())
    probe.raise_at = "refund_running"
    with pytest.raises(Exception, match="refund_running"):
        await workflow("e-confirm", confirmation)
    assert await workflow("e-confirm", confirmation) > 0
    confirmed = workflow_events(await log(), "e-confirm")
    assert invocation_mark(confirmed[-1]) == FINISHED
    assert sum(1 for e in confirmed if e.author == "user") == 1

    await workflow("e-again", "go")  # pauses for an approval
    second = answer_for("approve", await log())
    probe.raise_at = "after_approval_committed"
    with pytest.raises(Exception, match="after_approval_committed"):
        await workflow("e-approve-2", second)
    await workflow("e-later", "go")
    with pytest.raises(InvocationFailedError, match="'e-later'"):
        await workflow("e-approve-2", second)
    ended = workflow_events(await log(), "e-approve-2")
    assert ended[-1].invocation_id == "e-again" and ended[-1].error_code == INTERRUPTED


async def test_the_paused_workflow_run_again_leaves_the_invocation_to_its_answer(
    tmp_path: Path,
) -> None:
    """Issue 31 (found by the workflow kill-anywhere test): the worker running invocation A
    dies after A paused, before DBOS recorded A's workflow as done; the answer's workflow
    continues A, and its own worker dies half way. A's workflow, recovered now, finds its
    part of the log ended at the pause and commits nothing (before, it read the answer's
    events as its own and resumed A a second time, beside the answer's workflow, which
    then finished A twice); the answer's workflow, recovered, finishes A once."""
    probe = Probe(tmp_path / "ledger")
    sessions = InMemorySessionService()
    runner = Runner(app=build_paused_app(probe), session_service=sessions)
    session_id = (await sessions.create_session(app_name="paused_app", user_id="u")).id

    async def log() -> list[Event]:
        session = await sessions.get_session(
            app_name="paused_app", user_id="u", session_id=session_id
        )
        assert session is not None
        return session.events

    async def workflow(workflow_id: str, message: str | types.Content) -> int:
        wire = message if isinstance(message, str) else message.model_dump(exclude_none=True)
        return await _run_or_resume(runner, "u", session_id, wire, workflow_id, None, False)

    await workflow("e-go", "go")
    approval = answer_for("approve", await log())
    probe.raise_at = "after_approval_committed"
    with pytest.raises(Exception, match="after_approval_committed"):
        await workflow("e-approve", approval)
    count = len(await log())
    assert await workflow("e-go", "go") == 0
    assert len(await log()) == count
    assert invocation_mark(workflow_events(await log(), "e-go")[-1]) == ENDED
    assert await workflow("e-approve", approval) > 0
    confirmation = answer_for("confirm", await log())
    assert await workflow("e-confirm", confirmation) > 0
    events = await log()
    assert [invocation_mark(e) for e in events].count(FINISHED) == 1
    assert invocation_mark(workflow_events(events, "e-confirm")[-1]) == FINISHED


def test_only_a_message_with_function_responses_is_tagged() -> None:
    """A message without function responses cannot answer a paused invocation: its events
    carry the workflow's own id and need no tag."""
    answer = types.Content(
        role="user",
        parts=[types.Part(function_response=types.FunctionResponse(id="c1", name="f"))],
    )
    assert workflow_tag("e-1", answer) == {WORKFLOW_KEY: "e-1"}
    assert workflow_tag("e-1", "hello") is None
    assert workflow_tag("e-1", types.Content(role="user", parts=[types.Part(text="x")])) is None
    assert workflow_tag("e-1", None) is None


class _KnownStatuses(InvocationQueue):
    """The follower's side of an InvocationQueue with the DBOS statuses given (a fake:
    no DBOS client, no database)."""

    def __init__(self, statuses: dict[str, str]) -> None:
        self.statuses = statuses

    def status(self, invocation_id: str) -> str | None:
        return self.statuses.get(invocation_id)


async def _follow(
    queue: InvocationQueue, sessions: BaseSessionService, session_id: str, invocation_id: str
) -> list[Event]:
    events: AsyncGenerator[Event, None] = queue.events(
        sessions,
        app_name="relay",
        user_id="u",
        session_id=session_id,
        invocation_id=invocation_id,
        poll_interval=0.01,
    )

    async def collect() -> list[Event]:
        return [event async for event in events]

    try:  # a follower that never returns fails the test instead of hanging it
        return await asyncio.wait_for(collect(), 20)
    except TimeoutError:
        raise AssertionError(f"following {invocation_id!r} never returned") from None


async def test_the_follower_ends_with_the_interruption_and_never_waits_forever() -> None:
    """Issue 31 (nothing hangs): following an interrupted invocation yields its events up
    to the interruption and returns; following one whose workflow ended SUCCESS without
    its end marker (what a worker before the fix left) raises InvocationFailedError saying
    so; following an id never enqueued raises InvocationNotFoundError."""
    relay = await Relay().start()
    await relay.crashed("e-alpha", "alpha")
    queue = _KnownStatuses({"e-alpha": "SUCCESS", "e-beta": "SUCCESS"})
    with pytest.raises(InvocationFailedError, match="SUCCESS"):
        await _follow(queue, relay.sessions, relay.session_id, "e-alpha")
    with pytest.raises(InvocationNotFoundError, match="e-nowhere"):
        await _follow(queue, relay.sessions, relay.session_id, "e-nowhere")

    await relay.workflow("e-beta", "beta")
    with pytest.raises(InvocationFailedError):
        await relay.workflow("e-alpha", "alpha")
    queue.statuses["e-alpha"] = "ERROR"
    followed = await _follow(queue, relay.sessions, relay.session_id, "e-alpha")
    assert followed == await relay.of("e-alpha")
    assert followed[-1].error_code == INTERRUPTED
