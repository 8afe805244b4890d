"""LlmAgent features: instructions, output handling, history modes, pause and resume."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import BaseModel

from eventide import (
    LlmAgent,
    LongRunningFunctionTool,
    ReadonlyContext,
    ToolContext,
    types,
)
from eventide.errors import UsageError
from eventide.testing import FunctionModel, ScriptedModel, tool_call_response
from tests.agents.llm_helpers import start, stored_events, turn
from tests.event_summary import summarize


async def test_instruction_placeholders_from_state_and_artifacts() -> None:
    """Issue 3: {key}, {key?}, {app:key}, {user:key}, {artifact.name} are filled; text in
    braces that is not a placeholder name stays as is."""
    model = ScriptedModel(responses=["ok"])
    agent = LlmAgent(
        name="a",
        model=model,
        instruction=(
            "Hello {name}. Tier {user:tier}. Banner {app:banner}. Nick '{nickname?}'. "
            'Policy: {artifact.policy.txt}. JSON {"k": 1} stays.'
        ),
    )
    runner, sid = await start(agent)
    assert runner.artifact_service is not None
    await runner.artifact_service.save_artifact(
        app_name="app", user_id="u", session_id=sid, filename="policy.txt",
        artifact=types.Part(text="no refunds"),
    )  # fmt: skip
    await turn(runner, sid, state_delta={"name": "Ada", "user:tier": "gold", "app:banner": "Sale"})
    assert model.requests[0].config.system_instruction == (
        "Hello Ada. Tier gold. Banner Sale. Nick ''. Policy: no refunds. JSON {\"k\": 1} stays."
    )


async def test_missing_required_placeholder_is_a_clear_error() -> None:
    """Bad input: {key} with no such state key names the key and the {key?} alternative."""
    agent = LlmAgent(name="a", model=ScriptedModel(responses=["x"]), instruction="Hi {who}")
    runner, sid = await start(agent)
    with pytest.raises(UsageError, match=r"'who'.*\{who\?\}"):
        await turn(runner, sid)


async def test_callable_instruction_and_global_instruction() -> None:
    """Issue 3: an instruction may be a callable given a ReadonlyContext (no placeholder
    filling); the root's global_instruction comes first for every agent."""

    def dynamic(ctx: ReadonlyContext) -> str:
        return f"You are {ctx.agent_name}; literal {{braces}} kept."

    model = ScriptedModel(responses=["ok"])
    child = LlmAgent(name="child", model=model, instruction=dynamic)
    root = LlmAgent(
        name="root",
        model=ScriptedModel(),
        global_instruction="Be kind.",
        sub_agents=[child],
    )
    # Talk to the child directly: the last agent that answered keeps the conversation.
    runner, sid = await start(root)
    runner.agent = root
    from eventide import Event

    await runner.session_service.append_event(
        (await runner.session_service.get_session(app_name="app", user_id="u", session_id=sid)),  # type: ignore[arg-type]
        Event(author="child", content=types.Content(role="model", parts=[types.Part(text="hi")])),
    )
    await turn(runner, sid)
    instruction = model.requests[0].config.system_instruction or ""
    assert instruction.startswith("Be kind.\n\nYou are child; literal {braces} kept.")


async def test_output_key_saves_the_final_text_through_state_delta() -> None:
    """Issue 3: output_key stores the final answer via the final event's state_delta."""
    runner, sid = await start(
        LlmAgent(name="a", model=ScriptedModel(responses=["42"]), output_key="answer")
    )
    events = await turn(runner, sid)
    assert events[-1].actions.state_delta == {"answer": "42"}
    session = await runner.session_service.get_session(app_name="app", user_id="u", session_id=sid)
    assert session is not None and session.state["answer"] == "42"


class Verdict(BaseModel):
    approved: bool
    reason: str


async def test_output_schema_without_tools() -> None:
    """Issue 3: output_schema asks for JSON with the schema and validates the answer; the
    parsed value goes to output_key."""
    model = ScriptedModel(responses=['{"approved": true, "reason": "fine"}'])
    agent = LlmAgent(name="a", model=model, output_schema=Verdict, output_key="verdict")
    runner, sid = await start(agent)
    events = await turn(runner, sid)
    config = model.requests[0].config
    assert config.response_mime_type == "application/json"
    assert config.response_json_schema is not None
    assert config.response_json_schema["required"] == ["approved", "reason"]
    assert events[-1].actions.state_delta == {"verdict": {"approved": True, "reason": "fine"}}


async def test_output_schema_mismatch_is_an_error_event() -> None:
    """Bad input from the model: an answer that does not match output_schema becomes an
    error event naming the schema; output_key is not written."""
    model = ScriptedModel(responses=['{"approved": "maybe"}'])
    agent = LlmAgent(name="a", model=model, output_schema=Verdict, output_key="verdict")
    runner, sid = await start(agent)
    events = await turn(runner, sid)
    assert events[-1].error_code == "OUTPUT_SCHEMA_MISMATCH"
    assert "Verdict" in (events[-1].error_message or "")
    assert events[-1].actions.state_delta == {}


