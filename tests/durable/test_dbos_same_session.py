"""Issue 31 (the DBOS same-session fault): an invocation whose worker died, recovered after a
later invocation ran in the same session, never reports success without finishing, and every
follower sees how it ended. Real worker processes (``tests/durable/dbos_worker.py``), real
SIGKILLs, a real private database on the shared PostgreSQL server."""

from __future__ import annotations

import asyncio
import contextlib
import json
import signal
import time
from collections.abc import AsyncIterator, Awaitable
from pathlib import Path
from typing import Any, TypeVar

import httpx
import pytest

from eventide import Runner
from eventide.durable.plan import latest_invocation
from eventide.errors import ResumeError
from eventide.events import Event
from eventide.runtime.markers import ENDED, FINISHED, invocation_mark, invocation_status
from eventide.sessions import SqlSessionService
from tests.durable.dbos_worker import relay_app
from tests.durable.durable_app import Probe
from tests.durable.test_dbos_workers import Workers

pytest.importorskip("dbos")
from eventide.durable.dbos_workers import InvocationQueue  # noqa: E402

pytestmark = pytest.mark.slow

T = TypeVar("T")
# The error code of an invocation a worker recovered but could not continue.
INTERRUPTED = "INVOCATION_INTERRUPTED"


async def _within(seconds: float, awaitable: Awaitable[T], what: str) -> T:
    """``awaitable``'s result; a clear failure (not a hang) when it takes longer."""
    try:
        return await asyncio.wait_for(awaitable, seconds)
    except TimeoutError:
        raise AssertionError(f"{what} did not happen within {seconds} s") from None


async def _until(condition: Any, what: str, within: float = 60.0) -> None:
    deadline = time.monotonic() + within
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"{what} did not happen within {within} s")
        await asyncio.sleep(0.02)


async def _settles(queue: InvocationQueue, invocation_id: str, status: str) -> None:
    """Wait for the workflow's DBOS status to become ``status`` (a follower returns when the
    last event is committed, a moment before the workflow records its end)."""
    await _until(lambda: queue.status(invocation_id) == status, f"status {status}")


class Relay:
    """The ``relay`` app on worker processes whose recovery of dead workers' invocations
    waits for the test's go-ahead; a client queue and a session."""

    def __init__(self, database: str, tmp_path: Path) -> None:
        self.gates = tmp_path / "gates"
        self.gates.mkdir()
        self.recovery = tmp_path / "recovery-allowed"
        env = {"DURABLE_GATES": str(self.gates), "DURABLE_RECOVERY_GATE": str(self.recovery)}
        self.workers = Workers(database, tmp_path, env=env)
        self.sessions = SqlSessionService(database)
        self.queue = InvocationQueue(database)
        self.session_id = ""

    def hold(self, text: str) -> None:
        """The next ``work(text)`` stays running until :meth:`release`."""
        (self.gates / f"hold-{text}").touch()

    def release(self, text: str) -> None:
        (self.gates / f"hold-{text}").unlink()

    async def kill_where_held(self, text: str) -> None:
        """SIGKILL the worker process that runs ``work(text)``, once it runs it."""
        at = self.gates / f"at-{text}"
        await _until(at.exists, f"work({text!r}) starting on a worker")
        pid = at.read_text()
        name = next(n for n, p in self.workers.processes.items() if str(p.pid) == pid)
        process = self.workers.processes[name]
        process.send_signal(signal.SIGKILL)
        await asyncio.to_thread(process.communicate, timeout=30)
        assert process.returncode == -signal.SIGKILL

    async def wait_running(self, text: str) -> None:
        await _until((self.gates / f"at-{text}").exists, f"work({text!r}) starting on a worker")

    def allow_recovery(self) -> None:
        self.recovery.touch()

    def enqueue(self, text: str, invocation_id: str | None = None) -> str:
        return self.queue.enqueue(
            app_name="relay",
            user_id="u",
            session_id=self.session_id,
            new_message=text,
            invocation_id=invocation_id,
        )

    async def follow(self, invocation_id: str) -> list[Event]:
        """Every event ``InvocationQueue.events`` yields for the invocation, to its end."""
        events = self.queue.events(
            self.sessions,
            app_name="relay",
            user_id="u",
            session_id=self.session_id,
            invocation_id=invocation_id,
        )
        return [event async for event in events]

    async def log(self) -> list[Event]:
        session = await self.sessions.get_session(
            app_name="relay", user_id="u", session_id=self.session_id
        )
        assert session is not None
        return session.events

    def work_lines(self, text: str) -> list[str]:
        return [line for line in self.workers.ledger_lines() if line.endswith(f" {text}")]

    async def close(self) -> None:
        self.workers.stop()
        self.queue.close()
        await self.sessions.close()


