"""Building the ``LlmRequest`` of one model call."""

from __future__ import annotations

import copy
import inspect
from typing import get_args

from eventide import types
from eventide._callbacks import NO_HOOKS
from eventide._fastpath import blank, construct_trusted, fields_of
from eventide.contexts import InvocationContext, ReadonlyContext, ToolContext
from eventide.flows.contents import build_contents
from eventide.flows.instructions import fill_placeholders
from eventide.flows.resolved_agent import Instruction, ResolvedAgent
from eventide.flows.transfer import TransferToAgentTool, transfer_instruction
from eventide.models.llm_request import LlmRequest
from eventide.output_schemas import json_schema
from eventide.plugins.base_plugin import BEFORE_MODEL, ON_MODEL_ERROR
from eventide.protocol import SET_MODEL_RESPONSE, TRANSFER_TO_AGENT
from eventide.tools.base_tool import BaseTool
from eventide.tools.client_tool import ClientTool
from eventide.tools.set_model_response_tool import SetModelResponseTool

__all__ = ["build_request", "contents_for"]


async def build_request(agent: ResolvedAgent, ctx: InvocationContext) -> LlmRequest:
    """Instructions, then the conversation, then the tools, for ``agent``'s next call."""
    config = (
        _own_copy(agent.generate_content_config)
        if agent.generate_content_config is not None
        else blank(types.GenerateContentConfig)
    )
    instructions: list[str] = []
    dynamic: list[str] = []
    for instruction in (agent.global_instruction, agent.instruction):
        if not instruction:
            continue
        if isinstance(instruction, str) and "{" not in instruction:
            dynamic.append(instruction)  # no placeholder: no context to make, nothing to await
        else:
            dynamic.append(await _instruction_text(instruction, ReadonlyContext(ctx)))
    inserted = agent.static_instruction is not None and any(dynamic)
    # The runtime's own record of values already of the fields' types (a model name, a
    # config made or copied above, a bool, the conversation's validated contents): built
    # without validating them again.
    request = construct_trusted(
        LlmRequest,
        {
            "model": agent.model.model,
            "config": config,
            "history_unchanged": not inserted
            and _from_contents_cache(agent, ctx)
            and _leaves_contents_alone(agent),
            "contents": contents_for(agent, ctx),
        },
    )
    if agent.static_instruction is not None:
        # As google-adk does: the static instruction alone leads the system instruction (so
        # providers can cache the prefix), and the per-turn instructions travel in the
        # conversation, just before the user's latest message.
        instructions.append(agent.static_instruction)
    else:
        instructions.extend(dynamic)
    if agent.transfer_targets:
        instructions.append(transfer_instruction(agent))
    tools = list(agent.tools)
    if agent.output_schema is not None:
        if tools:
            tools.append(SetModelResponseTool(agent.output_schema))
            instructions.append(
                f"When you have the final answer, call `{SET_MODEL_RESPONSE}` with it; do "
                "not write the answer as text."
            )
        else:
            request.set_output_schema(json_schema(agent.output_schema))
    request.append_instructions(instructions)
    if inserted:
        _insert_turn_instructions(request.contents, "\n\n".join(d for d in dynamic if d))

    if agent.transfer_targets and not any(t.name == TRANSFER_TO_AGENT for t in tools):
        # An agent's own `transfer_to_agent` tool stands in for the flow's (as google-adk's
        # does), rather than being declared to the model twice.
        tools.append(TransferToAgentTool([t.name for t in agent.transfer_targets]))
    declared = ctx.run_config.client_tools
    if declared:
        own = {tool.name for tool in tools}
        tools.extend(ClientTool(d) for d in declared if d.name not in own)
    for processor in (agent.planner, agent.code_executor):
        if processor is not None:
            processor.process_llm_request(request)
    if tools or agent.toolsets:
        tool_context = ToolContext(ctx)
        for toolset in agent.toolsets:
            await toolset.process_llm_request(tool_context=tool_context, llm_request=request)
        for tool in tools:
            await tool.process_llm_request(tool_context=tool_context, llm_request=request)
    return request


def _from_contents_cache(agent: ResolvedAgent, ctx: InvocationContext) -> bool:
    """Whether :func:`contents_for` takes the conversation from the Runner's cache (the same
    Content objects from one call to the next)."""
    return (
        ctx.contents_cache is not None
        and agent.context_limit is None
        and agent.include_contents != "none"
    )


