"""Resuming invocations together with the session-history tools of issue 18: a rewind before
the interrupted turn, and event compaction (a summary, or a failed summary's warning)
committed between turns."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from eventide import (
    App,
    Event,
    InMemorySessionService,
    LlmAgent,
    ResumabilityConfig,
    Runner,
    ToolContext,
    types,
)
from eventide.history.compaction import (
    BaseEventsSummarizer,
    EventsCompactionConfig,
    compact_if_due,
)
from eventide.models.llm_request import LlmRequest
from eventide.models.llm_response import LlmResponse
from eventide.plugins.base_plugin import BasePlugin
from eventide.runtime.markers import FINISHED, invocation_mark
from eventide.testing import FunctionModel, text_response, tool_call_response
from tests.durable import paused_app
from tests.durable.durable_app import Crash, Probe, normalized


def _texts(request: LlmRequest) -> list[str]:
    """The request's conversation as short lines (text, calls, responses)."""
    lines: list[str] = []
    for content in request.contents:
        for part in content.parts or []:
            if part.text is not None:
                lines.append(f"{content.role}: {part.text}")
            if part.function_call is not None:
                lines.append(f"call {part.function_call.name}")
            if part.function_response is not None:
                lines.append(f"response {part.function_response.name}")
    return lines


class _Scenario:
    """An agent that calls save(word) for each message, then answers; every request kept."""

    def __init__(self, compaction: EventsCompactionConfig | None = None) -> None:
        self.requests: list[list[str]] = []
        self.saved: list[str] = []

        def answer(request: LlmRequest) -> LlmResponse:
            self.requests.append(_texts(request))
            last = request.contents[-1].parts or []
            if last and last[-1].function_response is not None:
                return text_response(f"saved {last[-1].function_response.response}")
            word = (request.contents[-1].parts or [types.Part(text="")])[-1].text or ""
            return tool_call_response(("save", {"word": word}))

        def save(word: str, tool_context: ToolContext) -> dict[str, Any]:
            """Save a word."""
            self.saved.append(word)
            tool_context.state["last"] = word
            return {"word": word}

        self.app = App(
            name="app",
            root_agent=LlmAgent(name="a", model=FunctionModel(function=answer), tools=[save]),
            resumability_config=ResumabilityConfig(is_resumable=True),
            events_compaction_config=compaction,
        )


class _CrashAfterCall(BasePlugin):
    """Fails the invocation right after the model's call to save(word) is committed."""

    def __init__(self, word: str) -> None:
        super().__init__("crash")
        self.word = word

    async def on_event_callback(self, *, invocation_context: Any, event: Event) -> None:
        calls = event.get_function_calls()
        if calls and (calls[0].args or {}).get("word") == self.word:
            raise Crash(f"after the call for {self.word!r}")


async def _send(runner: Runner, session_id: str, message: Any) -> list[Event]:
    return [
        e async for e in runner.run_async(user_id="u", session_id=session_id, new_message=message)
    ]


async def _resume(runner: Runner, session_id: str) -> list[Event]:
    return [e async for e in runner.resume_async(user_id="u", session_id=session_id)]


async def _turns_with_rewind(scenario: _Scenario, crash: bool) -> tuple[list[Event], Any]:
    """Turns "one" and "two", a rewind before "two", then turn "three" (failing after its
    call is committed and resumed, when ``crash``)."""
    service = InMemorySessionService()
    runner = Runner(app=scenario.app, session_service=service)
    session = await service.create_session(app_name="app", user_id="u")
    await _send(runner, session.id, "one")
    await _send(runner, session.id, "two")
    stored = await service.get_session(app_name="app", user_id="u", session_id=session.id)
    assert stored is not None
    two = next(e.invocation_id for e in stored.events if e.text == "two")
    await runner.rewind_async(user_id="u", session_id=session.id, rewind_before_invocation_id=two)
    if crash:
        crashing = Runner(
            app=scenario.app, session_service=service, plugins=[_CrashAfterCall("three")]
        )
        try:
            await _send(crashing, session.id, "three")
        except Crash:
            pass
        resumed = await _resume(runner, session.id)
        assert invocation_mark(resumed[-1]) == FINISHED
    else:
        await _send(runner, session.id, "three")
    stored = await service.get_session(app_name="app", user_id="u", session_id=session.id)
    assert stored is not None
    return stored.events, stored.state


async def test_a_turn_after_a_rewind_resumes_without_the_rewound_turn() -> None:
    """Issue 17 with issue 18 (resume after a rewind): a turn that fails after a rewind
    resumes with the model seeing the history the rewind left (the rewound turn hidden),
    exactly as the uninterrupted turn did, and ends with the same events and state."""
    uninterrupted = _Scenario()
    expected_events, expected_state = await _turns_with_rewind(uninterrupted, crash=False)
    resumed = _Scenario()
    events, state = await _turns_with_rewind(resumed, crash=True)

    assert normalized(events) == normalized(expected_events)
    assert state == expected_state == {"last": "three"}
    assert resumed.requests == uninterrupted.requests
    last_request = resumed.requests[-1]
    assert "user: two" not in last_request and "user: three" in last_request
    assert resumed.saved == ["one", "two", "three"]  # the resume did not save "three" again