async def test_output_schema_with_tools_uses_set_model_response() -> None:
    """Issue 3: with tools, the structured answer arrives through set_model_response; the
    flow validates it and ends with a JSON text event."""

    def check(item: str) -> str:
        """Check an item."""
        return "ok"

    model = ScriptedModel(
        responses=[
            tool_call_response(("check", {"item": "x"})),
            tool_call_response(("set_model_response", {"approved": "nope"})),
            tool_call_response(("set_model_response", {"approved": True, "reason": "checked"})),
        ]
    )
    agent = LlmAgent(
        name="a", model=model, tools=[check], output_schema=Verdict, output_key="verdict"
    )
    runner, sid = await start(agent)
    events = await turn(runner, sid)
    kinds = [k for _, k, _ in summarize(events)]
    assert kinds == ["call", "response", "call", "response", "call", "response", "text"]
    retry = events[3].get_function_responses()[0].response
    assert retry is not None and "does not match the required schema" in retry["error"]
    assert events[-1].text == '{"approved": true, "reason": "checked"}'
    assert events[-1].actions.state_delta == {"verdict": {"approved": True, "reason": "checked"}}
    assert model.requests[0].config.response_json_schema is None
    assert "set_model_response" in model.requests[0].tools_dict


async def test_include_contents_none_sends_only_the_current_turn() -> None:
    """Issue 3: include_contents='none' leaves earlier turns out of the request."""
    model = ScriptedModel(responses=["first", "second"])
    runner, sid = await start(LlmAgent(name="a", model=model, include_contents="none"))
    await turn(runner, sid, "one")
    await turn(runner, sid, "two")
    assert [c.text for c in model.requests[1].contents] == ["two"]
    default_model = ScriptedModel(responses=["first", "second"])
    runner, sid = await start(LlmAgent(name="a", model=default_model))
    await turn(runner, sid, "one")
    await turn(runner, sid, "two")
    assert [c.text for c in default_model.requests[1].contents] == ["one", "first", "two"]


async def test_long_running_tool_answers_at_once_and_resumes_with_the_real_result() -> None:
    """Spec is_final_response rule 2 and issue 14 (google-adk's behaviour): a long-running
    tool's call is final and its id is in long_running_tool_ids; its initial result goes to
    the model, which answers in the same turn; a later user message carrying the real result
    continues the agent, which sees that result in place of the pending one."""

    def request_approval(amount: int) -> dict[str, Any]:
        """Ask a manager to approve a refund."""
        return {"status": "pending", "ticket": "T-1"}

    model = ScriptedModel(
        responses=[
            tool_call_response(("request_approval", {"amount": 50})),
            "Waiting for approval.",
            "Refund approved.",
        ]
    )
    agent = LlmAgent(name="a", model=model, tools=[LongRunningFunctionTool(request_approval)])
    runner, sid = await start(agent)
    first = await turn(runner, sid, "refund me")
    call = first[0].get_function_calls()[0]
    assert first[0].long_running_tool_ids == {call.id}
    assert first[0].is_final_response()
    assert summarize(first)[1:] == [
        ("a", "response", (("request_approval", (("status", "pending"), ("ticket", "T-1"))),)),
        ("a", "text", "Waiting for approval."),
    ]

    update = types.Content(
        role="user",
        parts=[
            types.Part(
                function_response=types.FunctionResponse(
                    id=call.id, name="request_approval", response={"status": "approved"}
                )
            )
        ],
    )
    second = await turn(runner, sid, update)
    assert summarize(second) == [("a", "text", "Refund approved.")]
    history = model.requests[2].contents
    responses = [p.function_response for c in history for p in c.parts or () if p.function_response]
    assert [r.response for r in responses] == [{"status": "approved"}], "latest answer used"


async def test_long_running_tool_without_initial_result_waits_for_the_user() -> None:
    """Issue 14 (google-adk's behaviour): a long-running tool that returns None sends no
    response; the invocation ends after the call, and the user's later function response
    continues the agent."""

    def start_job(size: int) -> None:
        """Start a batch job."""

    model = ScriptedModel(
        responses=[tool_call_response(("start_job", {"size": 3})), "The job finished."]
    )
    agent = LlmAgent(name="a", model=model, tools=[LongRunningFunctionTool(start_job)])
    runner, sid = await start(agent)
    first = await turn(runner, sid, "run it")
    assert [kind for _, kind, _ in summarize(first)] == ["call"]
    assert model.calls == 1
    call = first[0].get_function_calls()[0]
    done = types.Content(
        role="user",
        parts=[
            types.Part(
                function_response=types.FunctionResponse(
                    id=call.id, name="start_job", response={"status": "done"}
                )
            )
        ],
    )
    second = await turn(runner, sid, done)
    assert summarize(second) == [("a", "text", "The job finished.")]


