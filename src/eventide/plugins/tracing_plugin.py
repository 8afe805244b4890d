"""``TracingPlugin``: OpenTelemetry spans for invocations, agent runs, model and tool calls.

Off by default: nothing is traced unless a Runner is given ``plugins=[TracingPlugin()]`` (the
CLI adds it for ``--trace`` or when OpenTelemetry is configured through its environment
variables). Spans follow the OpenTelemetry GenAI semantic conventions::

    invocation {app}                       eventide.invocation_id, gen_ai.conversation.id
    └── invoke_agent {agent}               gen_ai.operation.name=invoke_agent, gen_ai.agent.name
        ├── chat {model}                   gen_ai.request.model, gen_ai.usage.input_tokens, ...
        ├── execute_tool {tool}            gen_ai.tool.name, gen_ai.tool.call.id
        └── invoke_agent {sub-agent}       (a transfer runs inside the agent that made it)

Every span carries ``eventide.invocation_id`` (agent, model and tool spans also
``eventide.branch``), so a consumer can group them by invocation. The plugin uses only the
public plugin hooks. Spans are started and ended explicitly with
explicit parents (never by attaching a context), because hooks of concurrent branches and
tool calls interleave on one event loop. Open spans are kept per invocation id and ended,
marked as errors, if an invocation ends without its after-hooks (an exception, a
cancellation), so a long-running server does not leak them.

``opentelemetry-api`` is imported when the plugin is created; :func:`configure_tracing` sets
up the SDK (``opentelemetry-sdk``) with the exporters the environment asks for.
"""

from __future__ import annotations

import logging
import os
import sys
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TextIO

from eventide.models._genai_spans import mark_failed, record_model_response, request_attributes
from eventide.plugins.base_plugin import BasePlugin

if TYPE_CHECKING:
    from eventide import types
    from eventide.agents.base_agent import BaseAgent
    from eventide.contexts import CallbackContext, InvocationContext, ToolContext
    from eventide.models.llm_request import LlmRequest
    from eventide.models.llm_response import LlmResponse
    from eventide.tools.base_tool import BaseTool

__all__ = ["TracingPlugin", "configure_tracing"]

_INSTRUMENTATION = "eventide"
# An invocation whose after_run hook never came (it raised or was cancelled) keeps its spans
# open until this many newer invocations have started; then they are ended as abandoned.
_MAX_OPEN_INVOCATIONS = 1000


@dataclass(slots=True)
class _Invocation:
    span: Any
    # (branch, agent name) -> stack of open agent spans (an agent can run twice, nested,
    # when the conversation is transferred back to it).
    agents: dict[tuple[str | None, str], list[Any]] = field(default_factory=dict)
    models: dict[tuple[str | None, str], Any] = field(default_factory=dict)
    tools: dict[str, Any] = field(default_factory=dict)


