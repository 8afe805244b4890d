"""``LlmAgent`` (alias ``Agent``): an agent that talks to a model and calls tools."""

from __future__ import annotations

import inspect
from collections.abc import AsyncGenerator, Awaitable, Callable, Mapping, Sequence
from typing import Any, ClassVar, Literal

from pydantic import BaseModel, Field, PrivateAttr, field_validator, model_validator

from eventide import types
from eventide._callbacks import NO_HOOKS, HookChains, own_chain
from eventide._fastpath import fields_of
from eventide.agents.adk_options import check_gemini_features
from eventide.agents.base_agent import BaseAgent
from eventide.agents.task_mode import AgentMode, LlmAgentMode, is_delegated, mode_tools
from eventide.code_executors import BaseCodeExecutor
from eventide.contexts import InvocationContext, ReadonlyContext
from eventide.errors import ConfigurationError
from eventide.events import Event
from eventide.flows.llm_flow import run_llm_flow
from eventide.flows.llm_resume import resume_llm_agent
from eventide.flows.resolved_agent import ResolvedAgent, TransferTarget
from eventide.history.context_limits import ContextLimit
from eventide.models.base_llm import BaseLlm
from eventide.models.registry import LLMRegistry
from eventide.planners import BasePlanner
from eventide.plugins.base_plugin import LLM_HOOKS
from eventide.runtime.replay import AgentProgress, ResumeScope
from eventide.tools.base_tool import BaseTool
from eventide.tools.base_toolset import BaseToolset
from eventide.tools.function_tool import FunctionTool

__all__ = ["Agent", "InstructionProvider", "LlmAgent", "ToolUnion"]

InstructionProvider = Callable[[ReadonlyContext], str | Awaitable[str]]
ToolUnion = Callable[..., Any] | BaseTool | BaseToolset
StaticInstruction = str | types.Content | types.Part | list[str | types.Part]
_Callbacks = Callable[..., Any] | list[Callable[..., Any]]


