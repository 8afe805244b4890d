"""Paused invocations (long-running tools, confirmations, credentials) in a resumable app:
the user's answer continues the paused invocation from its log (tests/durable/
test_kill_paused.py kills real processes around the pauses)."""

from __future__ import annotations

import asyncio
import json
import re
import subprocess
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from eventide import (
    App,
    Event,
    InMemorySessionService,
    LlmAgent,
    LongRunningFunctionTool,
    ParallelAgent,
    ResumabilityConfig,
    Runner,
    SequentialAgent,
    ToolContext,
    types,
)
from eventide.errors import ResumeError, ToolError
from eventide.events import EventActions, EventCompaction
from eventide.plugins.base_plugin import BasePlugin
from eventide.runtime.markers import ANSWERED, ENDED, WAITING_KEY, invocation_mark
from eventide.testing import FunctionModel, ScriptedModel, text_response, tool_call_response
from tests.adk_env import adk_python
from tests.durable import paused_app
from tests.durable.durable_app import Crash, Probe, normalized


async def _send(
    runner: Runner, session_id: str, message: types.Content | str | None
) -> list[Event]:
    return [
        e async for e in runner.run_async(user_id="u", session_id=session_id, new_message=message)
    ]


async def _resume(runner: Runner, session_id: str, **kwargs: Any) -> list[Event]:
    return [e async for e in runner.resume_async(user_id="u", session_id=session_id, **kwargs)]


async def _events(runner: Runner, session_id: str) -> list[Event]:
    session = await runner.session_service.get_session(
        app_name=runner.app_name, user_id="u", session_id=session_id
    )
    assert session is not None
    return session.events


def _shape(events: list[Event]) -> str:
    """``normalized`` events with generated call ids (in a confirmation's arguments) masked."""
    return re.sub(r"call-[0-9a-f]+-[0-9a-z]+", "call-*", repr(normalized(events)))


def _starts(lines: list[str]) -> Counter[str]:
    return Counter(line.split()[2] for line in lines if line.startswith("start "))


def _answer(call: types.FunctionCall, response: dict[str, Any]) -> types.Content:
    return types.Content(
        role="user",
        parts=[
            types.Part(
                function_response=types.FunctionResponse(
                    id=call.id, name=call.name, response=response
                )
            )
        ],
    )


async def _whole_turn(runner: Runner, session_id: str) -> list[list[Event]]:
    """Send the turn's three messages; the events each yields."""
    yielded = [await _send(runner, session_id, "go")]
    for step in ("approve", "confirm"):
        message = paused_app.answer_for(step, await _events(runner, session_id))
        yielded.append(await _send(runner, session_id, message))
    return yielded


async def test_answers_continue_the_paused_invocation_and_the_steps_after_it(
    tmp_path: Path,
) -> None:
    """Issue 17 (paused invocations use the same machinery): a long-running tool's result
    and then a confirmation each continue the invocation that paused for them (one
    invocation id for the whole turn, the user's answers included), the sequential step
    after the paused agent runs in it, and each tool runs once (google-adk 2.13.0 with
    resumability does the same: the answer resumes the paused invocation)."""
    probe = Probe(tmp_path / "ledger")
    runner = Runner(app=paused_app.build_app(probe), session_service=InMemorySessionService())
    session = await runner.session_service.create_session(app_name="paused_app", user_id="u")
    go, approved, confirmed = await _whole_turn(runner, session.id)

    assert invocation_mark(go[-1]) == ENDED
    assert go[-2].custom_metadata == {WAITING_KEY: [go[-3].get_function_calls()[0].id]}
    assert [e.text for e in approved if e.text] == []
    assert invocation_mark(approved[-1]) == ENDED
    assert [e.text for e in confirmed if e.text] == ["refunded 40", "closed"]
    assert confirmed[-1].author == "desk" and confirmed[-1].actions.end_of_agent

    events = await _events(runner, session.id)
    assert len({e.invocation_id for e in events}) == 1
    answers = [e for e in events if e.author == "user" and e.get_function_responses()]
    assert [invocation_mark(e) for e in answers] == [ANSWERED, ANSWERED]
    stored = await runner.session_service.get_session(
        app_name="paused_app", user_id="u", session_id=session.id
    )
    assert stored is not None
    assert stored.state == {"ticket": "open:40", "refunded": 40, "notified": True}
    starts = _starts(probe.ledger_lines())
    assert sorted(starts.values()) == [1, 1, 1]
    assert [line for line in probe.ledger_lines() if line.startswith("model")] == [
        "model clerk 1",
        "model clerk 2",
        "model clerk 3",
        "model closer 1",
        "model closer 2",
    ]