class TracingPlugin(BasePlugin):
    """Records OpenTelemetry spans for each invocation, agent run, model call and tool call.

    Args:
        tracer_provider: where spans go; the global provider by default (set up by
            :func:`configure_tracing` or by your own OpenTelemetry setup).
        name: the plugin's name among the Runner's plugins.
        capture_content: also record tool arguments and results as span attributes (off by
            default: they may hold personal data).
    """

    observes_only = True  # spans only: nothing it is given changes

    def __init__(
        self,
        *,
        tracer_provider: Any | None = None,
        name: str = "tracing",
        capture_content: bool = False,
    ) -> None:
        super().__init__(name)
        from opentelemetry import trace

        self._trace = trace
        self._tracer = trace.get_tracer(_INSTRUMENTATION, tracer_provider=tracer_provider)
        self._capture_content = capture_content
        self._open: OrderedDict[str, _Invocation] = OrderedDict()

    # --- invocation ---
    async def before_run_callback(
        self, *, invocation_context: InvocationContext
    ) -> types.Content | None:
        ctx = invocation_context
        span = self._tracer.start_span(
            f"invocation {ctx.app_name}",
            attributes={
                "eventide.invocation_id": ctx.invocation_id,
                "eventide.app_name": ctx.app_name,
                "eventide.user_id": ctx.user_id,
                "gen_ai.conversation.id": ctx.session.id,
            },
        )
        self._open[ctx.invocation_id] = _Invocation(span)
        while len(self._open) > _MAX_OPEN_INVOCATIONS:
            _, stale = self._open.popitem(last=False)
            self._end_all(stale, "the invocation ended without finishing its spans")
        return None

    async def after_run_callback(self, *, invocation_context: InvocationContext) -> None:
        state = self._open.pop(invocation_context.invocation_id, None)
        if state is not None:
            self._end_all(state, None)

    # --- agents ---
    async def before_agent_callback(
        self, *, agent: BaseAgent, callback_context: CallbackContext
    ) -> types.Content | None:
        ictx = callback_context.invocation_context
        state = self._open.get(ictx.invocation_id)
        if state is None:
            return None
        parent = self._agent_parent(state, agent, ictx.branch)
        span = self._tracer.start_span(
            f"invoke_agent {agent.name}",
            context=self._trace.set_span_in_context(parent),
            attributes={
                "gen_ai.operation.name": "invoke_agent",
                "gen_ai.agent.name": agent.name,
                "gen_ai.agent.description": agent.description,
                "eventide.invocation_id": ictx.invocation_id,
                "eventide.branch": ictx.branch or "",
            },
        )
        state.agents.setdefault((ictx.branch, agent.name), []).append(span)
        return None

    async def after_agent_callback(
        self, *, agent: BaseAgent, callback_context: CallbackContext
    ) -> types.Content | None:
        ictx = callback_context.invocation_context
        state = self._open.get(ictx.invocation_id)
        if state is None:
            return None
        stack = state.agents.get((ictx.branch, agent.name))
        if stack:
            stack.pop().end()
        return None

    def _agent_parent(self, state: _Invocation, agent: BaseAgent, branch: str | None) -> Any:
        # The innermost open span of an ancestor (the agent that runs this one, or that
        # transferred to it), on this branch or an enclosing one; else the invocation.
        branches = _enclosing_branches(branch)
        ancestor = agent.parent_agent
        while ancestor is not None:
            for candidate in branches:
                stack = state.agents.get((candidate, ancestor.name))
                if stack:
                    return stack[-1]
            ancestor = ancestor.parent_agent
        # Transfers sideways or up: the agent that is open now on this branch.
        for candidate in branches:
            open_here = [s[-1] for (b, _), s in state.agents.items() if b == candidate and s]
            if open_here:
                return open_here[-1]
        return state.span

    def _current_agent_span(self, state: _Invocation, ictx: InvocationContext) -> Any:
        stack = state.agents.get((ictx.branch, ictx.agent.name))
        return stack[-1] if stack else state.span

    # --- model calls ---
    async def before_model_callback(
        self, *, callback_context: CallbackContext, llm_request: LlmRequest
    ) -> LlmResponse | None:
        ictx = callback_context.invocation_context
        state = self._open.get(ictx.invocation_id)
        if state is None:
            return None
        model = llm_request.model or _model_name(ictx.agent)
        attributes = request_attributes(llm_request, model)
        attributes["gen_ai.agent.name"] = ictx.agent.name
        attributes["eventide.invocation_id"] = ictx.invocation_id
        attributes["eventide.branch"] = ictx.branch or ""
        span = self._tracer.start_span(
            f"chat {model}",
            context=self._trace.set_span_in_context(self._current_agent_span(state, ictx)),
            attributes=attributes,
        )
        key = (ictx.branch, ictx.agent.name)
        previous = state.models.pop(key, None)
        if previous is not None:  # the last call's after-hook was skipped by another plugin
            previous.end()
        state.models[key] = span
        return None

    async def after_model_callback(
        self, *, callback_context: CallbackContext, llm_response: LlmResponse
    ) -> LlmResponse | None:
        if llm_response.partial:
            return None  # the complete response that follows carries usage and finish
        ictx = callback_context.invocation_context
        state = self._open.get(ictx.invocation_id)
        span = state.models.pop((ictx.branch, ictx.agent.name), None) if state else None
        if span is None:
            return None
        record_model_response(span, llm_response)
        span.end()
        return None

    async def on_model_error_callback(
        self, *, callback_context: CallbackContext, llm_request: LlmRequest, error: Exception
    ) -> LlmResponse | None:
        ictx = callback_context.invocation_context
        state = self._open.get(ictx.invocation_id)
        span = state.models.pop((ictx.branch, ictx.agent.name), None) if state else None
        if span is not None:
            span.record_exception(error)
            self._fail(span, type(error).__qualname__, str(error))
            span.end()
        return None

    # --- tool calls ---
    async def before_tool_callback(
        self, *, tool: BaseTool, tool_args: dict[str, Any], tool_context: ToolContext
    ) -> dict[str, Any] | None:
        ictx = tool_context.invocation_context
        state = self._open.get(ictx.invocation_id)
        if state is None:
            return None
        call_id = tool_context.function_call_id or ""
        attributes: dict[str, Any] = {
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.name": tool.name,
            "gen_ai.tool.call.id": call_id,
            "gen_ai.tool.description": tool.description,
            "gen_ai.tool.type": "function",
            "gen_ai.agent.name": ictx.agent.name,
            "eventide.invocation_id": ictx.invocation_id,
            "eventide.branch": ictx.branch or "",
        }
        if self._capture_content:
            attributes["gen_ai.tool.call.arguments"] = _json(tool_args)
        span = self._tracer.start_span(
            f"execute_tool {tool.name}",
            context=self._trace.set_span_in_context(self._current_agent_span(state, ictx)),
            attributes=attributes,
        )
        state.tools[call_id] = span
        return None

    async def after_tool_callback(
        self,
        *,
        tool: BaseTool,
        tool_args: dict[str, Any],
        tool_context: ToolContext,
        result: dict[str, Any],
    ) -> dict[str, Any] | None:
        span = self._pop_tool(tool_context)
        if span is not None:
            if self._capture_content:
                span.set_attribute("gen_ai.tool.call.result", _json(result))
            span.end()
        return None

    async def on_tool_error_callback(
        self,
        *,
        tool: BaseTool,
        tool_args: dict[str, Any],
        tool_context: ToolContext,
        error: Exception,
    ) -> dict[str, Any] | None:
        span = self._pop_tool(tool_context)
        if span is not None:
            span.record_exception(error)
            self._fail(span, type(error).__qualname__, str(error))
            span.end()
        return None

    def _pop_tool(self, tool_context: ToolContext) -> Any:
        state = self._open.get(tool_context.invocation_context.invocation_id)
        if state is None:
            return None
        return state.tools.pop(tool_context.function_call_id or "", None)

    # --- helpers ---
    def _fail(self, span: Any, error_type: str, message: str) -> None:
        mark_failed(span, error_type, message)

    def _end_all(self, state: _Invocation, abandoned: str | None) -> None:
        # Innermost first: tools, models, agents (last opened first), then the invocation.
        leftovers = [*state.tools.values(), *state.models.values()]
        for stack in reversed(list(state.agents.values())):
            leftovers.extend(reversed(stack))
        for span in leftovers:
            self._fail(span, "incomplete", abandoned or "ended before its after-hook ran")
            span.end()
        if abandoned is not None:
            self._fail(state.span, "incomplete", abandoned)
        state.span.end()
        state.tools.clear()
        state.models.clear()
        state.agents.clear()