class LlmAgent(BaseAgent):
    """An agent driven by a model.

    Attributes:
        model: a model name (resolved through the registry) or a ``BaseLlm``; when empty,
            the nearest ancestor ``LlmAgent``'s model.
        instruction: the agent's instructions. In a string, ``{key}`` is replaced by the
            state value (``{key?}`` by an empty string when unset; ``{app:key}``,
            ``{user:key}``, ``{temp:key}`` read the scoped keys) and ``{artifact.name}`` by
            an artifact's text. A callable receives a ``ReadonlyContext`` and returns the
            text (no placeholders are filled in it).
        global_instruction: instructions for every agent of the tree (read from the root).
        static_instruction: instructions that never change (a string, a ``Content``, a
            ``Part``, or a list of strings and parts, as google-adk takes them). When
            set, it alone is the system instruction, verbatim (no placeholders), so
            providers can cache it; ``instruction`` and ``global_instruction`` then go into
            the conversation just before the user's latest message (as in google-adk).
        tools: functions, ``BaseTool``s and ``BaseToolset``s.
        generate_content_config: generation settings (temperature, ...).
        include_contents: 'default' sends the conversation history; 'none' only the
            current turn.
        input_schema: the arguments' model when the agent is used as a tool.
        output_schema: the final answer must be JSON matching this pydantic model, or
            another type pydantic checks (``list[Item]``, ``dict[str, int]``).
        output_key: store the final answer's text (or validated JSON) in this state key.
        disallow_transfer_to_parent: the model may not hand the conversation back up.
        disallow_transfer_to_peers: the model may not hand it to sibling agents.
        mode: google-adk 2.x's Task API: ``"chat"`` (the default), ``"task"`` (works with
            the user until it calls ``finish_task`` with its output) or ``"single_turn"``
            (one job, without the user). Task and single-turn sub-agents are offered to a
            chat parent as tools, not as transfer targets (see
            :mod:`eventide.agents.task_mode`).
        planner: a ``BuiltInPlanner`` (the model's thinking, with its ``thinking_config``)
            or a ``PlanReActPlanner`` (plan, act, reason, answer).
        code_executor: ``BuiltInCodeExecutor()`` switches on Gemini's code execution.
        context_limit: send only part of the history to the model: the last N invocations
            and/or a token budget (``ContextLimit``); calls and responses stay paired.
        before_model_callback: ``(callback_context=, llm_request=)``; a returned
            ``LlmResponse`` skips the model call.
        after_model_callback: ``(callback_context=, llm_response=)``; a returned
            ``LlmResponse`` replaces the model's.
        on_model_error_callback: ``(callback_context=, llm_request=, error=)``; a returned
            ``LlmResponse`` recovers from a model exception.
        before_tool_callback: ``(tool=, args=, tool_context=)``; a returned value skips the
            tool and becomes its result.
        after_tool_callback: ``(tool=, args=, tool_context=, tool_response=)``; a returned
            value replaces the result.
        on_tool_error_callback: ``(tool=, args=, tool_context=, error=)``; a returned value
            recovers from a tool exception. (A tool callback's value that is not a dict is
            wrapped as ``{"result": value}``, as a tool's own result is.)
    """

    DEFAULT_MODEL: ClassVar[str] = "gemini-2.5-flash"
    """The model name google-adk code reads as ``LlmAgent.DEFAULT_MODEL``."""

    model: str | BaseLlm = ""
    instruction: str | InstructionProvider = ""
    global_instruction: str | InstructionProvider = ""
    static_instruction: StaticInstruction | None = None
    tools: list[ToolUnion] = Field(default_factory=list, repr=False)
    generate_content_config: types.GenerateContentConfig | None = None
    include_contents: Literal["default", "none"] = "default"
    input_schema: type[BaseModel] | None = None
    output_schema: Any = None
    output_key: str | None = None
    disallow_transfer_to_parent: bool = False
    disallow_transfer_to_peers: bool = False
    mode: LlmAgentMode | None = None
    planner: BasePlanner | None = Field(default=None, repr=False)
    code_executor: BaseCodeExecutor | None = Field(default=None, repr=False)
    context_limit: ContextLimit | None = None
    before_model_callback: _Callbacks | None = Field(default=None, repr=False)
    after_model_callback: _Callbacks | None = Field(default=None, repr=False)
    on_model_error_callback: _Callbacks | None = Field(default=None, repr=False)
    before_tool_callback: _Callbacks | None = Field(default=None, repr=False)
    after_tool_callback: _Callbacks | None = Field(default=None, repr=False)
    on_tool_error_callback: _Callbacks | None = Field(default=None, repr=False)

    _resolved_model: BaseLlm | None = PrivateAttr(default=None)
    _tool_cache: dict[int, BaseTool] = PrivateAttr(default_factory=dict)

    @field_validator("generate_content_config", mode="before")
    @classmethod
    def _check_config(cls, value: Any) -> Any:
        if value is None:
            return None
        config = types.GenerateContentConfig.model_validate(value)
        if config.tools:
            raise ConfigurationError(
                "Put tools in LlmAgent(tools=[...]), not in generate_content_config.tools."
            )
        if config.system_instruction:
            raise ConfigurationError(
                "Put instructions in LlmAgent(instruction=...), not in "
                "generate_content_config.system_instruction."
            )
        if config.response_json_schema:
            raise ConfigurationError(
                "Use LlmAgent(output_schema=YourModel) instead of "
                "generate_content_config.response_json_schema."
            )
        return config

    @model_validator(mode="after")
    def _check_gemini_features(self) -> LlmAgent:
        check_gemini_features(self)
        return self

    # --- resolution ---
    @property
    def canonical_model(self) -> BaseLlm:
        """The model this agent calls: its own, or the nearest LlmAgent ancestor's."""
        if isinstance(self.model, BaseLlm):
            return self.model
        if self.model:
            # Private attributes are read through __pydantic_private__: the attribute
            # syntax goes through BaseModel.__getattr__, several microseconds a read.
            private = self.__pydantic_private__
            assert private is not None
            resolved = private["_resolved_model"]
            if resolved is None or resolved.model != self.model:
                resolved = private["_resolved_model"] = LLMRegistry.new_llm(self.model)
            return resolved  # type: ignore[no-any-return]
        ancestor = self.parent_agent
        while ancestor is not None:
            if isinstance(ancestor, LlmAgent) and ancestor.model:
                return ancestor.canonical_model
            ancestor = ancestor.parent_agent
        raise ConfigurationError(
            f"Agent {self.name!r} has no model and no ancestor LlmAgent has one: set "
            "LlmAgent(model='gemini-2.5-flash') (or another model name, or a BaseLlm)."
        )

    async def canonical_tools(self, context: ReadonlyContext | None = None) -> list[BaseTool]:
        """The agent's tools as ``BaseTool``s (functions wrapped, toolsets expanded)."""
        resolved: list[BaseTool] = []
        for tool in self.tools:
            if isinstance(tool, BaseTool):
                resolved.append(tool)
            elif isinstance(tool, BaseToolset):
                resolved.extend(await tool.get_tools_with_prefix(context))
            elif callable(tool):
                private = self.__pydantic_private__
                assert private is not None
                tool_cache: dict[int, BaseTool] = private["_tool_cache"]
                cached = tool_cache.get(id(tool))
                if cached is None:
                    cached = tool_cache[id(tool)] = FunctionTool(tool)
                resolved.append(cached)
            else:
                raise ConfigurationError(
                    f"Agent {self.name!r}: tools must be functions, BaseTool or BaseToolset "
                    f"instances; got {type(tool).__name__}."
                )
        if self.mode is not None or self.sub_agents:
            private = self.__pydantic_private__
            assert private is not None
            resolved.extend(mode_tools(self, private["_tool_cache"]))
        return resolved

    async def canonical_instruction(self, context: ReadonlyContext) -> tuple[str, bool]:
        """The instruction text, and google-adk's ``bypass_state_injection`` flag: True when
        the text came from an instruction provider (its ``{placeholders}`` are left as they
        are), False for a string instruction (its placeholders are filled from state)."""
        return await _resolve_instruction(self.instruction, context)

    async def canonical_global_instruction(self, context: ReadonlyContext) -> tuple[str, bool]:
        """The global instruction text, and ``bypass_state_injection`` as in
        :meth:`canonical_instruction`."""
        return await _resolve_instruction(self.global_instruction, context)

    @property
    def allows_transfer_to_parent(self) -> bool:
        """Whether the conversation can be handed from this agent back to its parent (the
        parent must be an ``LlmAgent`` too: transfers are made by a model)."""
        return not self.disallow_transfer_to_parent and isinstance(self.parent_agent, LlmAgent)

    def transfer_targets(self) -> list[BaseAgent]:
        """The agents this agent's model may hand the conversation to: its sub-agents; its
        parent unless ``disallow_transfer_to_parent``; its siblings unless
        ``disallow_transfer_to_peers``. Transfers up and sideways are offered only under an
        ``LlmAgent`` parent: a workflow parent (sequential, parallel, loop) decides the order
        itself."""
        targets: list[BaseAgent] = [sub for sub in self.sub_agents if not is_delegated(sub)]
        parent = self.parent_agent
        if isinstance(parent, LlmAgent):
            if not self.disallow_transfer_to_parent:
                targets.append(parent)
            if not self.disallow_transfer_to_peers:
                targets.extend(
                    peer
                    for peer in parent.sub_agents
                    if peer is not self and not is_delegated(peer)
                )
        return targets

    # --- running ---
    async def resolve(self, ctx: InvocationContext) -> ResolvedAgent:
        """This agent as one run of it sees it: the record the LLM flow reads.

        Resolved once per run: the model, the tools (toolsets expanded), the instructions,
        the transfer targets and one hook chain per model/tool hook, the Runner's plugins
        first and then this agent's own callbacks.
        """
        # The agent's fields in one read of the record, not a generic lookup per field
        # (about twenty per run).
        fields = fields_of(self)
        plugins = ctx.plugin_manager
        parent = fields["parent_agent"]
        targets = self.transfer_targets()
        task = fields["mode"] == AgentMode.TASK
        hooks = NO_HOOKS
        if plugins.has_model_or_tool_hooks or _has_own_hooks(fields):
            # Built only when some hook exists: a plain agent's record keeps NO_HOOKS.
            hooks = HookChains(
                {
                    spec: plugins.chain(spec) + own_chain(spec, fields[spec.name])
                    for spec in LLM_HOOKS
                }
            )
        root = self.root_agent if parent is not None else self
        model = fields["model"]
        tools = fields["tools"]
        return ResolvedAgent(
            name=fields["name"],
            description=fields["description"],
            model=model if isinstance(model, BaseLlm) else self.canonical_model,
            generate_content_config=fields["generate_content_config"],
            include_contents=fields["include_contents"],
            global_instruction=root.global_instruction if isinstance(root, LlmAgent) else "",
            instruction=fields["instruction"],
            tools=tuple(await self.canonical_tools(ReadonlyContext(ctx)))
            if tools or fields["mode"] is not None or fields["sub_agents"]
            else (),
            # A task agent's output is its finish_task call's arguments (Task API).
            output_schema=None if task else fields["output_schema"],
            output_key=None if task else fields["output_key"],
            transfer_targets=tuple(TransferTarget(t.name, t.description) for t in targets)
            if targets
            else (),
            parent_name=parent.name if parent is not None and parent in targets else None,
            run_agent=self._run_agent_named,
            hooks=hooks,
            static_instruction=_static_text(fields["static_instruction"]),
            planner=fields["planner"],
            code_executor=fields["code_executor"],
            context_limit=fields["context_limit"],
            toolsets=_request_changing_toolsets(tools) if tools else (),
        )

    def _run_agent_named(
        self, name: str, ctx: InvocationContext
    ) -> AsyncGenerator[Event, None] | None:
        target = self.root_agent.find_agent(name)
        return None if target is None else target.run_async(ctx)

    def _run_async_impl(self, ctx: InvocationContext) -> AsyncGenerator[Event, None]:
        # The flow's generator itself (not a wrapper around it): one layer less per event.
        return run_llm_flow(self.resolve(ctx), ctx)

    def _resume_async_impl(
        self, ctx: InvocationContext, scope: ResumeScope, progress: AgentProgress
    ) -> AsyncGenerator[Event, None]:
        # The model/tool loop goes on after its last committed event (eventide.flows.llm_resume).
        return resume_llm_agent(
            lambda: self.resolve(ctx), ctx, scope, progress, run_agent=self._run_agent_named
        )

    async def close(self) -> None:
        """Close the agent's toolsets, and the model client it created from a model name.

        A ``BaseLlm`` instance passed in by the caller is left open: the caller owns it and
        may share it between agents or runners.
        """
        for tool in self.tools:
            if isinstance(tool, BaseToolset):
                await tool.close()
        private = self.__pydantic_private__
        resolved = private.get("_resolved_model") if private else None
        if resolved is not None:
            private["_resolved_model"] = None  # type: ignore[index]
            await resolved.close()