@contextlib.asynccontextmanager
async def _relay(database: str, tmp_path: Path) -> AsyncIterator[Relay]:
    relay = Relay(database, tmp_path)
    try:
        relay.session_id = (await relay.sessions.create_session(app_name="relay", user_id="u")).id
        yield relay
    finally:
        await relay.close()


def _interrupted(events: list[Event], invocation_id: str) -> Event:
    """The invocation's last event, checked to be the error event that ends it."""
    last = events[-1]
    assert last.invocation_id == invocation_id
    assert last.error_code == INTERRUPTED, last
    assert invocation_mark(last) == ENDED
    assert last.content is None  # never shown to a model as part of the conversation
    return last


async def test_an_invocation_recovered_after_a_later_one_finished_ends_with_an_error_event(
    database: str,
    tmp_path: Path,
) -> None:
    """Issue 31 (the DBOS fault, as reported): invocation A's worker is SIGKILLed while A's
    first tool runs; B is enqueued in the same session and finishes; then A is recovered. A
    does not continue after B (its answer would follow B's, and B answered without it): it
    ends with an error event (INVOCATION_INTERRUPTED, naming B and saying what to do, plus the
    invocation's end marker) that both followers receive: ``InvocationQueue.events()`` returns
    and ``/run_sse`` (``--workers dbos``) ends its stream with it. A's DBOS workflow is
    ERROR, not SUCCESS; B stays the session's latest, finished invocation; A's tool did not
    run again; ``resume_async(A)`` and enqueueing A again change nothing."""
    from eventide.apps.services import build_services
    from eventide.server.api_server import create_app

    async with _relay(database, tmp_path) as relay:
        services = build_services(session_db=database, artifact_root="memory:")
        api = create_app(
            apps={"relay": relay_app(Probe(tmp_path / "server-ledger"), None)},
            services=services,
            invocation_queue=relay.queue,
        )
        transport = httpx.ASGITransport(app=api)
        client = httpx.AsyncClient(transport=transport, base_url="http://localhost")
        body = {
            "appName": "relay",
            "userId": "u",
            "sessionId": relay.session_id,
            "newMessage": {"role": "user", "parts": [{"text": "alpha"}]},
        }

        async def run_sse() -> list[dict[str, Any]]:
            async with client.stream("POST", "/run_sse", json=body, timeout=120) as stream:
                return [
                    json.loads(line[len("data:") :])
                    async for line in stream.aiter_lines()
                    if line.startswith("data:")
                ]

        sse: asyncio.Task[list[dict[str, Any]]] | None = None
        follower: asyncio.Task[list[Event]] | None = None
        try:
            relay.hold("alpha")
            relay.workers.start("w1", "w2")
            sse = asyncio.create_task(run_sse())
            await relay.kill_where_held("alpha")
            alpha = (await relay.log())[0].invocation_id
            follower = asyncio.create_task(relay.follow(alpha))

            beta = relay.enqueue("beta")
            beta_events = await _within(60, relay.follow(beta), "B finishing")
            assert [e.text for e in beta_events if e.text] == ["beta", "did beta"]
            assert invocation_mark(beta_events[-1]) == FINISHED

            relay.allow_recovery()
            followed = await _within(60, follower, "InvocationQueue.events() for A returning")
            frames = await _within(30, sse, "the /run_sse stream of A ending")
        finally:
            for task in (sse, follower):
                if task is not None:
                    task.cancel()
            await client.aclose()
            await services.close()

        error = _interrupted(followed, alpha)
        assert beta in (error.error_message or "")
        assert "send" in (error.error_message or "").lower()  # says what to do
        assert [e.id for e in followed] == [
            e.id for e in await relay.log() if e.invocation_id == alpha
        ]
        assert frames[-1]["errorCode"] == INTERRUPTED
        assert frames[-1]["invocationId"] == alpha
        assert [f["id"] for f in frames] == [e.id for e in followed if e.author != "user"]
        await _settles(relay.queue, alpha, "ERROR")

        log = await relay.log()
        session = await relay.sessions.get_session(
            app_name="relay", user_id="u", session_id=relay.session_id
        )
        assert session is not None
        assert latest_invocation(session) == beta  # the error event is not a turn
        assert invocation_status([e for e in log if e.invocation_id == beta]) == FINISHED
        assert [line.split()[0] for line in relay.work_lines("alpha")] == ["start"]

        runner = Runner(
            app=relay_app(Probe(tmp_path / "local-ledger"), None), session_service=relay.sessions
        )
        with pytest.raises(ResumeError):
            async for _ in runner.resume_async(
                user_id="u", session_id=relay.session_id, invocation_id=alpha
            ):
                pass
        assert relay.enqueue("alpha", invocation_id=alpha) == alpha
        again = await _within(30, relay.follow(alpha), "following A again")
        assert [e.id for e in again] == [e.id for e in followed]
        await _settles(relay.queue, alpha, "ERROR")
        assert len(await relay.log()) == len(log)
        assert [line.split()[0] for line in relay.work_lines("alpha")] == ["start"]