def _enclosing_branches(branch: str | None) -> list[str | None]:
    """``a.b.c`` -> ``[a.b.c, a.b, a, None]``: where a parent agent's span may be open."""
    if not branch:
        return [None]
    parts = branch.split(".")
    return [".".join(parts[:i]) for i in range(len(parts), 0, -1)] + [None]


def _model_name(agent: BaseAgent) -> str:
    model = getattr(agent, "model", "")
    return model if isinstance(model, str) else str(getattr(model, "model", ""))


def _json(value: Any) -> str:
    import json

    return json.dumps(value, default=str, ensure_ascii=False)


def configure_tracing(*, console: bool = False, out: TextIO | None = None) -> Any | None:
    """Set up the OpenTelemetry SDK as the environment asks, and say whether to trace.

    Spans are exported over OTLP when ``OTEL_EXPORTER_OTLP_ENDPOINT`` or
    ``OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`` is set (needs ``opentelemetry-exporter-otlp``;
    without it a warning is logged and nothing is exported), the exporter reading the
    other ``OTEL_EXPORTER_OTLP_*`` variables (headers, protocol, timeout) itself,
    and printed one line each to ``out`` (stderr) when ``console`` is true. The service
    name comes from ``OTEL_SERVICE_NAME`` (``eventide`` by default). ``OTEL_SDK_DISABLED=true``
    turns everything off.

    Returns:
        The SDK ``TracerProvider`` (also made the global one) when some exporter was
        installed: pass it to :class:`TracingPlugin` and call its ``shutdown()`` at exit to
        flush. None when tracing is off.

    Raises:
        ConfigurationError: ``console`` tracing was asked for but the OpenTelemetry SDK is
            not installed.
    """
    from eventide.errors import ConfigurationError

    if os.environ.get("OTEL_SDK_DISABLED", "").strip().lower() == "true":
        return None
    otlp = bool(
        os.environ.get("OTEL_EXPORTER_OTLP_ENDPOINT")
        or os.environ.get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")
    )
    if not (otlp or console):
        return None
    try:
        from opentelemetry import trace
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import (
            BatchSpanProcessor,
            ConsoleSpanExporter,
            SimpleSpanProcessor,
        )
    except ImportError as exc:
        if not console:  # only OTEL_* variables asked: warn, do not stop the app
            logging.getLogger(__name__).warning(
                "OTEL_EXPORTER_OTLP_ENDPOINT is set but the OpenTelemetry SDK is not "
                "installed, so nothing is traced; `pip install 'eventide[tracing]'`."
            )
            return None
        raise ConfigurationError(
            "Tracing needs the OpenTelemetry SDK: `pip install 'eventide[tracing]'`."
        ) from exc
    exporter_class = _otlp_exporter_class() if otlp else None
    if exporter_class is None and not console:
        return None
    service = os.environ.get("OTEL_SERVICE_NAME") or "eventide"
    provider = TracerProvider(resource=Resource.create({"service.name": service}))
    if exporter_class is not None:
        provider.add_span_processor(BatchSpanProcessor(exporter_class()))
    if console:
        exporter = ConsoleSpanExporter(out=out or sys.stderr, formatter=format_span_line)
        provider.add_span_processor(SimpleSpanProcessor(exporter))
    trace.set_tracer_provider(provider)
    return provider


