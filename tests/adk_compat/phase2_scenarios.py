"""google-adk 2.x behaviours of issue 34 (phase 2): cancellation, the Task API and the
streaming contract. Written once against google-adk's names like ``scenarios.py``'s and
registered with them: they run on Eventide in ``test_scenarios.py`` and on google-adk with
``run_on_adk.py``, so each expectation is google-adk's own."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from tests.adk_compat.frameworks import Framework, requests_of, scripted_model
from tests.adk_compat.scenarios import scenario


def _summary(event: Any) -> tuple[Any, ...]:
    """(author, error_code, the kinds of its parts) of an event."""
    parts = event.content.parts if event.content and event.content.parts else []
    kinds = tuple(
        "call" if p.function_call else "response" if p.function_response else "text" for p in parts
    )
    return (event.author, event.error_code, kinds)


def _aborting_agent(fw: Framework, when: str, signal: asyncio.Event) -> Any:
    def lookup(city: str) -> dict[str, str]:
        """Looks a city up."""
        if when == "in_tool":
            signal.set()
        return {"city": city}

    def after_model(callback_context: Any, llm_response: Any) -> None:
        if when == "after_model" and llm_response.content and llm_response.content.parts:
            if llm_response.content.parts[0].function_call:
                signal.set()

    model = scripted_model(fw, [{"call": "lookup", "args": {"city": "Oslo"}}, "answer"])
    return fw.LlmAgent(name="helper", model=model, tools=[lookup], after_model_callback=after_model)


async def _run_aborting(fw: Framework, when: str) -> tuple[Any, list[Any], Any]:
    """One turn of an agent whose abort signal is set ``when``; the agent, the events
    yielded, and the session reloaded."""
    signal = asyncio.Event()
    agent = _aborting_agent(fw, when, signal)
    runner = fw.InMemoryRunner(agent=agent, app_name="app")
    session = await runner.session_service.create_session(app_name="app", user_id="u")
    message = fw.types.Content(role="user", parts=[fw.types.Part(text="go")])
    events = [
        e
        async for e in runner.run_async(
            user_id="u", session_id=session.id, new_message=message, abort_signal=signal
        )
    ]
    stored = await runner.session_service.get_session(
        app_name="app", user_id="u", session_id=session.id
    )
    return agent, events, stored


@scenario
async def abort_signal_in_a_tool_records_invocation_aborted(fw: Framework, tmp: Path) -> None:
    """Runner.run_async(abort_signal=...) set by a tool: the tool's response is committed,
    no further model call is made, and one content-less INVOCATION_ABORTED event by the root
    agent is committed and yielded."""
    agent, events, stored = await _run_aborting(fw, "in_tool")
    expected = [
        ("helper", None, ("call",)),
        ("helper", None, ("response",)),
        ("helper", "INVOCATION_ABORTED", ()),
    ]
    assert [_summary(e) for e in events] == expected, [_summary(e) for e in events]
    assert [_summary(e) for e in stored.events] == [("user", None, ("text",)), *expected]
    assert len(requests_of(agent.model)) == 1
    assert events[-1].error_message


@scenario
async def abort_before_a_tool_answers_its_pending_call(fw: Framework, tmp: Path) -> None:
    """An abort set after the model called a tool: the tool does not run; the pending call
    gets an error response authored by the calling agent, with INVOCATION_ABORTED."""
    agent, events, _ = await _run_aborting(fw, "after_model")
    assert [_summary(e) for e in events] == [
        ("helper", None, ("call",)),
        ("helper", "INVOCATION_ABORTED", ("response",)),
    ], [_summary(e) for e in events]
    call = events[0].content.parts[0].function_call
    response = events[1].content.parts[0].function_response
    assert (response.id, response.name) == (call.id, "lookup")
    assert set(response.response) == {"error"}
    assert events[1].content.role == "user"
    assert len(requests_of(agent.model)) == 1