async def test_an_invocation_recovered_while_a_later_one_runs_ends_and_the_later_one_finishes(
    database: str, tmp_path: Path
) -> None:
    """Issue 31 (neighbouring cases: A recovered while B still runs; A enqueued twice). A is
    enqueued twice with one id (it runs once); its worker is SIGKILLed inside A's tool; B
    starts in the same session and is held inside its own tool; A is recovered meanwhile:
    it ends with the interruption event (naming B) and its workflow is ERROR, while B is
    still running. B then finishes as if nothing happened: the interruption, committed in
    the middle of B's events, is not a turn (B stays the latest invocation) and not part of
    B's conversation (B's answer is right, its tool ran once)."""
    async with _relay(database, tmp_path) as relay:
        relay.hold("alpha")
        relay.hold("beta")
        relay.workers.start("w1", "w2")
        alpha = relay.enqueue("alpha")
        assert relay.enqueue("alpha", invocation_id=alpha) == alpha
        await relay.kill_where_held("alpha")

        beta = relay.enqueue("beta")
        beta_follower = asyncio.create_task(relay.follow(beta))
        try:
            await relay.wait_running("beta")
            relay.allow_recovery()
            followed = await _within(60, relay.follow(alpha), "A's follower returning")
            assert not beta_follower.done()  # B is still running
            error = _interrupted(followed, alpha)
            assert beta in (error.error_message or "")
            await _settles(relay.queue, alpha, "ERROR")
            assert relay.queue.status(beta) == "PENDING"

            relay.release("beta")
            beta_events = await _within(60, beta_follower, "B finishing")
        finally:
            beta_follower.cancel()
        assert [e.text for e in beta_events if e.text] == ["beta", "did beta"]
        assert invocation_mark(beta_events[-1]) == FINISHED
        await _settles(relay.queue, beta, "SUCCESS")
        log = await relay.log()
        positions = [i for i, e in enumerate(log) if e.invocation_id == beta]
        assert positions[0] < log.index(error) < positions[-1]  # committed in the middle of B
        session = await relay.sessions.get_session(
            app_name="relay", user_id="u", session_id=relay.session_id
        )
        assert session is not None
        assert latest_invocation(session) == beta
        assert [line.split()[0] for line in relay.work_lines("alpha")] == ["start"]
        assert [line.split()[0] for line in relay.work_lines("beta")] == ["start", "end"]


