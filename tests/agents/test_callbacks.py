"""Agent, model and tool callbacks: sync or async, one or a list, and their short-circuits."""

from __future__ import annotations

from typing import Any

import pytest

from eventide import (
    BaseTool,
    CallbackContext,
    LlmAgent,
    LlmRequest,
    LlmResponse,
    ToolContext,
    types,
)
from eventide.testing import ScriptedModel, text_response, tool_call_response
from tests.agents.llm_helpers import start, turn
from tests.event_summary import summarize


def _double(x: int) -> int:
    """Double a number."""
    return 2 * x


async def test_before_agent_content_skips_the_agent() -> None:
    """Spec callbacks: before_agent_callback returning Content skips the agent's own logic and
    becomes its answer; state written there is committed with that event."""
    model = ScriptedModel(responses=[])

    def gate(callback_context: CallbackContext) -> types.Content:
        callback_context.state["gated"] = True
        return types.Content(role="model", parts=[types.Part(text="Closed today.")])

    runner, sid = await start(LlmAgent(name="a", model=model, before_agent_callback=gate))
    events = await turn(runner, sid)
    assert summarize(events) == [("a", "text", "Closed today.")]
    assert events[0].actions.state_delta == {"gated": True}
    assert model.calls == 0


async def test_agent_callbacks_state_only_and_after_agent_content() -> None:
    """A before_agent callback that only writes state yields a state event before the agent
    runs; after_agent's Content follows the agent's answer. Lists run in order; async works."""
    calls: list[str] = []

    def first(callback_context: CallbackContext) -> None:
        calls.append("first")
        callback_context.state["seen"] = 1

    async def second(callback_context: CallbackContext) -> None:
        calls.append("second")

    async def after(callback_context: CallbackContext) -> types.Content:
        return types.Content(role="model", parts=[types.Part(text="(signed)")])

    agent = LlmAgent(
        name="a",
        model=ScriptedModel(responses=["answer"]),
        before_agent_callback=[first, second],
        after_agent_callback=after,
    )
    runner, sid = await start(agent)
    events = await turn(runner, sid)
    assert summarize(events) == [
        ("a", "state", (("seen", 1),)),
        ("a", "text", "answer"),
        ("a", "text", "(signed)"),
    ]
    assert calls == ["first", "second"]


async def test_before_model_response_skips_the_model() -> None:
    """Issue 3: before_model returning an LlmResponse skips the model call; its state write
    lands in that model event's state_delta."""
    model = ScriptedModel(responses=[])

    def cached(callback_context: CallbackContext, llm_request: LlmRequest) -> LlmResponse:
        callback_context.state["cache_hit"] = True
        return text_response("from cache")

    runner, sid = await start(LlmAgent(name="a", model=model, before_model_callback=cached))
    events = await turn(runner, sid)
    assert summarize(events) == [("a", "text", "from cache")]
    assert events[0].actions.state_delta == {"cache_hit": True}
    assert model.calls == 0


async def test_before_model_can_edit_the_request() -> None:
    """before_model returning None lets the call go ahead with its (edited) request."""
    model = ScriptedModel(responses=["ok"])

    def add_rule(callback_context: CallbackContext, llm_request: LlmRequest) -> None:
        llm_request.append_instructions(["Answer in French."])

    runner, sid = await start(
        LlmAgent(name="a", model=model, instruction="Be brief.", before_model_callback=add_rule)
    )
    await turn(runner, sid)
    assert model.requests[0].config.system_instruction == "Be brief.\n\nAnswer in French."


async def test_after_model_replaces_the_response() -> None:
    """Issue 3: after_model's returned LlmResponse replaces the model's."""

    def redact(callback_context: CallbackContext, llm_response: LlmResponse) -> LlmResponse | None:
        if llm_response.content and "secret" in (llm_response.content.text or ""):
            return text_response("[redacted]")
        return None

    model = ScriptedModel(responses=["the secret is 42"])
    runner, sid = await start(LlmAgent(name="a", model=model, after_model_callback=redact))
    assert summarize(await turn(runner, sid)) == [("a", "text", "[redacted]")]


async def test_on_model_error_recovers() -> None:
    """Issue 3: on_model_error_callback's LlmResponse recovers from a model exception; without
    it the exception propagates."""

    def fallback(
        callback_context: CallbackContext, llm_request: LlmRequest, error: Exception
    ) -> LlmResponse:
        return text_response(f"fallback after {type(error).__name__}")

    model = ScriptedModel(responses=[ConnectionError("model down")])
    runner, sid = await start(LlmAgent(name="a", model=model, on_model_error_callback=fallback))
    assert summarize(await turn(runner, sid)) == [("a", "text", "fallback after ConnectionError")]

    runner, sid = await start(
        LlmAgent(name="b", model=ScriptedModel(responses=[ConnectionError("model down")]))
    )
    with pytest.raises(ConnectionError, match="model down"):
        await turn(runner, sid)


