"""LlmAgent's flow: the spec's traced invocation, tools, errors, limits, streaming."""

from __future__ import annotations

import asyncio
import sys
import threading
from typing import Any

import pytest

from eventide import (
    CallbackContext,
    FunctionTool,
    LlmAgent,
    LlmRequest,
    LlmResponse,
    RunConfig,
    StreamingMode,
    ToolContext,
    types,
)
from eventide.errors import ConfigurationError, LlmCallsLimitExceededError, ToolError
from eventide.testing import ScriptedModel, text_response, tool_call_response
from tests.agents.llm_helpers import start, stored_events, turn
from tests.event_summary import summarize


async def test_spec_traced_invocation_with_a_tool_call() -> None:
    """Spec "How It Works: A Simplified Invocation": user asks, the model calls MyTool, the
    tool's result event (author = the agent, role 'user') carries its state change, which is
    committed before the agent resumes and calls the model again, then the final answer."""
    committed_when_model_called_again: list[Any] = []

    def MyTool(city: str, tool_context: ToolContext) -> dict[str, str]:  # noqa: N802
        """Find a country's capital."""
        tool_context.state["last_lookup"] = city
        return {"result": "Paris"}

    def check_commit(callback_context: CallbackContext, llm_request: LlmRequest) -> None:
        session = callback_context.invocation_context.session
        committed_when_model_called_again.append(session.state.get("last_lookup"))

    model = ScriptedModel(
        responses=[tool_call_response(("MyTool", {"city": "France"})), "The capital is Paris."]
    )
    agent = LlmAgent(
        name="Agent_Llm", model=model, tools=[MyTool], before_model_callback=check_commit
    )
    runner, sid = await start(agent)
    events = await turn(runner, sid, "What's the capital of France?")
    assert summarize(events) == [
        ("Agent_Llm", "call", (("MyTool", (("city", "France"),)),)),
        ("Agent_Llm", "response", (("MyTool", (("result", "Paris"),)),)),
        ("Agent_Llm", "text", "The capital is Paris."),
    ]
    assert [e.content.role for e in events if e.content] == ["model", "user", "model"]
    assert [e.is_final_response() for e in events] == [False, False, True]
    assert events[1].actions.state_delta == {"last_lookup": "France"}
    # The call and its response share the call id, which the tool's context saw too.
    assert events[0].get_function_calls()[0].id == events[1].get_function_responses()[0].id
    assert committed_when_model_called_again == [None, "France"]
    stored = await stored_events(runner, sid)
    assert [e.author for e in stored] == ["user", "Agent_Llm", "Agent_Llm", "Agent_Llm"]
    # The second request replays the whole conversation, call paired with its response.
    second = model.requests[1].contents
    assert [c.role for c in second] == ["user", "model", "user"]
    assert second[2].parts is not None and second[2].parts[0].function_response is not None


async def test_tool_declaration_reaches_the_model() -> None:
    """FunctionTool: the declaration inferred from the signature and docstring is sent."""

    def get_weather(city: str, unit: str = "celsius") -> dict[str, Any]:
        """Get the weather.

        Args:
            city: the city.
            unit: celsius or fahrenheit.
        """
        return {}

    model = ScriptedModel(responses=["ok"])
    runner, sid = await start(LlmAgent(name="a", model=model, tools=[get_weather]))
    await turn(runner, sid)
    tools = model.requests[0].config.tools
    assert tools is not None and tools[0].function_declarations is not None
    declaration = tools[0].function_declarations[0]
    assert declaration.name == "get_weather" and declaration.description == "Get the weather."
    assert declaration.parameters_json_schema == {
        "type": "object",
        "properties": {
            "city": {"type": "string", "description": "the city."},
            "unit": {
                "type": "string",
                "default": "celsius",
                "description": "celsius or fahrenheit.",
            },
        },
        "required": ["city"],
        "additionalProperties": False,
    }


async def test_unknown_tool_goes_back_to_the_model() -> None:
    """Bad input: an unknown tool name is answered with an error the model can read; the
    invocation does not crash and the model corrects itself."""
    model = ScriptedModel(responses=[tool_call_response(("no_such_tool", {})), "Sorry."])
    runner, sid = await start(LlmAgent(name="a", model=model, tools=[_add]))
    events = await turn(runner, sid)
    response = events[1].get_function_responses()[0].response
    assert response is not None and "no tool named 'no_such_tool'" in response["error"]
    assert "_add" in response["error"]
    assert events[-1].text == "Sorry."


def _add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


async def test_invalid_tool_arguments_go_back_to_the_model() -> None:
    """Bad input: arguments that fail validation are answered with an error naming the bad
    field; a valid retry then runs the tool (non-dict results wrapped as {"result": ...})."""
    model = ScriptedModel(
        responses=[
            tool_call_response(("_add", {"a": "x", "b": 2})),
            tool_call_response(("_add", {"a": "1", "b": 2})),
            "3",
        ]
    )
    runner, sid = await start(LlmAgent(name="a", model=model, tools=[_add]))
    events = await turn(runner, sid)
    error = events[1].get_function_responses()[0].response
    assert error is not None and "Invalid arguments for tool '_add'" in error["error"]
    assert "a:" in error["error"]
    assert events[3].get_function_responses()[0].response == {"result": 3}


