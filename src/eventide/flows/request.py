"""Building the ``LlmRequest`` of one model call."""

from __future__ import annotations

from typing import TYPE_CHECKING

from eventide import types
from eventide.contexts import InvocationContext, ReadonlyContext, ToolContext
from eventide.flows.instructions import fill_placeholders
from eventide.flows.transfer import TransferToAgentTool, transfer_instruction, transfer_targets
from eventide.models.llm_request import LlmRequest
from eventide.tools.set_model_response_tool import SET_MODEL_RESPONSE, SetModelResponseTool

if TYPE_CHECKING:
    from eventide.agents.llm_agent import LlmAgent

__all__ = ["build_request"]


async def build_request(agent: LlmAgent, ctx: InvocationContext) -> LlmRequest:
    """Instructions, then the conversation, then the tools, for ``agent``'s next call."""
    from eventide.agents.llm_agent import LlmAgent

    readonly = ReadonlyContext(ctx)
    config = (
        agent.generate_content_config.model_copy(deep=True)
        if agent.generate_content_config is not None
        else types.GenerateContentConfig()
    )
    request = LlmRequest(model=agent.canonical_model.model, config=config)

    instructions: list[str] = []
    if agent.static_instruction is not None:
        static = agent.static_instruction
        instructions.append(static if isinstance(static, str) else static.text or "")
    root = agent.root_agent
    if isinstance(root, LlmAgent) and root.global_instruction:
        text, fill = await root.canonical_global_instruction(readonly)
        instructions.append(await fill_placeholders(text, readonly) if fill else text)
    if agent.instruction:
        text, fill = await agent.canonical_instruction(readonly)
        instructions.append(await fill_placeholders(text, readonly) if fill else text)
    targets = transfer_targets(agent)
    if targets:
        instructions.append(transfer_instruction(agent, targets))
    tools = await agent.canonical_tools(readonly)
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

    request.contents = agent.contents_for(ctx)

    if targets:
        tools.append(TransferToAgentTool([t.name for t in targets]))
    for processor in (agent.planner, agent.code_executor):
        if processor is not None:
            processor.process_llm_request(request)
    if tools:
        tool_context = ToolContext(ctx)
        for tool in tools:
            await tool.process_llm_request(tool_context=tool_context, llm_request=request)
    return request