def _leaves_contents_alone(agent: ResolvedAgent) -> bool:
    """Whether nothing that sees this call's request may change its contents in place: no
    model hooks (plugins' included), planner or code executor, and only tools that just
    declare themselves (as the flow's own transfer and structured-answer tools do)."""
    return (
        (agent.hooks is NO_HOOKS or not agent.hooks.has(BEFORE_MODEL, ON_MODEL_ERROR))
        and agent.planner is None
        and agent.code_executor is None
        and all(type(tool).process_llm_request is _DECLARE_ONLY for tool in agent.tools)
        and not agent.toolsets
    )


_DECLARE_ONLY = BaseTool.process_llm_request


def _own_copy(config: types.GenerateContentConfig) -> types.GenerateContentConfig:
    """A copy of the agent's config that this call may change (callbacks and tools add to
    it) without changing the agent's.

    Same result as ``model_copy(deep=True)``, at a third of its cost (about 12 us instead
    of 35 us a call): of a config's many fields most are None or scalars, which need no
    copy; only the others (tools, tool config, dicts) are deep-copied.
    """
    copied = config.model_copy()
    fields = fields_of(copied)
    for name in _fields_to_copy(type(config)):
        value = fields[name]
        if value is None or isinstance(value, _SCALARS):
            continue
        if not value and type(value) in _CONTAINERS:
            # An empty dict or list (``extra`` is one on most configs): a new one, without
            # deepcopy's memo and dispatch.
            fields[name] = type(value)()
        else:
            fields[name] = copy.deepcopy(value)
    return copied


_SCALARS = (str, int, float, bool)
_CONTAINERS = (dict, list)
_copied_fields: dict[type[types.GenerateContentConfig], tuple[str, ...]] = {}


def _fields_to_copy(cls: type[types.GenerateContentConfig]) -> tuple[str, ...]:
    """The fields of a config class that may hold something mutable: all but those declared
    as scalars (``float | None``...), which most of a config's many fields are."""
    names = _copied_fields.get(cls)
    if names is None:
        names = _copied_fields[cls] = tuple(
            name
            for name, info in cls.model_fields.items()
            if not all(
                arg in _SCALAR_TYPES for arg in get_args(info.annotation) or (info.annotation,)
            )
        )
    return names


_SCALAR_TYPES = frozenset({str, int, float, bool, type(None)})


def _insert_turn_instructions(contents: list[types.Content], text: str) -> None:
    """Put the turn's instructions, marked as coming from the system, before the user's
    latest message (at the end when there is none)."""
    note = types.Content(
        role="user",
        parts=[
            types.Part(
                text="Instructions from the system for this turn (not written by the user):\n"
                + text
            )
        ],
    )
    for index in range(len(contents) - 1, -1, -1):
        content = contents[index]
        if content.role == "user" and any(p.text for p in content.parts or ()):
            contents.insert(index, note)
            return
    contents.append(note)


def contents_for(agent: ResolvedAgent, ctx: InvocationContext) -> list[types.Content]:
    """The conversation ``agent`` sends to its model now (see ``include_contents`` and
    ``context_limit``)."""
    events = ctx.session.events
    cache = ctx.contents_cache
    if agent.context_limit is not None and agent.include_contents != "none":
        from eventide.history.context_limits import limited_contents
        from eventide.history.model_view import model_view

        view = cache.view(ctx.session.id, events) if cache is not None else model_view(events)
        return limited_contents(view, agent.context_limit, agent_name=agent.name, branch=ctx.branch)
    if agent.include_contents == "none" or cache is None:
        return build_contents(
            events,
            agent_name=agent.name,
            branch=ctx.branch,
            current_turn_only=agent.include_contents == "none",
        )
    return cache.contents(ctx.session.id, events, agent_name=agent.name, branch=ctx.branch)


async def _instruction_text(instruction: Instruction, context: ReadonlyContext) -> str:
    """A template's text with its placeholders filled, or a provider's text as it is."""
    if isinstance(instruction, str):
        return await fill_placeholders(instruction, context)
    text = instruction(context)
    if inspect.isawaitable(text):
        text = await text
    return str(text)