async def test_tool_that_raises_ends_the_invocation_keeping_commits() -> None:
    """Bad input: a tool that raises ends the invocation with ToolError (naming the tool and
    the call); the model's call event committed before stays stored."""

    def broken(x: int) -> int:
        """Always fails."""
        raise ValueError("backend down")

    model = ScriptedModel(responses=[tool_call_response(("broken", {"x": 1}))])
    runner, sid = await start(LlmAgent(name="a", model=model, tools=[broken]))
    with pytest.raises(ToolError, match="'broken'.*ValueError: backend down") as info:
        await turn(runner, sid)
    assert info.value.tool_name == "broken" and isinstance(info.value.__cause__, ValueError)
    assert [e.author for e in await stored_events(runner, sid)] == ["user", "a"]


async def test_model_error_ends_the_turn_with_an_error_event() -> None:
    """Spec "Eventos de Error": a model error (error_code) becomes an error event that ends
    the turn."""
    failure = LlmResponse(error_code="SAFETY", error_message="Blocked by safety settings.")
    model = ScriptedModel(responses=[failure])
    runner, sid = await start(LlmAgent(name="a", model=model))
    events = await turn(runner, sid)
    assert summarize(events) == [("a", "error", "SAFETY")]
    assert events[0].error_message == "Blocked by safety settings."
    assert events[0].is_final_response()
    assert model.calls == 1


def test_max_llm_calls_is_checked_as_google_adk_checks_it(caplog: pytest.LogCaptureFixture) -> None:
    """google-adk 2.13 (run side by side): ``sys.maxsize`` is refused with its words; zero
    or less means no limit and is logged as a warning; the default is not checked."""
    with pytest.raises(ValueError, match=f"max_llm_calls should be less than {sys.maxsize}"):
        RunConfig(max_llm_calls=sys.maxsize)
    assert RunConfig.validate_max_llm_calls(100) == 100
    with caplog.at_level("WARNING", logger="eventide.run_config"):
        assert RunConfig(max_llm_calls=0).max_llm_calls == 0
    assert "no limit" in caplog.text
    caplog.clear()
    with caplog.at_level("WARNING", logger="eventide.run_config"):
        RunConfig()
    assert caplog.text == ""


async def test_max_llm_calls_stops_the_invocation() -> None:
    """RunConfig.max_llm_calls: past the limit the invocation stops with a clear error."""
    model = ScriptedModel(responses=[tool_call_response(("_add", {"a": 1, "b": 1}))] * 5)
    runner, sid = await start(LlmAgent(name="a", model=model, tools=[_add]))
    with pytest.raises(LlmCallsLimitExceededError, match="max_llm_calls=2"):
        await turn(runner, sid, run_config=RunConfig(max_llm_calls=2))
    assert model.calls == 2
    assert len(await stored_events(runner, sid)) == 5  # user + 2 x (call, response)


async def test_concurrent_tool_calls_run_at_the_same_time() -> None:
    """Issue 3: the function calls of one response run concurrently (each waits until the
    other has started, which only works if both run at once), and one response event holds
    every result in call order."""
    started = {"a": asyncio.Event(), "b": asyncio.Event()}

    async def slow(name: str) -> str:
        """Wait for the other call."""
        started[name].set()
        other = "b" if name == "a" else "a"
        await asyncio.wait_for(started[other].wait(), timeout=10)
        return name

    model = ScriptedModel(
        responses=[tool_call_response(("slow", {"name": "a"}), ("slow", {"name": "b"})), "done"]
    )
    runner, sid = await start(LlmAgent(name="x", model=model, tools=[slow]))
    events = await turn(runner, sid)
    assert summarize(events)[1] == (
        "x",
        "response",
        (("slow", (("result", "a"),)), ("slow", (("result", "b"),))),
    )


async def test_blocking_sync_tool_does_not_stall_another_invocation() -> None:
    """Spec "Sync Callbacks/Tools": a blocking sync tool runs in a worker thread; another
    invocation completes on the same loop while it blocks."""
    release = threading.Event()
    entered = threading.Event()

    def blocking() -> str:
        """Blocks until released."""
        entered.set()
        assert release.wait(timeout=10)
        return "unblocked"

    slow_model = ScriptedModel(responses=[tool_call_response(("blocking", {})), "slow done"])
    slow_runner, slow_sid = await start(LlmAgent(name="slow", model=slow_model, tools=[blocking]))
    fast_runner, fast_sid = await start(
        LlmAgent(name="fast", model=ScriptedModel(responses=["fast done"]))
    )

    slow_task = asyncio.create_task(turn(slow_runner, slow_sid))
    assert await asyncio.to_thread(entered.wait, 10)
    fast_events = await turn(fast_runner, fast_sid)
    assert fast_events[-1].text == "fast done"
    assert not slow_task.done()
    release.set()
    assert (await slow_task)[-1].text == "slow done"


