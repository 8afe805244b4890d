"""``BasePlugin``: hooks applied to every agent, model call and tool call of a Runner.

Override only the hooks you need; the Runner calls a hook only on plugins that override it.
Every hook may be ``async def`` or plain ``def``. A non-None result short-circuits exactly
like the agent-level callback of the same name, and plugins run before agents' own callbacks.

Below the class, the hook table: each hook declared once as a :class:`HookSpec` (how a chain
of it calls a plugin, and an agent's own callbacks where agents have them). A chain is called
with :func:`eventide._callbacks.first_result`; a new hook is its method here, its row in the
table, its call site (and the agent's field, when agents get callbacks of it).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar, Generic, TypeVar, TypeVarTuple

from eventide.models.llm_response import LlmResponse

if TYPE_CHECKING:
    from eventide import types
    from eventide.agents.base_agent import BaseAgent
    from eventide.contexts import CallbackContext, InvocationContext, ToolContext
    from eventide.events import Event
    from eventide.models.llm_request import LlmRequest
    from eventide.tools.base_tool import BaseTool

__all__ = [
    "AFTER_AGENT",
    "AFTER_MODEL",
    "AFTER_RUN",
    "AFTER_TOOL",
    "BEFORE_AGENT",
    "BEFORE_MODEL",
    "BEFORE_RUN",
    "BEFORE_TOOL",
    "HOOKS",
    "LLM_HOOKS",
    "ON_EVENT",
    "ON_MODEL_ERROR",
    "ON_TOOL_ERROR",
    "ON_USER_MESSAGE",
    "BasePlugin",
    "HookSpec",
]

_Args = TypeVarTuple("_Args")
_R = TypeVar("_R", covariant=True)
ToolResult = dict[str, Any]


class BasePlugin:
    """Base of plugins. ``name`` must be unique among a Runner's plugins.

    ``observes_only``: set it (a class attribute) on a plugin whose hooks never return a
    replacement and never change what they are given (tracing, recording). The runtime then
    skips work it does only to stay safe from replacements: a model response an observing
    ``after_model_callback`` saw is taken as the event as it is, not validated again.
    """

    observes_only: ClassVar[bool] = False

    def __init__(self, name: str) -> None:
        self.name = name

    # --- invocation hooks ---
    async def on_user_message_callback(
        self, *, invocation_context: InvocationContext, user_message: types.Content
    ) -> types.Content | None:
        """Before the user's message is stored; return Content to replace it."""
        return None

    async def before_run_callback(
        self, *, invocation_context: InvocationContext
    ) -> types.Content | None:
        """Before the root agent runs; return Content to answer with it and skip the run."""
        return None

    async def on_event_callback(
        self, *, invocation_context: InvocationContext, event: Event
    ) -> Event | None:
        """After an event is committed, before it goes upstream; return an Event to replace
        what the caller sees (the stored event is unchanged)."""
        return None

    async def after_run_callback(self, *, invocation_context: InvocationContext) -> None:
        """After the invocation's last event."""
        return None

    # --- agent hooks ---
    async def before_agent_callback(
        self, *, agent: BaseAgent, callback_context: CallbackContext
    ) -> types.Content | None:
        """Before an agent runs; return Content to skip the agent and answer with it."""
        return None

    async def after_agent_callback(
        self, *, agent: BaseAgent, callback_context: CallbackContext
    ) -> types.Content | None:
        """After an agent ran; return Content to add it as the agent's last word."""
        return None

    # --- model hooks ---
    async def before_model_callback(
        self, *, callback_context: CallbackContext, llm_request: LlmRequest
    ) -> LlmResponse | None:
        """Before a model call; return an LlmResponse to skip the call and use it."""
        return None

    async def after_model_callback(
        self, *, callback_context: CallbackContext, llm_response: LlmResponse
    ) -> LlmResponse | None:
        """After a model call; return an LlmResponse to replace the model's."""
        return None

    async def on_model_error_callback(
        self, *, callback_context: CallbackContext, llm_request: LlmRequest, error: Exception
    ) -> LlmResponse | None:
        """When a model call raised; return an LlmResponse to recover with it."""
        return None

    # --- tool hooks ---
    async def before_tool_callback(
        self, *, tool: BaseTool, tool_args: dict[str, Any], tool_context: ToolContext
    ) -> dict[str, Any] | None:
        """Before a tool runs; return a dict to skip the tool and use it as the result."""
        return None

    async def after_tool_callback(
        self,
        *,
        tool: BaseTool,
        tool_args: dict[str, Any],
        tool_context: ToolContext,
        result: dict[str, Any],
    ) -> dict[str, Any] | None:
        """After a tool ran; return a dict to replace its result."""
        return None

    async def on_tool_error_callback(
        self,
        *,
        tool: BaseTool,
        tool_args: dict[str, Any],
        tool_context: ToolContext,
        error: Exception,
    ) -> dict[str, Any] | None:
        """When a tool raised; return a dict to recover with it as the result."""
        return None

    async def close(self) -> None:
        """Release the plugin's resources; called once by ``Runner.close()``."""
        return None


