"""The LLM agent's loop: call the model, yield its events, run the tools, repeat until a
final answer (or a transfer, or a pause for the user).

The flow reads the agent only through its :class:`ResolvedAgent` record. A transfer runs
the target agent inside the step that made it (through ``ResolvedAgent.run_agent``), so the
target's events pass up through the transferring agent's generator, as google-adk does.
"""

from __future__ import annotations

import json
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable
from typing import Any

import pydantic

from eventide import types
from eventide._callbacks import NO_HOOKS, first_result, only_observes
from eventide._fastpath import blank, construct_trusted, fields_of
from eventide._ids import new_id
from eventide.contexts import CallbackContext, InvocationContext
from eventide.errors import AgentNotFoundError
from eventide.events import Event, EventActions
from eventide.flows.pause import pause_requests
from eventide.flows.recorded_calls import ToolResponses, run_calls_recorded
from eventide.flows.request import build_request
from eventide.flows.resolved_agent import ResolvedAgent
from eventide.flows.resume import needs_resume, resume_paused_calls
from eventide.flows.task_delegation import (
    delegates,
    finishes_task,
    is_delegation,
    note_task_output,
    pending_delegation,
    run_delegation,
    undispatched_delegation,
)
from eventide.flows.tool_dispatch import run_function_calls
from eventide.models.llm_request import LlmRequest
from eventide.models.llm_response import LlmResponse
from eventide.output_schemas import is_model, parse_answer, schema_name
from eventide.plugins.base_plugin import AFTER_MODEL, BEFORE_MODEL, ON_MODEL_ERROR
from eventide.protocol import FINISH_TASK, SET_MODEL_RESPONSE
from eventide.run_config import StreamingMode
from eventide.runtime.replay import end_marker, ends_at_transfer

__all__ = ["FlowStep", "after_tool_responses", "run_llm_flow", "wait_for_answers"]


class FlowStep:
    """What one step decided: whether the agent's turn is over."""

    __slots__ = ("done", "last")

    def __init__(self) -> None:
        self.done = False
        self.last: Event | None = None


async def run_llm_flow(
    resolve: Awaitable[ResolvedAgent],
    ctx: InvocationContext,
    *,
    answer_paused_calls: bool = True,
) -> AsyncGenerator[Event, None]:
    """Run the agent ``resolve`` gives until it answers, transfers, or pauses for the user.

    ``resolve`` is awaited once, when the flow starts: the agent is resolved per run.
    ``answer_paused_calls=False`` starts at the next model call even when the user's message
    answers paused tool calls (a resumed invocation whose answers were already committed).
    """
    agent = await resolve
    if answer_paused_calls and needs_resume(ctx):
        async for event in resume_paused_calls(agent, ctx):
            yield event
        if ctx.end_invocation:
            return
    if agent.tools and delegates(agent):
        # A task this agent delegated waits for the user's reply: it goes on first.
        pending = pending_delegation(ctx, agent.name)
        start = False
        if pending is None:
            # Or a task it delegated never started (the turn stopped first): it starts now.
            found = undispatched_delegation(ctx, agent)
            if found is not None:
                pending, requested = found
                start = not requested
        if pending is not None:
            async for event in run_delegation(agent, ctx, pending, start=start):
                yield event
            if ctx.end_invocation:
                return
    abort = ctx.abort_state
    while True:
        if abort.armed and abort.is_set:  # no further model call (the Runner seals it)
            return
        # One step: a model call, then the tools it called. The model call is made here,
        # not in a generator of its own: one layer less for every event of the turn.
        step = FlowStep()
        request = await build_request(agent, ctx)
        # What the model callbacks record for the model's event: a blank record, not an
        # empty input validated.
        actions = blank(EventActions)
        event_id = new_id()
        final: Event | None = None
        async for response in _model_responses(agent, ctx, actions, request):
            event = _to_event(agent, ctx, response, event_id, actions)
            if not event.partial:
                _finish_model_event(agent, event, request)
                final = event
            step.last = event
            yield event
        if final is not None and not (abort.armed and abort.is_set):
            calls = final.get_function_calls()
            if calls:
                async for event in _run_tools(agent, ctx, step, request, final, calls):
                    step.last = event
                    yield event
        last = step.last
        if step.done or ctx.end_invocation or last is None or last.is_final_response():
            return