async def test_a_paused_invocation_cannot_be_resumed_without_the_answer(tmp_path: Path) -> None:
    """Issue 17 (bad input): resume_async on an invocation paused for the user raises
    ResumeError saying to answer the paused call, and commits nothing."""
    runner = Runner(
        app=paused_app.build_app(Probe(tmp_path / "ledger")),
        session_service=InMemorySessionService(),
    )
    session = await runner.session_service.create_session(app_name="paused_app", user_id="u")
    await _send(runner, session.id, "go")
    before = len(await _events(runner, session.id))
    with pytest.raises(ResumeError, match="Answer the paused call"):
        await _resume(runner, session.id)
    assert len(await _events(runner, session.id)) == before


@pytest.mark.parametrize(
    "point", sorted(paused_app.IN_MODEL_CALL | paused_app.IN_TOOL | paused_app.AFTER_COMMIT)
)
async def test_a_failure_after_an_answer_resumes_like_an_uninterrupted_turn(
    tmp_path: Path, point: str
) -> None:
    """Issue 17: a failure at each point of the paused turn, then resume_async (and the
    remaining answers): the events and state equal an uninterrupted turn's, each tool ran
    once per call id except the one interrupted while running, and the long-running tool,
    which returned nothing, never ran again."""
    baseline_probe = Probe(tmp_path / "baseline")
    baseline = Runner(
        app=paused_app.build_app(baseline_probe), session_service=InMemorySessionService()
    )
    base_session = await baseline.session_service.create_session(app_name="paused_app", user_id="u")
    await _whole_turn(baseline, base_session.id)
    expected = await _events(baseline, base_session.id)

    probe = Probe(tmp_path / "ledger")
    probe.raise_at = point
    service = InMemorySessionService()
    runner = Runner(app=paused_app.build_app(probe), session_service=service)
    session = await service.create_session(app_name="paused_app", user_id="u")
    failed = False
    for step in paused_app.STEPS:
        events = await _events(runner, session.id)
        message = "go" if step == "go" else paused_app.answer_for(step, events)
        try:
            await _send(runner, session.id, message)
        except (Crash, ToolError):
            failed = True
            resumer = Runner(app=paused_app.build_app(Probe(probe.ledger)), session_service=service)
            await _resume(resumer, session.id)
    assert failed and probe.raise_at is None

    events = await _events(runner, session.id)
    assert _shape(events) == _shape(expected)
    assert len({e.invocation_id for e in events}) == 1
    stored = await service.get_session(app_name="paused_app", user_id="u", session_id=session.id)
    assert stored is not None
    assert stored.state == {"ticket": "open:40", "refunded": 40, "notified": True}
    starts = _starts(probe.ledger_lines())
    twice = {call_id for call_id, n in starts.items() if n == 2}
    assert len(starts) == 3 and all(n in (1, 2) for n in starts.values())
    assert len(twice) == (1 if point in paused_app.IN_TOOL else 0)
    models = [line for line in probe.ledger_lines() if line.startswith("model")]
    assert len(models) == 5 + (1 if point in paused_app.IN_MODEL_CALL else 0)