async def test_before_tool_dict_skips_the_tool() -> None:
    """Issue 3: before_tool returning a dict skips the tool and becomes its result; its state
    write lands in the tool response event."""
    ran: list[int] = []

    def tracked(x: int) -> int:
        """Double."""
        ran.append(x)
        return 2 * x

    def deny(tool: BaseTool, args: dict[str, Any], tool_context: ToolContext) -> dict[str, Any]:
        tool_context.state["denied"] = tool.name
        return {"error": "not allowed"}

    model = ScriptedModel(responses=[tool_call_response(("tracked", {"x": 2})), "ok"])
    agent = LlmAgent(name="a", model=model, tools=[tracked], before_tool_callback=deny)
    runner, sid = await start(agent)
    events = await turn(runner, sid)
    assert events[1].get_function_responses()[0].response == {"error": "not allowed"}
    assert events[1].actions.state_delta == {"denied": "tracked"}
    assert ran == []


async def test_after_tool_replaces_the_result() -> None:
    """Issue 3: after_tool's dict replaces the tool's result."""

    def annotate(
        tool: BaseTool,
        args: dict[str, Any],
        tool_context: ToolContext,
        tool_response: dict[str, Any],
    ) -> dict[str, Any]:
        return {**tool_response, "checked": True}

    model = ScriptedModel(responses=[tool_call_response(("_double", {"x": 4})), "ok"])
    agent = LlmAgent(name="a", model=model, tools=[_double], after_tool_callback=annotate)
    runner, sid = await start(agent)
    events = await turn(runner, sid)
    assert events[1].get_function_responses()[0].response == {"result": 8, "checked": True}


async def test_on_tool_error_recovers() -> None:
    """Issue 3: on_tool_error_callback's dict recovers from a tool exception."""

    def flaky(x: int) -> int:
        """Fails."""
        raise TimeoutError("slow backend")

    def recover(
        tool: BaseTool, args: dict[str, Any], tool_context: ToolContext, error: Exception
    ) -> dict[str, Any]:
        return {"error": f"{tool.name} failed: {error}"}

    model = ScriptedModel(responses=[tool_call_response(("flaky", {"x": 1})), "sorry"])
    agent = LlmAgent(name="a", model=model, tools=[flaky], on_tool_error_callback=recover)
    runner, sid = await start(agent)
    events = await turn(runner, sid)
    assert events[1].get_function_responses()[0].response == {"error": "flaky failed: slow backend"}
    assert events[-1].text == "sorry"


async def test_on_tool_error_callback_may_answer_a_call_of_an_unknown_tool() -> None:
    """Issue 34 (google-adk 2.13's behaviour, run side by side): a call of a tool the agent
    does not have goes to on_tool_error_callback with a stand-in tool of that name and a
    ValueError; its dict is the response. A callback answering None leaves the error the
    model reads."""
    seen: list[tuple[str, str]] = []

    def recover(
        tool: BaseTool, args: dict[str, Any], tool_context: ToolContext, error: Exception
    ) -> dict[str, Any] | None:
        seen.append((tool.name, type(error).__name__))
        return {"result": "handled"} if args.get("handle") else None

    model = ScriptedModel(
        responses=[
            tool_call_response(("ghost", {"handle": True})),
            "ok",
            tool_call_response(("ghost", {})),
            "ok again",
        ]
    )
    agent = LlmAgent(name="a", model=model, tools=[], on_tool_error_callback=recover)
    runner, sid = await start(agent)
    events = await turn(runner, sid)
    assert events[1].get_function_responses()[0].response == {"result": "handled"}
    events = await turn(runner, sid)
    response = events[1].get_function_responses()[0].response
    assert response is not None and "no tool named 'ghost'" in response["error"]
    assert seen == [("ghost", "ValueError"), ("ghost", "ValueError")]


async def test_callback_list_first_non_none_wins() -> None:
    """A list of callbacks runs in order until one returns a value."""
    order: list[str] = []

    def one(callback_context: CallbackContext, llm_request: LlmRequest) -> None:
        order.append("one")

    async def two(callback_context: CallbackContext, llm_request: LlmRequest) -> LlmResponse:
        order.append("two")
        return text_response("two")

    def three(callback_context: CallbackContext, llm_request: LlmRequest) -> LlmResponse:
        order.append("three")
        return text_response("three")

    agent = LlmAgent(name="a", model=ScriptedModel(), before_model_callback=[one, two, three])
    runner, sid = await start(agent)
    assert summarize(await turn(runner, sid)) == [("a", "text", "two")]
    assert order == ["one", "two"]