Agent = LlmAgent


def _static_text(instruction: StaticInstruction | None) -> str | None:
    """The text of a static instruction (a list's pieces one per line)."""
    if instruction is None or isinstance(instruction, str):
        return instruction
    if isinstance(instruction, list):
        return "\n".join(
            piece if isinstance(piece, str) else piece.text or "" for piece in instruction
        )
    return instruction.text or ""


# The agent fields of the model and tool hooks (named as the hooks).
_LLM_HOOK_FIELDS = tuple(spec.name for spec in LLM_HOOKS)


def _has_own_hooks(fields: Mapping[str, Any]) -> bool:
    """Whether an agent (its fields) has callbacks of a model or tool hook."""
    for name in _LLM_HOOK_FIELDS:
        if fields[name] is not None:
            return True
    return False


async def _resolve_instruction(
    instruction: str | InstructionProvider, context: ReadonlyContext
) -> tuple[str, bool]:
    if isinstance(instruction, str):
        return instruction, False
    text = instruction(context)
    if inspect.isawaitable(text):
        text = await text
    return str(text), True


def _request_changing_toolsets(tools: Sequence[ToolUnion]) -> tuple[BaseToolset, ...]:
    """The toolsets among ``tools`` whose ``process_llm_request`` does something."""
    return tuple(
        tool
        for tool in tools
        if isinstance(tool, BaseToolset)
        and type(tool).process_llm_request is not BaseToolset.process_llm_request
    )