async def test_a_long_running_call_that_returned_nothing_is_not_run_again(tmp_path: Path) -> None:
    """Issue 17 (a long-running tool that returns None commits no function response): one
    parallel branch's long-running call returns nothing and waits; the other branch fails.
    Resuming runs the failed branch's tool again but not the long-running one, and the
    invocation pauses again for its answer, which then completes it."""
    ran: list[str] = []
    approval_done = asyncio.Event()

    def request_approval(tool_context: ToolContext) -> None:
        """Ask for an approval."""
        ran.append(f"approval {tool_context.function_call_id}")
        approval_done.set()

    async def lookup(tool_context: ToolContext) -> dict[str, str]:
        """Look something up."""
        ran.append(f"lookup {tool_context.function_call_id}")
        if len([r for r in ran if r.startswith("lookup")]) == 1:
            await approval_done.wait()
            await asyncio.sleep(0.05)  # the other branch's waiting event is committed
            raise ConnectionError("lookup service down")
        return {"found": "yes"}

    def model(name: str, tool: str) -> FunctionModel:
        def answer(request: Any) -> Any:
            last = request.contents[-1].parts[-1]
            if last.function_response is not None:
                return text_response(f"{name}: {last.function_response.response}")
            return tool_call_response((tool, {}))

        return FunctionModel(function=answer)

    app = App(
        name="app",
        root_agent=ParallelAgent(
            name="fan",
            sub_agents=[
                LlmAgent(
                    name="asker",
                    model=model("asker", "request_approval"),
                    tools=[LongRunningFunctionTool(request_approval)],
                ),
                LlmAgent(name="looker", model=model("looker", "lookup"), tools=[lookup]),
            ],
        ),
        resumability_config=ResumabilityConfig(is_resumable=True),
    )
    service = InMemorySessionService()
    runner = Runner(app=app, session_service=service)
    session = await service.create_session(app_name="app", user_id="u")
    with pytest.raises(ToolError, match="lookup service down"):
        await _send(runner, session.id, "go")
    resumed = await _resume(runner, session.id)
    assert invocation_mark(resumed[-1]) == ENDED  # waiting for the approval again
    assert [r.split()[0] for r in ran] == ["approval", "lookup", "lookup"]
    events = await _events(runner, session.id)
    call = next(c for e in events for c in e.get_function_calls() if c.name == "request_approval")
    finished = await _send(runner, session.id, _answer(call, {"approved": True}))
    assert "asker: {'approved': True}" in [e.text for e in finished]
    assert [r.split()[0] for r in ran] == ["approval", "lookup", "lookup"]
    events = await _events(runner, session.id)
    assert len({e.invocation_id for e in events}) == 1
    # The pause stopped the other branch after its tool; it answered once, in the end.
    assert [e.text for e in events if e.author == "looker" and e.text] == [
        "looker: {'found': 'yes'}"
    ]
    assert invocation_mark(finished[-1]) == "finished"


async def test_a_long_running_call_with_state_is_not_run_again_after_its_commit() -> None:
    """Issue 17 (a long-running tool that returns None): the tool set state and returned
    nothing; the process fails right after that event is committed, before the pause is.
    Resuming does not run the tool again (its state change would be applied twice)."""
    ran: list[str | None] = []

    def open_ticket(tool_context: ToolContext) -> None:
        """Open a ticket."""
        ran.append(tool_context.function_call_id)
        tool_context.state["tickets"] = int(tool_context.state.get("tickets", 0)) + 1

    model = ScriptedModel(
        responses=[tool_call_response(("open_ticket", {})), text_response("ticket handled")]
    )
    agent = LlmAgent(name="a", model=model, tools=[LongRunningFunctionTool(open_ticket)])
    app = App(
        name="app", root_agent=agent, resumability_config=ResumabilityConfig(is_resumable=True)
    )
    service = InMemorySessionService()
    session = await service.create_session(app_name="app", user_id="u")

    class FailAfterTicket(BasePlugin):
        async def on_event_callback(self, *, invocation_context: Any, event: Event) -> None:
            if event.actions.state_delta.get("tickets"):
                raise Crash("after the ticket's event was committed")

    crashing = Runner(app=app, session_service=service, plugins=[FailAfterTicket("fail")])
    with pytest.raises(Crash):
        await _send(crashing, session.id, "go")
    runner = Runner(app=app, session_service=service)
    resumed = await _resume(runner, session.id)
    assert invocation_mark(resumed[-1]) == ENDED
    assert len(ran) == 1
    call = next(
        c for e in await _events(runner, session.id) for c in e.get_function_calls() if c.id
    )
    done = await _send(runner, session.id, _answer(call, {"status": "closed"}))
    assert [e.text for e in done if e.text] == ["ticket handled"]
    stored = await service.get_session(app_name="app", user_id="u", session_id=session.id)
    assert stored is not None and stored.state == {"tickets": 1} and len(ran) == 1


