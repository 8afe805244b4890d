"""Several tool calls from one model response in a resumable invocation: each finished call is
committed at once, so resuming runs only the unfinished ones (in one process, the failure an
exception; tests/durable/test_kill.py SIGKILLs real processes at the same points)."""

from __future__ import annotations

import re
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
    ResumabilityConfig,
    Runner,
    ToolContext,
)
from eventide.errors import ToolError
from eventide.events import EventActions
from eventide.plugins.base_plugin import BasePlugin
from eventide.protocol import REQUEST_CONFIRMATION_FUNCTION
from eventide.runtime.markers import CALL_KEY, ENDED, invocation_mark
from eventide.testing import ScriptedModel, text_response, tool_call_response
from eventide.tools.function_tool import FunctionTool
from tests.durable import sibling_app
from tests.durable.durable_app import Crash, Probe, normalized


async def _send(runner: Runner, session_id: str, message: Any) -> list[Event]:
    return [
        e async for e in runner.run_async(user_id="u", session_id=session_id, new_message=message)
    ]


async def _resume(runner: Runner, session_id: str) -> list[Event]:
    return [e async for e in runner.resume_async(user_id="u", session_id=session_id)]


async def _stored(runner: Runner, session_id: str) -> tuple[list[Event], dict[str, Any]]:
    session = await runner.session_service.get_session(
        app_name=runner.app_name, user_id="u", session_id=session_id
    )
    assert session is not None
    return session.events, session.state


def _masked(events: list[Event]) -> str:
    """``normalized`` events with generated call ids (in a confirmation's arguments) masked."""
    return re.sub(r"call-[0-9a-f]+-[0-9a-z]+", "call-*", repr(normalized(events)))


def _starts(probe: Probe) -> Counter[str]:
    return Counter(line.split()[1] for line in probe.ledger_lines() if line.startswith("start"))


async def _sibling_run(
    tmp_path: Path, name: str, crash_at: str | None
) -> tuple[Runner, str, Probe]:
    probe = Probe(tmp_path / name)
    runner = Runner(app=sibling_app.build_app(probe), session_service=InMemorySessionService())
    session = await runner.session_service.create_session(
        app_name=sibling_app.APP_NAME, user_id="u"
    )
    if crash_at is None:
        await _send(runner, session.id, "go")
    else:
        probe.raise_at = crash_at
        with pytest.raises((Crash, ToolError)):
            await _send(runner, session.id, "go")
    return runner, session.id, probe


@pytest.mark.parametrize("point", sibling_app.KILL_POINTS)
async def test_finished_sibling_calls_are_not_run_again(tmp_path: Path, point: str) -> None:
    """Issue 17 (each finished tool call is checkpointed while its siblings still run): the
    invocation fails inside the last of three calls (or after all three were recorded);
    the finished calls' records (with their state) were committed, and resuming runs only
    the interrupted call, ending with the events and state of an uninterrupted run."""
    runner, session_id, _ = await _sibling_run(tmp_path, "baseline", None)
    expected_events, expected_state = await _stored(runner, session_id)

    runner, session_id, probe = await _sibling_run(tmp_path, "crashed", point)
    crashed, state = await _stored(runner, session_id)
    recorded = sibling_app.recorded_calls(crashed)
    assert recorded == ["fetch", "fetch"] + ([] if point in sibling_app.IN_TOOL else ["slow"])
    assert state == {
        "got_a": True,
        "got_b": True,
        **({} if len(recorded) == 2 else {"slow_done": True}),
    }

    await _resume(runner, session_id)
    events, state = await _stored(runner, session_id)
    assert normalized(events) == normalized(expected_events)
    assert state == expected_state
    assert _starts(probe) == Counter(fetch=2, slow=2 if point in sibling_app.IN_TOOL else 1)
    assert [line for line in probe.ledger_lines() if line.startswith("model")] == [
        "model gatherer 1",
        "model gatherer 2",
        "model reporter 1",
    ]


async def test_the_response_event_is_unchanged_and_deltas_are_committed_once(
    tmp_path: Path,
) -> None:
    """Issue 17 (several tool calls): the model still receives one response event with the
    three responses in call order (as without resumability), and each call's state delta is
    committed once, on its record, not again on the response event."""
    runner, session_id, _ = await _sibling_run(tmp_path, "ledger", None)
    events, state = await _stored(runner, session_id)
    records = [e for e in events if (e.custom_metadata or {}).get(CALL_KEY)]
    assert [r.actions.state_delta for r in records] == [
        {"got_a": True},
        {"got_b": True},
        {"slow_done": True},
    ]
    response = next(e for e in events if e.get_function_responses())
    assert [r.name for r in response.get_function_responses()] == ["fetch", "fetch", "slow"]
    assert response.actions.state_delta == {}
    assert state == {"got_a": True, "got_b": True, "slow_done": True}


