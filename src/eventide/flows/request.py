"""Building the ``LlmRequest`` of one model call."""

from __future__ import annotations

import inspect

from eventide import types
from eventide.contexts import InvocationContext, ReadonlyContext, ToolContext
from eventide.flows.contents import build_contents
from eventide.flows.instructions import fill_placeholders
from eventide.flows.resolved_agent import Instruction, ResolvedAgent
from eventide.flows.transfer import TransferToAgentTool, transfer_instruction
from eventide.models.llm_request import LlmRequest
from eventide.protocol import SET_MODEL_RESPONSE
from eventide.tools.set_model_response_tool import SetModelResponseTool

__all__ = ["build_request", "contents_for"]


async def build_request(agent: ResolvedAgent, ctx: InvocationContext) -> LlmRequest:
    """Instructions, then the conversation, then the tools, for ``agent``'s next call."""
    readonly = ReadonlyContext(ctx)
    config = (
        agent.generate_content_config.model_copy(deep=True)
        if agent.generate_content_config is not None
        else types.GenerateContentConfig()
    )
    request = LlmRequest(model=agent.model.model, config=config)

    instructions: list[str] = []
    if agent.static_instruction is not None:
        instructions.append(agent.static_instruction)
    if agent.global_instruction:
        instructions.append(await _instruction_text(agent.global_instruction, readonly))
    if agent.instruction:
        instructions.append(await _instruction_text(agent.instruction, readonly))
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
            request.set_output_schema(agent.output_schema.model_json_schema())
    request.append_instructions(instructions)

    request.contents = contents_for(agent, ctx)

    if agent.transfer_targets:
        tools.append(TransferToAgentTool([t.name for t in agent.transfer_targets]))
    for processor in (agent.planner, agent.code_executor):
        if processor is not None:
            processor.process_llm_request(request)
    if tools:
        tool_context = ToolContext(ctx)
        for tool in tools:
            await tool.process_llm_request(tool_context=tool_context, llm_request=request)
    return request


def contents_for(agent: ResolvedAgent, ctx: InvocationContext) -> list[types.Content]:
    """The conversation ``agent`` sends to its model now (see ``include_contents``)."""
    events = ctx.session.events
    cache = ctx.contents_cache
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