async def test_an_answer_to_an_older_invocation_starts_a_new_one(tmp_path: Path) -> None:
    """Issue 17: only the latest invocation, paused, is continued by an answer; an answer
    to a call of an earlier turn starts a new invocation (as without resumability)."""
    probe = Probe(tmp_path / "ledger")
    runner = Runner(app=paused_app.build_app(probe), session_service=InMemorySessionService())
    session = await runner.session_service.create_session(app_name="paused_app", user_id="u")
    await _send(runner, session.id, "go")
    approval = paused_app.answer_for("approve", await _events(runner, session.id))
    await _send(runner, session.id, "go")  # a new turn: the first one stays paused
    events = await _send(runner, session.id, approval)
    first = (await _events(runner, session.id))[0].invocation_id
    assert events and all(e.invocation_id != first for e in events)


async def test_a_rewound_paused_invocation_is_neither_answered_nor_resumed(
    tmp_path: Path,
) -> None:
    """Issue 17 (resume and rewind): after a rewind takes the session back to before a
    paused invocation, its answer starts a new invocation instead of continuing it, and
    resume_async refuses it as rewound."""
    runner = Runner(
        app=paused_app.build_app(Probe(tmp_path / "ledger")),
        session_service=InMemorySessionService(),
    )
    session = await runner.session_service.create_session(app_name="paused_app", user_id="u")
    await _send(runner, session.id, "go")
    events = await _events(runner, session.id)
    paused_id = events[0].invocation_id
    approval = paused_app.answer_for("approve", events)
    await runner.rewind_async(
        user_id="u", session_id=session.id, rewind_before_invocation_id=paused_id
    )
    with pytest.raises(ResumeError, match="was rewound"):
        await _resume(runner, session.id, invocation_id=paused_id)
    answered = await _send(runner, session.id, approval)
    assert answered and all(e.invocation_id != paused_id for e in answered)


async def test_a_rewound_unfinished_invocation_is_not_resumed() -> None:
    """Issue 17 (resume and rewind): an invocation that failed half way and was then
    rewound is not resumable: resume_async names it rewound, and resume_unfinished runs
    only the new message."""
    model = ScriptedModel(
        responses=[
            text_response("first"),
            tool_call_response(("lookup", {})),
            text_response("after the rewind"),
        ]
    )

    def lookup() -> dict[str, str]:
        raise ConnectionError("down")

    app = App(
        name="app",
        root_agent=LlmAgent(name="a", model=model, tools=[lookup]),
        resumability_config=ResumabilityConfig(is_resumable=True),
    )
    service = InMemorySessionService()
    runner = Runner(app=app, session_service=service)
    session = await service.create_session(app_name="app", user_id="u")
    await _send(runner, session.id, "one")
    with pytest.raises(ToolError):
        await _send(runner, session.id, "two")
    failed_id = (await _events(runner, session.id))[-1].invocation_id
    await runner.rewind_async(
        user_id="u", session_id=session.id, rewind_before_invocation_id=failed_id
    )
    with pytest.raises(ResumeError, match="was rewound"):
        await _resume(runner, session.id, invocation_id=failed_id)
    with pytest.raises(ResumeError, match="finished"):
        await _resume(runner, session.id)
    events = [
        e
        async for e in runner.run_async(
            user_id="u", session_id=session.id, new_message="three", resume_unfinished=True
        )
    ]
    assert [e.text for e in events if e.text] == ["three", "after the rewind"] or [
        e.text for e in events if e.text
    ] == ["after the rewind"]
    assert model.calls == 3


async def test_a_compaction_after_a_pause_does_not_hide_the_paused_invocation(
    tmp_path: Path,
) -> None:
    """Issue 17 (resume and compaction): a compaction event committed after the paused
    invocation (its own invocation id) is not taken for the latest turn: the answer still
    continues the paused invocation, and resume_unfinished still finds a failed one."""
    probe = Probe(tmp_path / "ledger")
    runner = Runner(app=paused_app.build_app(probe), session_service=InMemorySessionService())
    service = runner.session_service
    session = await service.create_session(app_name="paused_app", user_id="u")
    await _send(runner, session.id, "go")
    stored = await service.get_session(app_name="paused_app", user_id="u", session_id=session.id)
    assert stored is not None
    paused_id = stored.events[0].invocation_id
    compaction = Event(
        invocation_id="compaction-1",
        author="user",
        actions=EventActions(
            compaction=EventCompaction(
                start_timestamp=stored.events[0].timestamp,
                end_timestamp=stored.events[-1].timestamp,
                compacted_content=types.Content(role="model", parts=[types.Part(text="sum")]),
            )
        ),
    )
    await service.append_event(stored, compaction)
    approval = paused_app.answer_for("approve", stored.events)
    answered = await _send(runner, session.id, approval)
    assert answered and {e.invocation_id for e in answered} == {paused_id}