async def test_answers_to_a_paused_invocation_are_followed_and_never_swallowed(
    database: str, tmp_path: Path
) -> None:
    """Issue 31 (neighbouring case: A paused for the user, then B started). On the workers,
    invocation A ("go") pauses for an approval; the approval, enqueued as C, is committed in
    A and continues it (as in process): C's follower receives A's events from the answer to
    the next pause. The confirmation, enqueued as D, continues A too, but D's worker is
    SIGKILLed inside the refund; B ("go") runs in the session and pauses; then D is
    recovered: A does not continue after B, D ends with A's error event, D's workflow is
    ERROR, and B stays the session's latest invocation, still paused for its approval."""
    from tests.durable.paused_app import answer_for

    workers = Workers(
        database,
        tmp_path,
        kill_at="refund_running",
        env={"DURABLE_RECOVERY_GATE": str(tmp_path / "recovery-allowed")},
    )
    sessions = SqlSessionService(database)
    queue = InvocationQueue(database)
    session_id = (await sessions.create_session(app_name="paused_app", user_id="u")).id

    def enqueue(message: Any) -> str:
        return queue.enqueue(
            app_name="paused_app", user_id="u", session_id=session_id, new_message=message
        )

    async def follow(invocation_id: str, what: str) -> list[Event]:
        events = queue.events(
            sessions,
            app_name="paused_app",
            user_id="u",
            session_id=session_id,
            invocation_id=invocation_id,
        )
        return await _within(60, _collect(events), what)

    async def log() -> list[Event]:
        session = await sessions.get_session(
            app_name="paused_app", user_id="u", session_id=session_id
        )
        assert session is not None
        return session.events

    try:
        workers.start("w1", "w2")
        go = enqueue("go")
        paused = await follow(go, "A pausing for the approval")
        assert invocation_mark(paused[-1]) == ENDED

        approval = enqueue(answer_for("approve", await log()))
        answered = await follow(approval, "C's follower reaching A's next pause")
        assert {e.invocation_id for e in answered} == {go}  # committed in A, as in process
        assert answered[0].author == "user" and answered[0].get_function_responses()
        assert invocation_mark(answered[-1]) == ENDED  # paused for the confirmation
        await _settles(queue, approval, "SUCCESS")

        confirmation = enqueue(answer_for("confirm", await log()))
        follower = asyncio.create_task(follow(confirmation, "D's follower returning"))
        await _until(workers.signal.exists, "the refund starting on a worker")
        _, pid = workers.signal.read_text().split()
        name = next(n for n, p in workers.processes.items() if str(p.pid) == pid)
        workers.processes[name].send_signal(signal.SIGKILL)
        await asyncio.to_thread(workers.processes[name].communicate, timeout=30)

        later = enqueue("go")
        assert invocation_mark((await follow(later, "B pausing"))[-1]) == ENDED

        (tmp_path / "recovery-allowed").touch()
        confirmed = await follower
        error = _interrupted(confirmed, go)
        assert later in (error.error_message or "")
        await _settles(queue, confirmation, "ERROR")
        session = await sessions.get_session(
            app_name="paused_app", user_id="u", session_id=session_id
        )
        assert session is not None
        assert latest_invocation(session) == later
        assert invocation_status([e for e in session.events if e.invocation_id == later]) == ENDED
    finally:
        workers.stop()
        queue.close()
        await sessions.close()


async def _collect(events: AsyncIterator[Event]) -> list[Event]:
    return [event async for event in events]