async def _run_tools(
    agent: ResolvedAgent,
    ctx: InvocationContext,
    step: FlowStep,
    request: LlmRequest,
    final: Event,
    calls: list[types.FunctionCall],
) -> AsyncGenerator[Event, None]:
    """Run the calls of the model's event ``final``; what follows their answers."""
    tools = request.tools_dict
    delegated = [call for call in calls if is_delegation(call, tools)]
    if delegated:
        async for event in _delegate(agent, ctx, step, calls, delegated, tools):
            yield event
        return
    if ctx.resumable and len(calls) > 1:
        # Each call is committed as it finishes: a crash re-runs only the unfinished ones.
        responses = ToolResponses()
        async for record in run_calls_recorded(agent, ctx, calls, request.tools_dict, responses):
            yield record
        assert responses.event is not None
        response_event = responses.event
    else:
        response_event = await run_function_calls(agent, ctx, calls, request.tools_dict)
    if not response_event.get_function_responses() and final.long_running_tool_ids:
        # Only long-running tools without an initial result: wait for the user's answer.
        async for event in wait_for_answers(ctx, step, response_event):
            yield event
        return
    if any(call.name == FINISH_TASK for call in calls):
        note_task_output(response_event, calls)
    yield response_event
    async for event in after_tool_responses(agent, ctx, step, final, response_event, calls):
        yield event


async def _delegate(
    agent: ResolvedAgent,
    ctx: InvocationContext,
    step: FlowStep,
    calls: list[types.FunctionCall],
    delegated: list[types.FunctionCall],
    tools: dict[str, Any],
) -> AsyncGenerator[Event, None]:
    """Run calls that delegate to task agents (after the model's other calls, if any)."""
    others = [call for call in calls if call not in delegated]
    if others:
        yield await run_function_calls(agent, ctx, others, tools)
    for call in delegated:
        async for event in run_delegation(agent, ctx, call, start=True):
            yield event
        if ctx.end_invocation:  # the task agent waits for the user
            step.done = True
            return


async def wait_for_answers(
    ctx: InvocationContext, step: FlowStep, response_event: Event
) -> AsyncGenerator[Event, None]:
    """End the invocation to wait for long-running tools' results (none came back now).

    The response event has no content; it is committed when it carries the tools' actions,
    or (in a resumable invocation) the record that the calls ran and wait.
    """
    if not response_event.actions.is_empty() or response_event.custom_metadata:
        response_event.content = None
        yield response_event
    ctx.end_invocation = True
    step.done = True


async def after_tool_responses(
    agent: ResolvedAgent,
    ctx: InvocationContext,
    step: FlowStep,
    model_event: Event | None,
    response_event: Event,
    calls: list[types.FunctionCall],
) -> AsyncGenerator[Event, None]:
    """After the tools answered: pause for the user, transfer, a structured answer, or the
    end of a task."""
    if finishes_task(response_event):
        step.done = True
        return
    for pause_event in pause_requests(agent, ctx, response_event, calls):
        yield pause_event
        step.done = True
    if step.done:
        # Waiting for the user (a confirmation, a credential). A long-running tool's initial
        # result goes to the model like any other (it may answer in the same turn), as in
        # google-adk; the real result arrives later in a user message.
        ctx.end_invocation = True
        step.done = True
        return
    target_name = response_event.actions.transfer_to_agent
    if target_name:
        target_events = agent.run_agent(target_name, ctx)
        if target_events is None:
            raise AgentNotFoundError(
                f"Agent {agent.name!r} was asked to transfer to {target_name!r} (by "
                "actions.transfer_to_agent), but the agent tree has no agent by that name. "
                "Set it to the name of an agent of the tree.",
                agent_name=target_name,
            )
        step.done = True
        if ctx.resumable and ends_at_transfer(ctx.agent):
            # The agent's turn ends with the transfer (google-adk's marker, before the target's
            # events); resuming reads its transfer first and continues the target.
            yield end_marker(agent.name, ctx, None, top=False)
        async for event in target_events:
            yield event
        return
    answer = _structured_answer(agent, response_event)
    if answer is not None:
        step.done = True
        yield _final_text_event(agent, ctx, answer)


def _model_responses(
    agent: ResolvedAgent,
    ctx: InvocationContext,
    actions: EventActions,
    request: LlmRequest,
) -> AsyncIterator[LlmResponse]:
    """The model's responses after the before/after/error model callbacks (``actions``: what
    the callbacks' context records, for the model's event)."""
    hooks = agent.hooks
    if hooks is NO_HOOKS or not hooks.has(BEFORE_MODEL, AFTER_MODEL, ON_MODEL_ERROR):
        # No model hooks: the model's own generator, not one more layer around it (and no
        # callback context to build).
        ctx.increment_llm_call_count()
        stream = ctx.run_config.streaming_mode is StreamingMode.SSE
        return agent.model.generate_content_async(request, stream=stream)
    return _hooked_model_responses(agent, ctx, CallbackContext(ctx, event_actions=actions), request)


async def _hooked_model_responses(
    agent: ResolvedAgent,
    ctx: InvocationContext,
    callback_context: CallbackContext,
    request: LlmRequest,
) -> AsyncGenerator[LlmResponse, None]:
    """The model's responses after the before/after/error model callbacks."""
    hooks = agent.hooks
    before = hooks[BEFORE_MODEL]
    if before:
        short_circuit = await first_result(before, callback_context, request)
        if short_circuit is not None:
            yield short_circuit
            return
    ctx.increment_llm_call_count()
    stream = ctx.run_config.streaming_mode is StreamingMode.SSE
    after = hooks[AFTER_MODEL]
    try:
        async for response in agent.model.generate_content_async(request, stream=stream):
            if after:
                replaced = await first_result(after, callback_context, response)
                if replaced is not None:
                    response = replaced
            yield response
    except Exception as error:
        recovered = await first_result(hooks[ON_MODEL_ERROR], callback_context, request, error)
        if recovered is None:
            raise
        replaced = await first_result(after, callback_context, recovered)
        yield replaced if replaced is not None else recovered


