"""google-adk behaviours of issue 34 (phase 1), written once against google-adk's names like
``scenarios.py``'s and registered with them: they run on Eventide in ``test_scenarios.py`` and
on google-adk with ``run_on_adk.py``, so each expectation is google-adk's own."""

from __future__ import annotations

import importlib
from collections.abc import AsyncGenerator
from pathlib import Path
from typing import Any

import pydantic

from tests.adk_compat.frameworks import Framework, scripted_model
from tests.adk_compat.scenarios import run_turn, scenario

# Where each framework keeps the names the two frameworks' namespaces do not carry.
_EXTRA = {
    "eventide": {
        "AlreadyExistsError": "eventide.errors",
        "InputValidationError": "eventide.errors",
    },
    "google-adk": {
        "AlreadyExistsError": "google.adk.errors.already_exists_error",
        "InputValidationError": "google.adk.errors.input_validation_error",
    },
}


def _extra(fw: Framework, name: str) -> Any:
    return getattr(importlib.import_module(_EXTRA[fw.name][name]), name)


async def _context(fw: Framework, agent: Any, **extra: Any) -> Any:
    service = fw.InMemorySessionService()
    session = await service.create_session(app_name="app", user_id="u", state={"city": "Oslo"})
    return fw.InvocationContext(
        invocation_id="inv", agent=agent, session=session, session_service=service, **extra
    )


@scenario
async def temp_state_is_on_the_session_for_later_agents(fw: Framework, tmp: Path) -> None:
    """A temp: value committed by one agent of a SequentialAgent is on ctx.session.state for
    the next agent of the same invocation, and is stored nowhere."""
    types = fw.types
    seen: list[Any] = []

    class Writer(fw.BaseAgent):  # type: ignore[misc, name-defined]
        async def _run_async_impl(self, ctx: Any) -> AsyncGenerator[Any, None]:
            delta = {"temp:scratch": "draft-1", "kept": "yes"}
            yield fw.Event(author=self.name, actions=fw.EventActions(state_delta=delta))

    class Reader(fw.BaseAgent):  # type: ignore[misc, name-defined]
        async def _run_async_impl(self, ctx: Any) -> AsyncGenerator[Any, None]:
            seen.append(ctx.session.state.get("temp:scratch"))
            content = types.Content(role="model", parts=[types.Part(text="read")])
            yield fw.Event(author=self.name, content=content)

    root = fw.SequentialAgent(name="root", sub_agents=[Writer(name="w"), Reader(name="r")])
    runner = fw.InMemoryRunner(agent=root, app_name="app")
    await run_turn(fw, runner, "go")
    assert seen == ["draft-1"]
    assert dict((await _one_session(runner)).state) == {"kept": "yes"}


@scenario
async def canonical_instruction_reports_bypass_state_injection(fw: Framework, tmp: Path) -> None:
    """canonical_instruction(ctx) -> (text, bypass_state_injection): False for a string
    instruction, True for an instruction provider (sync or async)."""

    async def provider(ctx: Any) -> str:
        return "literal {city}"

    text_agent = fw.LlmAgent(name="a", instruction="Weather in {city}")
    provider_agent = fw.LlmAgent(name="b", instruction=provider)
    ctx = fw.ReadonlyContext(await _context(fw, text_agent))
    assert await text_agent.canonical_instruction(ctx) == ("Weather in {city}", False)
    assert await provider_agent.canonical_instruction(ctx) == ("literal {city}", True)


@scenario
async def output_schema_answers_leave_none_fields_out(fw: Framework, tmp: Path) -> None:
    """An agent with output_schema and output_key stores its answer without None fields,
    directly and when it answers through an AgentTool (whose result is the same dict)."""

    class Out(pydantic.BaseModel):
        a: str
        b: str | None = None

    def sub(name: str) -> Any:
        model = scripted_model(fw, ['{"a": "x", "b": null}'])
        return fw.LlmAgent(
            name=name, model=model, output_schema=Out, output_key="res", description="d"
        )

    runner = fw.InMemoryRunner(agent=sub("direct"), app_name="app")
    await run_turn(fw, runner, "hi")
    state = dict((await _one_session(runner)).state)
    assert state == {"res": {"a": "x"}}
    parent_model = scripted_model(fw, [{"call": "via_tool", "args": {"request": "go"}}, "done"])
    root = fw.LlmAgent(name="root", model=parent_model, tools=[fw.AgentTool(agent=sub("via_tool"))])
    runner = fw.InMemoryRunner(agent=root, app_name="app")
    events = await run_turn(fw, runner, "hi")
    responses = [
        part.function_response.response
        for event in events
        for part in (event.content.parts if event.content else [])
        if part.function_response
    ]
    assert responses == [{"a": "x"}]
    assert dict((await _one_session(runner)).state) == {"res": {"a": "x"}}


async def _one_session(runner: Any) -> Any:
    listed = await runner.session_service.list_sessions(app_name="app", user_id="u")
    [only] = listed.sessions
    return await runner.session_service.get_session(app_name="app", user_id="u", session_id=only.id)


@scenario
async def invocation_context_takes_resumability_config(fw: Framework, tmp: Path) -> None:
    """InvocationContext(..., resumability_config=ResumabilityConfig(is_resumable=False))
    is accepted; is_resumable follows the config."""
    agent = fw.LlmAgent(name="a")
    off = await _context(fw, agent, resumability_config=fw.ResumabilityConfig(is_resumable=False))
    on = await _context(fw, agent, resumability_config=fw.ResumabilityConfig(is_resumable=True))
    assert (off.is_resumable, on.is_resumable) == (False, True)


@scenario
async def tool_declaration_hook_and_optional_run_async(fw: Framework, tmp: Path) -> None:
    """LongRunningFunctionTool._get_declaration() is the declaration with the long-running
    note; a BaseTool subclass without run_async can be made, and running it raises
    NotImplementedError."""

    def book(room: str) -> dict[str, str]:
        """Books a room."""
        return {"room": room}

    declaration = fw.LongRunningFunctionTool(book)._get_declaration()
    assert declaration.name == "book"
    assert declaration.description == (
        "Books a room.\n\nNOTE: This is a long-running operation. Do not call this tool "
        "again if it has already returned some intermediate or pending status."
    )

    class RequestOnly(fw.BaseTool):  # type: ignore[misc, name-defined]
        pass

    tool = RequestOnly(name="x", description="y")
    assert tool._get_declaration() is None
    try:
        await tool.run_async(args={}, tool_context=None)
    except NotImplementedError:
        pass
    else:
        raise AssertionError("run_async did not raise NotImplementedError")


@scenario
async def adk_error_classes(fw: Framework, tmp: Path) -> None:
    """InputValidationError is a ValueError with default 'Invalid input.'; a taken session
    id raises AlreadyExistsError; both carry .message."""
    input_error = _extra(fw, "InputValidationError")
    exists_error = _extra(fw, "AlreadyExistsError")
    assert issubclass(input_error, ValueError)
    assert input_error().message == "Invalid input."
    assert exists_error().message == "The resource already exists."
    service = fw.InMemorySessionService()
    await service.create_session(app_name="app", user_id="u", session_id="s")
    try:
        await service.create_session(app_name="app", user_id="u", session_id="s")
    except exists_error:
        pass
    else:
        raise AssertionError("a taken session id was accepted")