async def test_streaming_yields_partials_then_the_final_event() -> None:
    """Spec streaming with partial=True: partial chunks are forwarded, only the final event is
    stored, and the chunks share the final event's id."""
    model = ScriptedModel(responses=["Hello world"], stream_chunk_size=4)
    runner, sid = await start(LlmAgent(name="a", model=model, output_key="answer"))
    events = await turn(runner, sid, run_config=RunConfig(streaming_mode=StreamingMode.SSE))
    assert summarize(events) == [
        ("a", "partial", "Hell"),
        ("a", "partial", "o wo"),
        ("a", "partial", "rld"),
        ("a", "text", "Hello world"),
    ]
    assert len({e.id for e in events}) == 1
    assert all(e.actions.is_empty() for e in events[:-1])
    stored = await stored_events(runner, sid)
    assert [e.text for e in stored] == ["hi", "Hello world"]
    assert stored[-1].actions.state_delta == {"answer": "Hello world"}


async def test_model_is_inherited_from_the_nearest_llm_ancestor() -> None:
    """LlmAgent.model: unset means the nearest LlmAgent ancestor's model."""
    model = ScriptedModel(responses=["ok"])
    child = LlmAgent(name="child")
    LlmAgent(name="parent", model=model, sub_agents=[child])
    assert child.canonical_model is model
    with pytest.raises(ConfigurationError, match="has no model"):
        _ = LlmAgent(name="orphan").canonical_model


async def test_model_name_without_connector_is_a_clear_error() -> None:
    """Bad input: an unknown model name says which names work."""
    with pytest.raises(ConfigurationError, match="No model connector serves 'my-model'"):
        _ = LlmAgent(name="a", model="my-model").canonical_model


async def test_function_tool_object_and_async_tool() -> None:
    """Tools may be FunctionTool instances or async functions; pydantic results are dumped."""
    from pydantic import BaseModel

    class Quote(BaseModel):
        price: float

    async def quote(symbol: str) -> Quote:
        """Price of a stock."""
        return Quote(price=1.5)

    model = ScriptedModel(responses=[tool_call_response(("price", {"symbol": "X"})), "ok"])
    agent = LlmAgent(name="a", model=model, tools=[FunctionTool(quote, name="price")])
    runner, sid = await start(agent)
    events = await turn(runner, sid)
    assert events[1].get_function_responses()[0].response == {"price": 1.5}


async def test_user_message_accepts_genai_content() -> None:
    """Objects from google.genai are accepted as messages (converted by value)."""
    from google.genai import types as genai

    model = ScriptedModel(responses=[text_response("hello")])
    runner, sid = await start(LlmAgent(name="a", model=model))
    await turn(runner, sid, genai.Content(role="user", parts=[genai.Part(text="from genai")]))
    assert model.requests[0].contents == [
        types.Content(role="user", parts=[types.Part(text="from genai")])
    ]


async def test_a_response_field_set_to_a_genai_object_is_converted_in_the_event() -> None:
    """A model may set a response's field after building it (pydantic does not validate
    assignments), here to a google.genai object: the model's event still holds Eventide's
    own record (the flow takes a response's values unvalidated only when each is of its
    field's type), and the session stores it."""
    from collections.abc import AsyncGenerator

    from google.genai import types as genai

    from eventide.models.base_llm import BaseLlm
    from eventide.models.llm_response import LlmResponse

    class SetsAfterwards(BaseLlm):
        model: str = "sets-afterwards"

        async def generate_content_async(
            self, llm_request: LlmRequest, stream: bool = False
        ) -> AsyncGenerator[LlmResponse, None]:
            response = LlmResponse()
            response.content = genai.Content(  # type: ignore[assignment]
                role="model", parts=[genai.Part(text="from genai")]
            )
            yield response

    runner, sid = await start(LlmAgent(name="a", model=SetsAfterwards()))
    events = await turn(runner, sid, "hi")
    assert [type(e.content) for e in events] == [types.Content]
    assert events[0].content == types.Content(role="model", parts=[types.Part(text="from genai")])
    stored = await stored_events(runner, sid)
    assert stored[-1].content == events[0].content


async def test_runner_close_closes_models_resolved_from_names() -> None:
    """Runner.close(): a model client the agent created from a name is closed; a BaseLlm
    instance passed in by the caller is left to the caller."""
    from eventide import LLMRegistry

    closed: list[str] = []

    class Named(ScriptedModel):
        @classmethod
        def supported_models(cls) -> list[str]:
            return [r"closing-test-.*"]

        async def close(self) -> None:
            closed.append(self.model)

    LLMRegistry.register(Named)
    own = Named(model="closing-test-mine", responses=["x"])
    by_name = LlmAgent(name="by_name", model="closing-test-resolved")
    given = LlmAgent(name="given", model=own)
    root = LlmAgent(name="root", model=own, sub_agents=[by_name, given])
    assert isinstance(by_name.canonical_model, Named)
    runner, _ = await start(root)
    await runner.close()
    assert closed == ["closing-test-resolved"]