def _otlp_exporter_class() -> Any | None:
    """The OTLP exporter (HTTP, else gRPC), or None with a warning when neither is installed:
    a stray OTEL_* variable must not stop an app from running."""
    import importlib

    for module_name in (
        "opentelemetry.exporter.otlp.proto.http.trace_exporter",
        "opentelemetry.exporter.otlp.proto.grpc.trace_exporter",
    ):
        try:
            return importlib.import_module(module_name).OTLPSpanExporter
        except ImportError:
            continue
    logging.getLogger(__name__).warning(
        "OTEL_EXPORTER_OTLP_ENDPOINT is set but no OTLP exporter is installed, so spans are "
        "not exported; `pip install opentelemetry-exporter-otlp-proto-http` to export them."
    )
    return None


def format_span_line(span: Any) -> str:
    """One readable line for a finished SDK span: name, duration, the GenAI attributes."""
    duration_ms = ((span.end_time or 0) - (span.start_time or 0)) / 1e6
    shown = (
        "gen_ai.request.model",
        "gen_ai.usage.input_tokens",
        "gen_ai.usage.output_tokens",
        "gen_ai.tool.call.id",
        "error.type",
    )
    attributes: dict[str, Any] = dict(span.attributes or {})
    details = " ".join(
        f"{key.rsplit('.', 1)[-1]}={attributes[key]}" for key in shown if key in attributes
    )
    return f"[trace] {span.name} {duration_ms:.1f} ms {details}".rstrip() + "\n"