def _to_event(
    agent: ResolvedAgent,
    ctx: InvocationContext,
    response: LlmResponse,
    event_id: str,
    actions: EventActions,
) -> Event:
    # A response's __dict__ holds its fields (and, after set_error, the error behind them):
    # one pass, no getattr per field. The connector's own response, not replaced by a hook,
    # holds values of its fields' types, and the event takes them as they are; a value of
    # another type (a model may set a field to a google.genai object after the response
    # was built: pydantic does not validate assignments) sends the event through validation.
    fields: dict[str, Any] = {}
    trusted = type(response) is LlmResponse and (
        agent.hooks is NO_HOOKS or only_observes(agent.hooks[AFTER_MODEL])
    )
    for name, value in fields_of(response).items():
        if value is not None and name in _RESPONSE_FIELDS:
            fields[name] = value
            if type(value) not in _FIELD_TYPES:
                trusted = False
    fields["id"] = event_id
    fields["invocation_id"] = ctx.invocation_id
    fields["author"] = agent.name
    fields["branch"] = ctx.branch
    # Partial chunks never carry actions: they are not committed.
    fields["actions"] = construct_trusted(EventActions, {}) if response.partial else actions
    if trusted:
        return construct_trusted(Event, fields)
    return Event(**fields)


_RESPONSE_FIELDS = frozenset(LlmResponse.model_fields)
_FIELD_TYPES = frozenset(
    {str, bool, dict, types.Content, types.UsageMetadata, types.GroundingMetadata}
)
"""The types an ``LlmResponse`` field's value has once validated."""


def _finish_model_event(agent: ResolvedAgent, event: Event, request: LlmRequest) -> None:
    """Let the planner shape the parts, give calls ids, mark long-running calls, and store
    the answer under ``output_key``."""
    planner = agent.planner
    if planner is not None and event.content is not None and event.content.parts:
        parts = planner.process_response_parts(event.content.parts)
        event.content = event.content.model_copy(update={"parts": parts})
    calls = event.get_function_calls()
    if calls:
        if not all(call.id for call in calls):
            # Give calls ids on copies of just the parts that need one: the response object
            # belongs to the model connector (a fake model may play it again).
            content = event.content
            assert content is not None and content.parts is not None
            parts = [
                part.model_copy(
                    update={
                        "function_call": part.function_call.model_copy(
                            update={"id": f"call-{new_id()}"}
                        )
                    }
                )
                if part.function_call is not None and not part.function_call.id
                else part
                for part in content.parts
            ]
            event.content = content.model_copy(update={"parts": parts})
            calls = event.get_function_calls()
        long_running: set[str] = set()
        for call in calls:
            tool = request.tools_dict.get(call.name or "")
            if tool is not None and tool.is_long_running and call.id:
                long_running.add(call.id)
        if long_running:
            event.long_running_tool_ids = long_running
        return
    if not agent.output_key and agent.output_schema is None:
        return  # nothing to check or store: the answer's text is not needed
    if event.error_code or not event.is_final_response() or event.content is None:
        return
    text = event.content.text
    if text is None:
        return
    value: Any = text
    if agent.output_schema is not None:
        try:
            # None fields are left out, as google-adk stores them.
            value = parse_answer(agent.output_schema, text)
        except pydantic.ValidationError as exc:
            event.error_code = "OUTPUT_SCHEMA_MISMATCH"
            event.error_message = (
                f"Agent {agent.name!r}: the model's answer does not match output_schema "
                f"{schema_name(agent.output_schema)}: {exc.errors(include_url=False)}"
            )
            return
    if agent.output_key:
        event.actions.state_delta[agent.output_key] = value


def _structured_answer(agent: ResolvedAgent, response_event: Event) -> Any | None:
    for response in response_event.get_function_responses():
        if response.name == SET_MODEL_RESPONSE and response.response is not None:
            if "error" not in response.response:
                if is_model(agent.output_schema):
                    return response.response
                # Another schema's answer (a list, ...) came back as {"result": answer}.
                return response.response.get("result", response.response)
    return None


def _final_text_event(agent: ResolvedAgent, ctx: InvocationContext, answer: Any) -> Event:
    text = json.dumps(answer)
    actions = EventActions()
    if agent.output_key:
        actions.state_delta[agent.output_key] = answer
    return Event(
        invocation_id=ctx.invocation_id,
        author=agent.name,
        branch=ctx.branch,
        content=types.Content(role="model", parts=[types.Part(text=text)]),
        actions=actions,
    )
