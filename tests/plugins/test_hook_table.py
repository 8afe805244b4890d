"""Issue 32: one hook-chain mechanism. Each hook is declared once, in the hook table of
``eventide.plugins.base_plugin``; one rule (``first_result``) calls every chain."""

from __future__ import annotations

import inspect
from typing import Any

from eventide._callbacks import HookChains, first_result, own_chain
from eventide.agents.base_agent import BaseAgent
from eventide.agents.llm_agent import LlmAgent
from eventide.models.llm_response import LlmResponse
from eventide.plugins.base_plugin import (
    AFTER_TOOL,
    BEFORE_AGENT,
    BEFORE_MODEL,
    HOOKS,
    LLM_HOOKS,
    BasePlugin,
)
from eventide.plugins.plugin_manager import PluginManager

# What an agent's own callbacks of each hook are called with (google-adk's keyword names).
AGENT_ARGUMENTS = {
    "before_agent_callback": ["callback_context"],
    "after_agent_callback": ["callback_context"],
    "before_model_callback": ["callback_context", "llm_request"],
    "after_model_callback": ["callback_context", "llm_response"],
    "on_model_error_callback": ["callback_context", "llm_request", "error"],
    "before_tool_callback": ["tool", "args", "tool_context"],
    "after_tool_callback": ["tool", "args", "tool_context", "tool_response"],
    "on_tool_error_callback": ["tool", "args", "tool_context", "error"],
}


def _keyword_names(method: Any) -> list[str]:
    return [
        p.name
        for p in inspect.signature(method).parameters.values()
        if p.kind is inspect.Parameter.KEYWORD_ONLY
    ]


class _Recorder(BasePlugin):
    """Records the keywords each hook method is called with."""

    def __init__(self) -> None:
        super().__init__("recorder")
        self.calls: list[tuple[str, dict[str, Any]]] = []

    def __getattribute__(self, name: str) -> Any:
        if name.endswith("_callback"):
            calls = object.__getattribute__(self, "calls")

            async def record(**kwargs: Any) -> str:
                calls.append((name, kwargs))
                return "answered"

            return record
        return object.__getattribute__(self, name)


def test_every_hook_method_is_declared_once_in_the_table() -> None:
    methods = [
        member
        for name, member in vars(BasePlugin).items()
        if name.endswith("_callback") and inspect.iscoroutinefunction(member)
    ]
    assert [spec.method for spec in HOOKS] == methods
    assert len({id(spec) for spec in HOOKS}) == len(HOOKS) == 12
    assert set(LLM_HOOKS) <= set(HOOKS)


async def test_each_plugin_adapter_passes_the_chains_arguments_by_the_methods_names() -> None:
    """The table's plugin adapters call the hook's own method with each positional
    argument under the method's keyword of the same position (the type checkers check the
    types; this checks the order)."""
    recorder = _Recorder()
    for spec in HOOKS:
        names = _keyword_names(spec.method)
        args = [object() for _ in names]
        recorder.calls.clear()
        assert await spec.call_plugin(recorder, *args) == "answered"
        assert recorder.calls == [(spec.name, dict(zip(names, args, strict=True)))]


async def test_each_agent_adapter_uses_the_agent_apis_names_and_fields_exist() -> None:
    """Agents' own callbacks get google-adk's keyword names, and each hook with agent
    callbacks has the agent field of its name (LlmAgent for model and tool hooks)."""
    with_agent_callbacks = {spec.name: spec for spec in HOOKS if spec.call_agent is not None}
    assert set(with_agent_callbacks) == set(AGENT_ARGUMENTS)
    for name, spec in with_agent_callbacks.items():
        owner = LlmAgent if spec in LLM_HOOKS else BaseAgent
        assert name in owner.model_fields, name
        seen: list[dict[str, Any]] = []
        position_count = len(_keyword_names(spec.method))
        args = [object() for _ in range(position_count)]
        assert spec.call_agent is not None
        spec.call_agent(lambda seen=seen, **kwargs: seen.append(kwargs), *args)
        assert list(seen[0]) == AGENT_ARGUMENTS[name]
        assert all(value in args for value in seen[0].values())


async def test_first_result_takes_the_first_non_none_sync_or_async_and_stops() -> None:
    called: list[str] = []

    def plain_none(x: int) -> None:
        called.append("plain_none")

    async def async_none(x: int) -> None:
        called.append("async_none")

    def plain_answer(x: int) -> int:
        called.append("plain_answer")
        return x + 1

    async def never(x: int) -> int:
        called.append("never")
        return 0

    chain: tuple[Any, ...] = (plain_none, async_none, plain_answer, never)
    assert await first_result(chain, 41) == 42
    assert called == ["plain_none", "async_none", "plain_answer"]
    empty: tuple[Any, ...] = ()
    assert await first_result(empty, 1) is None


async def test_chains_put_plugins_first_then_the_agents_own_callbacks_coerced() -> None:
    """A model hook's chain: the plugins that override it, then the agent's callbacks (sync
    or async); a dict an agent callback returns becomes an LlmResponse."""

    class Quiet(BasePlugin):
        async def before_model_callback(self, **kwargs: Any) -> LlmResponse | None:
            order.append(f"{self.name}.before_model")
            return None

    order: list[str] = []
    manager = PluginManager([Quiet("p1"), BasePlugin("idle"), Quiet("p2")])

    def own_none(callback_context: Any, llm_request: Any) -> None:
        order.append("own_none")

    async def own_dict(callback_context: Any, llm_request: Any) -> dict[str, Any]:
        order.append("own_dict")
        return {"model_version": "v"}

    chains = HookChains(
        {BEFORE_MODEL: manager.chain(BEFORE_MODEL) + own_chain(BEFORE_MODEL, [own_none, own_dict])}
    )
    context: Any = object()
    answer = await first_result(chains[BEFORE_MODEL], context, context)
    assert isinstance(answer, LlmResponse) and answer.model_version == "v"
    assert order == ["p1.before_model", "p2.before_model", "own_none", "own_dict"]
    assert chains[AFTER_TOOL] == () and chains.has(BEFORE_MODEL) and not chains.has(AFTER_TOOL)
    assert manager.overrides(BasePlugin.before_model_callback)
    assert not manager.overrides(BasePlugin.after_model_callback)
    assert own_chain(BEFORE_AGENT, None) == ()