async def test_an_answer_to_a_paused_step_in_a_sequence_without_resumability_is_unchanged() -> None:
    """Issue 17 (resumability off keeps the old behaviour): without resumability, the
    answer starts a new invocation in which only the agent that paused continues."""
    ran: list[str] = []

    def approve() -> None:
        """Approve."""
        ran.append("approve")

    def model(name: str) -> FunctionModel:
        def answer(request: Any) -> Any:
            last = request.contents[-1].parts[-1]
            if last.function_response is not None:
                return text_response(f"{name} got it")
            return tool_call_response(("approve", {})) if name == "a" else text_response("b")

        return FunctionModel(function=answer)

    root = SequentialAgent(
        name="seq",
        sub_agents=[
            LlmAgent(name="a", model=model("a"), tools=[LongRunningFunctionTool(approve)]),
            LlmAgent(name="b", model=model("b")),
        ],
    )
    runner = Runner(app_name="app", agent=root, session_service=InMemorySessionService())
    session = await runner.session_service.create_session(app_name="app", user_id="u")
    first = await _send(runner, session.id, "go")
    call = next(c for e in first for c in e.get_function_calls())
    second = await _send(runner, session.id, _answer(call, {"ok": True}))
    assert [e.text for e in second if e.text] == ["a got it"]
    assert {e.invocation_id for e in second}.isdisjoint({e.invocation_id for e in first})


async def test_a_paused_sequence_continues_as_google_adk_continues_it() -> None:
    """Issue 17 (compare with google-adk 2.13.0): the same app (a sequence whose first agent
    pauses on a long-running tool that returns nothing) run on google-adk with resumability
    and on Eventide: the same events with content after the tool's result arrives, in one
    invocation, the tool run once."""
    python = adk_python()
    script = Path(__file__).with_name("adk_pause_trace.py")
    done = await asyncio.to_thread(
        subprocess.run, [str(python), str(script)], capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr
    adk = json.loads(done.stdout.strip().splitlines()[-1])

    ran: list[int] = []

    def approve(x: int) -> None:
        """Ask for an approval."""
        ran.append(x)

    def model(name: str) -> FunctionModel:
        def answer(request: Any) -> Any:
            last = request.contents[-1].parts[-1]
            if last.function_response is not None:
                return text_response(f"{name} got {last.function_response.response}")
            if name == "b":
                return text_response("b done")
            return tool_call_response(("approve", {"x": 1}))

        return FunctionModel(function=answer)

    root = SequentialAgent(
        name="seq",
        sub_agents=[
            LlmAgent(name="a", model=model("a"), tools=[LongRunningFunctionTool(approve)]),
            LlmAgent(name="b", model=model("b")),
        ],
    )
    app = App(
        name="app", root_agent=root, resumability_config=ResumabilityConfig(is_resumable=True)
    )
    runner = Runner(app=app, session_service=InMemorySessionService())
    session = await runner.session_service.create_session(app_name="app", user_id="u")
    first = await _send(runner, session.id, "go")
    call = next(c for e in first for c in e.get_function_calls())
    await _send(runner, session.id, _answer(call, {"ok": True}))
    events = await _events(runner, session.id)
    rows: list[list[str]] = []
    for event in events:
        for part in (event.content.parts or []) if event.content else []:
            if part.text:
                rows.append([event.author, "text", part.text])
            if part.function_call:
                rows.append([event.author, "call", part.function_call.name or ""])
            if part.function_response:
                rows.append([event.author, "response", str(part.function_response.response)])
    ours = {"trace": rows, "invocations": len({e.invocation_id for e in events}), "ran": len(ran)}
    assert ours == adk
    assert adk["invocations"] == 1 and adk["ran"] == 1