def _delete_account(user: str, tool_context: ToolContext) -> str:
    """Delete a user's account."""
    tool_context.state["deleted"] = user
    return f"deleted {user}"


async def _confirmation_turns(confirmed: bool) -> tuple[list[Any], list[Any], ScriptedModel]:
    from eventide import FunctionTool

    model = ScriptedModel(
        responses=[tool_call_response(("_delete_account", {"user": "bob"})), "Done."]
    )
    tool = FunctionTool(_delete_account, require_confirmation=True)
    runner, sid = await start(LlmAgent(name="a", model=model, tools=[tool]))
    first = await turn(runner, sid, "delete bob")
    assert model.calls == 1, "paused for confirmation: the model was not called again"
    request = first[-1].get_function_calls()[0]
    answer = types.Content(
        role="user",
        parts=[
            types.Part(
                function_response=types.FunctionResponse(
                    id=request.id, name=request.name, response={"confirmed": confirmed}
                )
            )
        ],
    )
    second = await turn(runner, sid, answer)
    return first, second, model


async def test_tool_confirmation_approved() -> None:
    """Issue 3 human in the loop: a tool requiring confirmation pauses the invocation with a
    confirmation request; approving it runs the tool and the agent continues."""
    first, second, model = await _confirmation_turns(True)
    assert [k for _, k, _ in summarize(first)] == ["call", "response", "call"]
    request = first[-1].get_function_calls()[0]
    assert request.name == "eventide_request_confirmation"
    assert first[-1].long_running_tool_ids == {request.id} and first[-1].is_final_response()
    assert first[1].actions.requested_tool_confirmations
    assert summarize(second) == [
        ("a", "response", (("_delete_account", (("result", "deleted bob"),)),)),
        ("a", "text", "Done."),
    ]
    assert second[0].actions.state_delta == {"deleted": "bob"}
    # The model's history pairs the call with the final (confirmed) result only.
    history = model.requests[1].contents
    names = [
        (p.function_call or p.function_response).name  # type: ignore[union-attr]
        for c in history
        for p in c.parts or ()
        if p.function_call or p.function_response
    ]
    assert names == ["_delete_account", "_delete_account"]


async def test_tool_confirmation_declined() -> None:
    """Issue 3 human in the loop: declining answers the call with an error; the tool never
    runs."""
    _, second, _ = await _confirmation_turns(False)
    response = second[0].get_function_responses()[0].response
    assert response == {"error": "The user declined this tool call; it was not run."}
    assert second[0].actions.state_delta == {}


async def test_request_confirmation_from_inside_a_tool() -> None:
    """Issue 3: a tool may call tool_context.request_confirmation(hint=, payload=) itself; on
    resume it sees the user's answer in tool_context.tool_confirmation."""
    seen: list[Any] = []

    def transfer_money(amount: int, tool_context: ToolContext) -> str:
        """Move money."""
        if tool_context.tool_confirmation is None:
            if amount > 100:
                tool_context.request_confirmation(hint="Large transfer", payload={"limit": 100})
                return "needs approval"
            return "sent"
        seen.append(tool_context.tool_confirmation.payload)
        return "sent after approval" if tool_context.tool_confirmation.confirmed else "cancelled"

    model = ScriptedModel(responses=[tool_call_response(("transfer_money", {"amount": 500})), "ok"])
    runner, sid = await start(LlmAgent(name="a", model=model, tools=[transfer_money]))
    first = await turn(runner, sid)
    request = first[-1].get_function_calls()[0]
    assert request.args is not None
    assert request.args["toolConfirmation"]["hint"] == "Large transfer"
    answer = types.Part(
        function_response=types.FunctionResponse(
            id=request.id, name=request.name, response={"confirmed": True, "payload": {"ok": 1}}
        )
    )
    second = await turn(runner, sid, types.Content(role="user", parts=[answer]))
    assert second[0].get_function_responses()[0].response == {"result": "sent after approval"}
    assert seen == [{"ok": 1}]


async def test_function_model_decides_from_the_request() -> None:
    """eventide.testing.FunctionModel: a function computes each answer from the request."""

    def echo(request: Any) -> str:
        return f"you said {request.contents[-1].text}"

    runner, sid = await start(LlmAgent(name="a", model=FunctionModel(function=echo)))
    events = await turn(runner, sid, "ping")
    assert events[-1].text == "you said ping"


async def test_scripted_model_fails_loudly_when_exhausted() -> None:
    """eventide.testing.ScriptedModel: running out of script is a clear failure."""
    from eventide.testing import ScriptExhaustedError

    runner, sid = await start(LlmAgent(name="a", model=ScriptedModel(responses=[])))
    with pytest.raises(ScriptExhaustedError, match="only 0 responses"):
        await turn(runner, sid)
    assert await stored_events(runner, sid)