async def test_a_failing_sibling_keeps_the_finished_calls_committed() -> None:
    """Issue 17 (several tool calls): one call raises after its sibling finished; the error
    surfaces as ToolError (not a cancellation), the sibling's record stays committed, and
    resuming runs only the failed call."""
    ran: list[str] = []

    async def lookup(tool_context: ToolContext) -> dict[str, str]:
        """Look up."""
        ran.append("lookup")
        return {"found": "yes"}

    async def charge(tool_context: ToolContext) -> dict[str, str]:
        """Charge."""
        ran.append("charge")
        if ran.count("charge") == 1:
            await sibling_app.until_recorded(tool_context, 1)
            raise ConnectionError("payment service down")
        return {"charged": "ok"}

    model = ScriptedModel(
        responses=[tool_call_response(("lookup", {}), ("charge", {})), text_response("done")]
    )
    app = App(
        name="app",
        root_agent=LlmAgent(name="a", model=model, tools=[lookup, charge]),
        resumability_config=ResumabilityConfig(is_resumable=True),
    )
    runner = Runner(app=app, session_service=InMemorySessionService())
    session = await runner.session_service.create_session(app_name="app", user_id="u")
    with pytest.raises(ToolError, match="payment service down"):
        await _send(runner, session.id, "go")
    events, _ = await _stored(runner, session.id)
    assert sibling_app.recorded_calls(events) == ["lookup"]
    resumed = await _resume(runner, session.id)
    assert [e.text for e in resumed if e.text] == ["done"]
    assert ran == ["lookup", "charge", "charge"]
    assert model.calls == 2


async def test_recorded_actions_survive_a_resume(tmp_path: Path) -> None:
    """Issue 17 (several tool calls): a call that asked for the user's confirmation and a
    long-running call that returned nothing were recorded with that; the process fails
    before their response event, and the resumed invocation pauses for the confirmation
    and the long-running answer exactly as an uninterrupted one does, running neither again."""
    ran: list[str] = []

    def refund(amount: int, tool_context: ToolContext) -> dict[str, int]:
        """Refund."""
        ran.append("refund")
        return {"refunded": amount}

    def approval(tool_context: ToolContext) -> None:
        """Ask for an approval."""
        ran.append("approval")
        tool_context.state["asked"] = True

    def build() -> App:
        model = ScriptedModel(
            responses=[tool_call_response(("refund", {"amount": 5}), ("approval", {}))]
        )
        agent = LlmAgent(
            name="a",
            model=model,
            tools=[
                FunctionTool(refund, require_confirmation=True),
                LongRunningFunctionTool(approval),
            ],
        )
        return App(
            name="app", root_agent=agent, resumability_config=ResumabilityConfig(is_resumable=True)
        )

    class FailAfterRecords(BasePlugin):
        async def on_event_callback(self, *, invocation_context: Any, event: Event) -> None:
            if len(sibling_app.recorded_calls(invocation_context.session.events)) == 2:
                raise Crash("after both records")

    baseline = Runner(app=build(), session_service=InMemorySessionService())
    first = await baseline.session_service.create_session(app_name="app", user_id="u")
    await _send(baseline, first.id, "go")
    expected, expected_state = await _stored(baseline, first.id)

    service = InMemorySessionService()
    session = await service.create_session(app_name="app", user_id="u")
    crashing = Runner(app=build(), session_service=service, plugins=[FailAfterRecords("f")])
    with pytest.raises(Crash):
        await _send(crashing, session.id, "go")
    runner = Runner(app=build(), session_service=service)
    resumed = await _resume(runner, session.id)
    assert invocation_mark(resumed[-1]) == ENDED
    events, state = await _stored(runner, session.id)
    assert _masked(events) == _masked(expected)
    assert state == expected_state == {"asked": True}
    assert ran == ["approval", "approval"]  # once per run: the baseline's and this one's
    requests = [c for e in events for c in e.get_function_calls()]
    assert REQUEST_CONFIRMATION_FUNCTION in [c.name for c in requests]
    record = next(
        e for e in events if (e.custom_metadata or {}).get(CALL_KEY, {}).get("name") == "refund"
    )
    assert record.actions == EventActions()  # the confirmation request is in the metadata
    assert record.custom_metadata is not None
    assert record.custom_metadata[CALL_KEY]["actions"]["requested_tool_confirmations"]


async def test_without_resumability_sibling_calls_commit_one_event(tmp_path: Path) -> None:
    """Issue 17 (resumability off keeps the old behaviour): the calls' responses and state
    are committed in one event, with no records."""
    model = ScriptedModel(
        responses=[tool_call_response(("one", {}), ("two", {})), text_response("done")]
    )

    def one(tool_context: ToolContext) -> dict[str, int]:
        """One."""
        tool_context.state["one"] = 1
        return {"n": 1}

    def two(tool_context: ToolContext) -> dict[str, int]:
        """Two."""
        tool_context.state["two"] = 2
        return {"n": 2}

    runner = Runner(
        app=App(name="app", root_agent=LlmAgent(name="a", model=model, tools=[one, two])),
        session_service=InMemorySessionService(),
    )
    session = await runner.session_service.create_session(app_name="app", user_id="u")
    events = await _send(runner, session.id, "go")
    assert sibling_app.recorded_calls(events) == []
    response = next(e for e in events if e.get_function_responses())
    assert response.actions.state_delta == {"one": 1, "two": 2}