@dataclass(frozen=True, slots=True, eq=False)
class HookSpec(Generic[*_Args, _R]):
    """One hook, declared once: how a chain of it, called with ``_Args`` positionally,
    calls each callee, and what it answers (``_R``, or None to let the next one answer).

    Attributes:
        method: the hook's ``BasePlugin`` method: a plugin that overrides it is in the
            hook's chains. Its name is also the agent field holding agents' own callbacks
            of the hook (``before_model_callback``), where agents have some.
        call_plugin: calls a plugin's method with the chain's arguments (plugins name them
            in their API's words: ``tool_args``, ``result``).
        call_agent: calls one of an agent's own callbacks with them (in the agent API's
            words: ``args``, ``tool_response``); None when agents have none of this hook.
        agent_result: turns an agent callback's non-None value into the chain's answer (a
            dict into an ``LlmResponse``); None: the value as it is.
    """

    method: Callable[..., Awaitable[Any]]
    call_plugin: Callable[[BasePlugin, *_Args], Awaitable[_R | None]]
    call_agent: Callable[[Callable[..., Any], *_Args], object] | None = None
    agent_result: Callable[[Any], _R] | None = None

    @property
    def name(self) -> str:
        """The hook's name (``before_tool_callback``)."""
        return self.method.__name__


def _as_response(value: Any) -> LlmResponse:
    return value if isinstance(value, LlmResponse) else LlmResponse.model_validate(value)


# --- the hook table ---
ON_USER_MESSAGE: HookSpec[InvocationContext, types.Content, types.Content] = HookSpec(
    BasePlugin.on_user_message_callback,
    lambda p, ic, m: p.on_user_message_callback(invocation_context=ic, user_message=m),
)
BEFORE_RUN: HookSpec[InvocationContext, types.Content] = HookSpec(
    BasePlugin.before_run_callback,
    lambda p, ic: p.before_run_callback(invocation_context=ic),
)
ON_EVENT: HookSpec[InvocationContext, Event, Event] = HookSpec(
    BasePlugin.on_event_callback,
    lambda p, ic, event: p.on_event_callback(invocation_context=ic, event=event),
)
AFTER_RUN: HookSpec[InvocationContext, None] = HookSpec(
    BasePlugin.after_run_callback,
    lambda p, ic: p.after_run_callback(invocation_context=ic),
)
# Agent hooks: an agent's own callbacks get the callback context alone.
BEFORE_AGENT: HookSpec[BaseAgent, CallbackContext, types.Content] = HookSpec(
    BasePlugin.before_agent_callback,
    lambda p, agent, cc: p.before_agent_callback(agent=agent, callback_context=cc),
    lambda cb, _agent, cc: cb(callback_context=cc),
)
AFTER_AGENT: HookSpec[BaseAgent, CallbackContext, types.Content] = HookSpec(
    BasePlugin.after_agent_callback,
    lambda p, agent, cc: p.after_agent_callback(agent=agent, callback_context=cc),
    lambda cb, _agent, cc: cb(callback_context=cc),
)
BEFORE_MODEL: HookSpec[CallbackContext, LlmRequest, LlmResponse] = HookSpec(
    BasePlugin.before_model_callback,
    lambda p, cc, request: p.before_model_callback(callback_context=cc, llm_request=request),
    lambda cb, cc, request: cb(callback_context=cc, llm_request=request),
    _as_response,
)
AFTER_MODEL: HookSpec[CallbackContext, LlmResponse, LlmResponse] = HookSpec(
    BasePlugin.after_model_callback,
    lambda p, cc, response: p.after_model_callback(callback_context=cc, llm_response=response),
    lambda cb, cc, response: cb(callback_context=cc, llm_response=response),
    _as_response,
)
ON_MODEL_ERROR: HookSpec[CallbackContext, LlmRequest, Exception, LlmResponse] = HookSpec(
    BasePlugin.on_model_error_callback,
    lambda p, cc, request, error: p.on_model_error_callback(
        callback_context=cc, llm_request=request, error=error
    ),
    lambda cb, cc, request, error: cb(callback_context=cc, llm_request=request, error=error),
    _as_response,
)
# Tool hooks: the flow makes any answer a tool result dict ({"result": value} for a value that
# is not a dict, as for a tool's own result: google-adk's rule).
BEFORE_TOOL: HookSpec[BaseTool, ToolResult, ToolContext, ToolResult] = HookSpec(
    BasePlugin.before_tool_callback,
    lambda p, tool, args, tc: p.before_tool_callback(tool=tool, tool_args=args, tool_context=tc),
    lambda cb, tool, args, tc: cb(tool=tool, args=args, tool_context=tc),
)
AFTER_TOOL: HookSpec[BaseTool, ToolResult, ToolContext, ToolResult, ToolResult] = HookSpec(
    BasePlugin.after_tool_callback,
    lambda p, tool, args, tc, result: p.after_tool_callback(
        tool=tool, tool_args=args, tool_context=tc, result=result
    ),
    lambda cb, tool, args, tc, result: cb(
        tool=tool, args=args, tool_context=tc, tool_response=result
    ),
)
ON_TOOL_ERROR: HookSpec[BaseTool, ToolResult, ToolContext, Exception, ToolResult] = HookSpec(
    BasePlugin.on_tool_error_callback,
    lambda p, tool, args, tc, error: p.on_tool_error_callback(
        tool=tool, tool_args=args, tool_context=tc, error=error
    ),
    lambda cb, tool, args, tc, error: cb(tool=tool, args=args, tool_context=tc, error=error),
)

LLM_HOOKS: tuple[HookSpec[*tuple[Any, ...], Any], ...] = (
    BEFORE_MODEL,
    AFTER_MODEL,
    ON_MODEL_ERROR,
    BEFORE_TOOL,
    AFTER_TOOL,
    ON_TOOL_ERROR,
)
"""The hooks an ``LlmAgent`` resolves into its run's chains (``ResolvedAgent.hooks``)."""

HOOKS: tuple[HookSpec[*tuple[Any, ...], Any], ...] = (
    ON_USER_MESSAGE,
    BEFORE_RUN,
    ON_EVENT,
    AFTER_RUN,
    BEFORE_AGENT,
    AFTER_AGENT,
    *LLM_HOOKS,
)
"""Every hook."""
