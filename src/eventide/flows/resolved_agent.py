"""``ResolvedAgent``: everything the LLM flow needs from an agent, resolved once per run.

The agent layer (``LlmAgent``) builds one of these each time the agent runs in an
invocation; the flow reads only this record and never the agent definition, so ``flows/``
does not depend on ``agents/``. Each model and tool hook is one chain in ``hooks``, plugins
first and then the agent's own callbacks, each entry taking the hook's typed, positional
arguments; the first non-None result of a chain wins
(:func:`eventide._callbacks.first_result`).
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Literal

from eventide import types
from eventide._callbacks import NO_HOOKS, HookChains
from eventide.code_executors import BaseCodeExecutor
from eventide.contexts import InvocationContext, ReadonlyContext
from eventide.events import Event
from eventide.history.context_limits import ContextLimit
from eventide.models.base_llm import BaseLlm
from eventide.planners import BasePlanner
from eventide.tools.base_tool import BaseTool
from eventide.tools.base_toolset import BaseToolset

__all__ = ["Instruction", "ResolvedAgent", "TransferTarget"]

Instruction = str | Callable[[ReadonlyContext], str | Awaitable[str]]
"""A template (placeholders filled from state and artifacts) or a provider (used as is)."""


@dataclass(frozen=True, slots=True)
class TransferTarget:
    """An agent the model may hand the conversation to."""

    name: str
    description: str


@dataclass(slots=True, kw_only=True, eq=False)
class ResolvedAgent:
    """An ``LlmAgent`` as one run of it sees it (see the module docstring).

    Read-only by convention: built once per run, then only read. Not a frozen dataclass,
    whose ``__init__`` sets each of these fields through ``object.__setattr__`` (about two
    microseconds per agent run on the benchmarks' plain turn).

    Attributes:
        name: the agent's name (the author of its events).
        description: what it does (told to the model when it may transfer).
        model: the model it calls (its own or the nearest ``LlmAgent`` ancestor's).
        generate_content_config: generation settings (copied into each request).
        include_contents: 'default' (the conversation) or 'none' (the current turn only).
        global_instruction: the root ``LlmAgent``'s global instruction ('' when none).
        instruction: the agent's own instruction ('' when none).
        tools: the agent's tools, functions wrapped and toolsets expanded (each declares
            itself to the model by name; the request's ``tools_dict`` maps names back).
        output_schema: the model (or other pydantic-checkable type) the final answer must
            match, if any.
        output_key: the state key the final answer is stored under, if any.
        transfer_targets: the agents the model may transfer to (sub-agents, parent, peers).
        parent_name: the parent's name when the parent is one of the targets.
        run_agent: runs the agent of that name in the tree (a transfer), or None when the
            tree has no such agent.
        hooks: the model and tool hook chains, plugins first (``hooks[BEFORE_TOOL]``; the
            hooks are ``eventide.plugins.base_plugin.LLM_HOOKS``); ``NO_HOOKS`` when the run
            has none.
        static_instruction: instruction text sent first and verbatim, if any.
        planner: shapes each request and the model's parts, if any.
        code_executor: changes each request (e.g. Gemini's code execution), if any.
        context_limit: how much history the model gets, if limited.
        toolsets: the agent's toolsets that change each request
            (``BaseToolset.process_llm_request`` overridden).
    """

    name: str
    description: str
    model: BaseLlm
    generate_content_config: types.GenerateContentConfig | None
    include_contents: Literal["default", "none"]
    global_instruction: Instruction
    instruction: Instruction
    tools: tuple[BaseTool, ...]
    output_schema: Any
    output_key: str | None
    transfer_targets: tuple[TransferTarget, ...]
    parent_name: str | None
    run_agent: Callable[[str, InvocationContext], AsyncGenerator[Event, None] | None]
    hooks: HookChains = NO_HOOKS
    static_instruction: str | None = None
    planner: BasePlanner | None = None
    code_executor: BaseCodeExecutor | None = None
    context_limit: ContextLimit | None = None
    toolsets: tuple[BaseToolset, ...] = ()