class _Summary(BaseEventsSummarizer):
    """A summarizer that writes a fixed summary, or fails when told to."""

    def __init__(self, *, fail: bool = False) -> None:
        self.fail = fail
        self.calls = 0

    async def maybe_summarize_events(self, *, events: list[Event]) -> Event | None:
        self.calls += 1
        if self.fail:
            raise ConnectionError("summarizer model unreachable")
        from eventide.events import EventActions, EventCompaction

        return Event(
            author="user",
            actions=EventActions(
                compaction=EventCompaction(
                    start_timestamp=events[0].timestamp,
                    end_timestamp=events[-1].timestamp,
                    compacted_content=types.Content(
                        role="model", parts=[types.Part(text=f"summary of {len(events)}")]
                    ),
                )
            ),
        )


async def test_a_turn_after_a_compaction_resumes_with_the_summary() -> None:
    """Issue 17 with issue 18 (resume across a compaction): the compaction after turn
    "one" is not a turn; turn "two" fails after its call is committed, resume_async
    continues it (the model sees the summary, not the raw first turn) and the next
    compaction follows the resumed turn."""
    summarizer = _Summary()
    scenario = _Scenario(
        EventsCompactionConfig(compaction_interval=1, overlap_size=0, summarizer=summarizer)
    )
    service = InMemorySessionService()
    runner = Runner(app=scenario.app, session_service=service)
    session = await service.create_session(app_name="app", user_id="u")
    await _send(runner, session.id, "one")
    assert summarizer.calls == 1
    crashing = Runner(app=scenario.app, session_service=service, plugins=[_CrashAfterCall("two")])
    try:
        await _send(crashing, session.id, "two")
    except Crash:
        pass
    resumed = await _resume(runner, session.id)
    assert [e.text for e in resumed if e.text] == ["saved {'word': 'two'}"]
    assert scenario.saved == ["one", "two"]
    # Turn "one": the user's message, the call, its response, the answer and the agent's
    # end marker (google-adk's separate end_of_agent event).
    summary = "user: Summary of the earlier conversation:\nsummary of 5"
    assert scenario.requests == [
        ["user: one"],
        ["user: one", "call save", "response save"],
        [summary, "user: two"],  # before the failure; not requested again
        [summary, "user: two", "call save", "response save"],
    ]
    assert summarizer.calls == 2  # the resumed invocation was compacted after it finished


async def test_a_failed_compaction_warning_is_not_a_turn(tmp_path: Path) -> None:
    """Issue 17 with issue 18: the warning event a failing summarizer's compaction commits
    (here right after a paused invocation) is not a turn, so the user's answer still
    continues the paused invocation (it started a new invocation before the fix)."""
    runner = Runner(
        app=paused_app.build_app(Probe(tmp_path / "ledger")),
        session_service=InMemorySessionService(),
    )
    service = runner.session_service
    session = await service.create_session(app_name="paused_app", user_id="u")
    await _send(runner, session.id, "go")
    stored = await service.get_session(app_name="paused_app", user_id="u", session_id=session.id)
    assert stored is not None
    paused_id = stored.events[0].invocation_id
    config = EventsCompactionConfig(compaction_interval=1, overlap_size=0)
    warning = await compact_if_due(stored.events, config, _Summary(fail=True))
    assert warning is not None
    assert (warning.custom_metadata or {}).get("eventide_warning") == "compaction_failed"
    await service.append_event(stored, warning)
    approval = paused_app.answer_for("approve", stored.events)
    answered = await _send(runner, session.id, approval)
    assert answered and {e.invocation_id for e in answered} == {paused_id}


async def test_a_paused_invocation_is_compacted_only_once_answered(tmp_path: Path) -> None:
    """Issue 17 with issue 18: an invocation that paused for the user is not compacted
    while it waits (the summary would hide the call the answer responds to, and the model
    would get a response without its call); the model sees the call with the answer, and
    the compaction follows the continued invocation."""
    probe = Probe(tmp_path / "ledger")
    app = paused_app.build_app(probe)
    clerk = app.root_agent.sub_agents[0]
    assert isinstance(clerk, LlmAgent) and isinstance(clerk.model, FunctionModel)
    requests: list[list[str]] = []
    answer = clerk.model.function

    def spy(request: LlmRequest) -> LlmResponse:
        requests.append(_texts(request))
        response = answer(request)
        assert isinstance(response, LlmResponse)
        return response

    clerk.model.function = spy
    summarizer = _Summary()
    app = App(
        name=app.name,
        root_agent=app.root_agent,
        plugins=app.plugins,
        resumability_config=app.resumability_config,
        events_compaction_config=EventsCompactionConfig(
            compaction_interval=1, overlap_size=0, summarizer=summarizer
        ),
    )
    service = InMemorySessionService()
    runner = Runner(app=app, session_service=service)
    session = await service.create_session(app_name="paused_app", user_id="u")
    await _send(runner, session.id, "go")
    assert summarizer.calls == 0
    stored = await service.get_session(app_name="paused_app", user_id="u", session_id=session.id)
    assert stored is not None
    await _send(runner, session.id, paused_app.answer_for("approve", stored.events))
    assert requests[1] == ["user: go", "call request_approval", "response request_approval"]
    assert summarizer.calls == 0  # paused again, for the refund's confirmation
    stored = await service.get_session(app_name="paused_app", user_id="u", session_id=session.id)
    assert stored is not None
    await _send(runner, session.id, paused_app.answer_for("confirm", stored.events))
    assert summarizer.calls == 1
