"""``FunctionNode``: a Python function (sync, async, generator) as a workflow node.

Parameters are bound by name: ``ctx`` (or one annotated ``Context``) gets the node's
context; ``node_input`` gets the output of the node before; any other parameter is read
from the session state (``parameter_binding="state"``, the default) or from the input dict
(``parameter_binding="node_input"``, how a node is called as a tool). Annotated parameters
are validated and converted (a dict into a pydantic model, the user's message into text).
"""

from __future__ import annotations

import asyncio
import contextvars
import inspect
import typing
from collections.abc import (
    AsyncGenerator,
    AsyncIterator,
    Callable,
    Coroutine,
    Generator,
    Iterator,
)
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel

from eventide import types
from eventide._fastpath import construct_trusted, hidden_value, set_hidden
from eventide.errors import WorkflowConfigurationError, WorkflowDataError
from eventide.events import Event, ToolConfirmation
from eventide.workflow.base_node import BaseNode
from eventide.workflow.node_data import coerce, to_plain, validate_node_data
from eventide.workflow.request_input import RequestInput
from eventide.workflow.retry_config import RetryConfig

if TYPE_CHECKING:
    from eventide.node_context import Context

__all__ = ["FunctionNode", "confirmation_interrupt_id"]

_REJECTED = {"error": "This tool call is rejected."}
_CONTEXT_TYPES = ("Context", "ToolContext", "CallbackContext")
_PLAN = "_eventide_call_plan"
# How a function is called (decided once, when the node is built).
_ASYNC_GEN, _GEN, _CORO, _SYNC = range(4)
# What bind() does for a parameter.
_CTX, _SKIP, _EXTRA, _INPUT, _LOOKUP = range(5)
# Values a hint of their own exact type leaves as they are (pydantic returns them unchanged).
_AS_IS = frozenset({int, str, float, bool})


def confirmation_interrupt_id(node_path: str) -> str:
    """The interrupt id of a node run's confirmation request (stable across reruns)."""
    return f"wf_tool_confirmation:{node_path}"


class FunctionNode(BaseNode):
    """A node that calls a function and outputs what it returns (or yields).

    Attributes:
        require_confirmation: ask the user to approve the call before it runs (True, or a
            predicate of the bound arguments). A rejected call outputs
            ``{"error": "This tool call is rejected."}``.
        parameter_binding: ``"state"`` (parameters from the session state) or
            ``"node_input"`` (parameters from the input dict).
    """

    require_confirmation: bool | Callable[..., bool] = False
    parameter_binding: Literal["state", "node_input"] = "state"

    def __init__(
        self,
        *,
        func: Callable[..., Any],
        name: str | None = None,
        rerun_on_resume: bool = False,
        retry_config: RetryConfig | None = None,
        timeout: float | None = None,
        require_confirmation: bool | Callable[..., bool] = False,
        parameter_binding: Literal["state", "node_input"] = "state",
        state_schema: type[BaseModel] | None = None,
    ) -> None:
        if not callable(func):
            raise WorkflowConfigurationError(
                f"FunctionNode needs a callable, got {type(func).__name__}: {func!r}."
            )
        if require_confirmation and not rerun_on_resume:
            raise WorkflowConfigurationError(
                "FunctionNode with require_confirmation requires rerun_on_resume=True: the "
                "node runs again once the user has confirmed."
            )
        unwrapped = inspect.unwrap(func)
        node_name = name or getattr(func, "__name__", None) or getattr(unwrapped, "__name__", None)
        if not node_name:
            raise WorkflowConfigurationError(
                f"FunctionNode could not take a name from {func!r}: pass name=..."
            )
        fields: dict[str, Any] = {
            "name": node_name,
            "description": inspect.getdoc(unwrapped) or "",
            "rerun_on_resume": rerun_on_resume,
            "retry_config": retry_config,
            "timeout": timeout,
            "require_confirmation": require_confirmation,
            "parameter_binding": parameter_binding,
            "state_schema": state_schema,
        }
        super().__init__(**fields)
        self._func = func
        self._unwrapped = unwrapped
        self._signature = inspect.signature(func)
        try:
            hints = typing.get_type_hints(unwrapped, include_extras=True)
        except Exception:  # noqa: BLE001 - unresolvable hints: bind without conversion
            hints = {}
        self._hints = hints
        self._context_param = _context_parameter(self._signature, hints)
        self._infer_schemas()
        # Read once per run through one plain attribute: pydantic's private attributes
        # above cost a __getattr__ call each.
        set_hidden(self, _PLAN, _CallPlan(self))

    # pydantic keeps the function outside the model's fields.
    _func: Callable[..., Any]
    _unwrapped: Callable[..., Any]
    _signature: inspect.Signature
    _hints: dict[str, Any]
    _context_param: str | None

    @property
    def func(self) -> Callable[..., Any]:
        """The wrapped function."""
        return self._func

    @property
    def parameters(self) -> list[str]:
        """The function's parameters read from state or input (not ``ctx``/``node_input``)."""
        return [
            name
            for name, param in self._signature.parameters.items()
            if name not in (self._context_param, "node_input", "self")
            and param.kind not in (param.VAR_POSITIONAL, param.VAR_KEYWORD)
        ]

    def hint(self, name: str) -> Any:
        """The annotation of parameter ``name`` (None when it has none)."""
        return self._hints.get(name)

    def required(self, name: str) -> bool:
        """Whether parameter ``name`` has no default."""
        return self._signature.parameters[name].default is inspect.Parameter.empty

    def _infer_schemas(self) -> None:
        returns = self._hints.get("return")
        if typing.get_origin(returns) in (
            AsyncIterator,
            AsyncGenerator,
            Iterator,
            Generator,
        ):
            args = typing.get_args(returns)
            returns = args[0] if args else None
        if (
            inspect.isclass(returns)
            and issubclass(returns, BaseModel)
            and not issubclass(returns, Event | RequestInput | types.Content)
        ):
            self.output_schema = returns
        wanted = self._hints.get("node_input")
        if inspect.isclass(wanted) and issubclass(wanted, BaseModel):
            self.input_schema = wanted

    def bind(self, ctx: Context, node_input: Any) -> dict[str, Any]:
        """The keyword arguments to call the function with."""
        plan: _CallPlan = hidden_value(self, _PLAN)
        from_input = self.parameter_binding == "node_input"
        source: Any = node_input if from_input else None
        kwargs: dict[str, Any] = {}
        for name, step, default, hint in plan.steps:
            if step == _INPUT and not from_input:
                kwargs[name] = node_input if hint is None else self._convert(name, node_input, hint)
                continue
            if step == _CTX:
                kwargs[name] = ctx
                continue
            if step == _SKIP:
                continue
            if step == _EXTRA:
                if from_input and isinstance(source, dict):
                    given: dict[str, Any] = source  # pyright: ignore[reportUnknownVariableType]
                    for key, value in given.items():
                        if key not in plan.names:
                            kwargs[key] = value
                continue
            if source is None and not from_input:
                source = ctx.state
            found, value = _lookup(source, name)
            if found:
                kwargs[name] = value if hint is None else self._convert(name, value, hint)
            elif default is not inspect.Parameter.empty:
                kwargs[name] = default
            else:
                where = "node_input" if from_input else "state"
                raise WorkflowDataError(
                    f"Missing value for parameter {name!r} of node {self.name!r}: it is not "
                    f"in {where} and has no default. Set it in {where} first, or give the "
                    "parameter a default."
                )
        return kwargs

    def _convert(self, name: str, value: Any, hint: Any) -> Any:
        if type(value) is hint and hint in _AS_IS:
            return value
        try:
            return coerce(hint, value)
        except Exception as exc:
            raise WorkflowDataError(
                f"Parameter {name!r} of node {self.name!r} expects {hint!r}, got "
                f"{type(value).__name__}: {exc}"
            ) from exc

    def run(self, *, ctx: Context, node_input: Any) -> AsyncGenerator[Event, None]:
        """A plain or async function without a confirmation yields one event at most: its
        run is a small object (:class:`_OneCall`), not :meth:`BaseNode.run`'s generator
        around :meth:`_run_impl`'s. In a fan-out every node is in flight at once, and those
        two generators were about 650 bytes of each one's peak memory (tracemalloc,
        1,000-node fan-out)."""
        plan: _CallPlan = hidden_value(self, _PLAN)
        if (
            plan.kind in (_SYNC, _CORO)
            and not self.require_confirmation
            and type(self)._run_impl is FunctionNode._run_impl
        ):
            return _OneCall(self, ctx, node_input, plan)
        return super().run(ctx=ctx, node_input=node_input)

    async def _call(self, ctx: Context, node_input: Any, plan: _CallPlan) -> Event | None:
        """The input validated, the function called, its result as the node's event."""
        kwargs = self.bind(ctx, validate_node_data(self.input_schema, node_input))
        if plan.kind == _SYNC:
            result = await _call_sync(plan.func, kwargs)
        else:
            result = await plan.func(**kwargs)
        item = self._as_event(ctx, result)
        return None if item is None else self._item_event(item)

    async def _run_impl(self, *, ctx: Context, node_input: Any) -> AsyncGenerator[Any, None]:
        kwargs = self.bind(ctx, node_input)
        if self.require_confirmation:
            answer = ctx.resume_inputs.get(confirmation_interrupt_id(ctx.node_path))
            if answer is None:
                args = {k: v for k, v in kwargs.items() if k != self._context_param}
                if await self._needs_confirmation(ctx, args):
                    yield RequestInput(
                        interrupt_id=confirmation_interrupt_id(ctx.node_path),
                        message=f"Please approve or reject the tool call {self.name}().",
                        payload={"tool_name": self.name, "args": to_plain(args)},
                        response_schema=ToolConfirmation,
                    )
                    return
            else:
                confirmation = _confirmation(answer)
                ctx.tool_confirmation = confirmation
                if not confirmation.confirmed:
                    yield Event(output=dict(_REJECTED))
                    return
        plan: _CallPlan = hidden_value(self, _PLAN)
        func = plan.func
        kind = plan.kind
        if kind == _SYNC:
            yield self._as_event(ctx, await _call_sync(func, kwargs))
        elif kind == _CORO:
            yield self._as_event(ctx, await func(**kwargs))
        elif kind == _ASYNC_GEN:
            async for item in func(**kwargs):
                yield self._as_event(ctx, item)
        else:
            for item in func(**kwargs):
                yield self._as_event(ctx, item)

    async def _needs_confirmation(self, ctx: Context, args: dict[str, Any]) -> bool:
        predicate = self.require_confirmation
        if not callable(predicate):
            return bool(predicate)
        params = inspect.signature(predicate).parameters
        call_args = dict(args)
        for name in params:
            if name in ("ctx", "tool_context"):
                call_args[name] = ctx
            elif name not in call_args and name in ctx.state:
                call_args[name] = ctx.state[name]
        if not any(p.kind is p.VAR_KEYWORD for p in params.values()):
            call_args = {k: v for k, v in call_args.items() if k in params}
        result = predicate(**call_args)
        if inspect.isawaitable(result):
            result = await result
        return bool(result)

    def _as_event(self, ctx: Context, item: Any) -> Any:
        """What the function returned or yielded, as the node yields it."""
        if item is None or isinstance(item, Event | RequestInput):
            return item
        if _is_content(item):
            return Event(content=types.to_content(item))
        # Event.output is Any: validating it would check nothing.
        return construct_trusted(Event, {"output": to_plain(item)})

    @property
    def runs_inline(self) -> bool:
        """A plain (not async, not generator) function without a confirmation or timeout:
        it runs nothing concurrently, so the workflow may run it in the workflow's task."""
        plan: _CallPlan = hidden_value(self, _PLAN)
        return plan.kind == _SYNC and not self.require_confirmation and self.timeout is None


class _OneCall(AsyncGenerator["Event", None]):
    """The run of a plain or async function node without a confirmation: what
    :meth:`BaseNode.run` makes of :meth:`FunctionNode._run_impl` (the input validated, the
    function called, its result, unless None, as the node's one event), as an async generator
    object of four slots, dropped once the call starts: the run waits, suspended, until its
    event is committed, and a generator's frame held the call's arguments meanwhile."""

    __slots__ = ("_ctx", "_input", "_node", "_plan")

    def __init__(self, node: FunctionNode, ctx: Context, node_input: Any, plan: _CallPlan) -> None:
        self._node: FunctionNode | None = node
        self._ctx: Context | None = ctx
        self._input: Any = node_input
        self._plan: _CallPlan | None = plan

    def __anext__(self) -> Coroutine[Any, Any, Event]:
        # The call itself, not the mixin's coroutine awaiting it: one frame less a node.
        return self.asend(None)

    async def asend(self, value: None) -> Event:
        node, ctx, plan = self._node, self._ctx, self._plan
        if node is None or ctx is None or plan is None:
            raise StopAsyncIteration
        node_input = self._input
        self._node = self._ctx = self._input = self._plan = None
        event = await node._call(ctx, node_input, plan)  # pyright: ignore[reportPrivateUsage]
        if event is None:
            raise StopAsyncIteration
        return event

    async def athrow(self, typ: Any, val: Any = None, tb: Any = None, /) -> Event:
        """Raise what is thrown in (``aclose`` throws ``GeneratorExit``): the call, if not
        started, never runs."""
        self._node = self._ctx = self._input = self._plan = None
        error = typ if isinstance(typ, BaseException) else _thrown(typ, val)
        if tb is not None:
            error = error.with_traceback(tb)
        # Neither held by this frame, which the error's traceback holds: no cycle per node
        # for the collector to find.
        typ = val = tb = None
        try:
            raise error
        finally:
            del error


def _thrown(typ: type[BaseException], val: object) -> BaseException:
    """The exception ``athrow(typ, val)`` raises: ``val`` when it is one, else a new ``typ``."""
    return val if isinstance(val, BaseException) else typ()


async def _call_sync(func: Callable[..., Any], kwargs: dict[str, Any]) -> Any:
    """Call a plain function inline, as google-adk does: a function that blocks holds up
    its siblings, so long blocking work belongs in an async function. In a context of its
    own: the workflow may run the node in the workflow's task."""
    call = contextvars.copy_context()
    result = call.run(func, **kwargs)
    if inspect.isawaitable(result):  # a callable object with an async __call__
        result = await asyncio.create_task(_awaited(result), context=call)
    return result


class _CallPlan:
    """How a :class:`FunctionNode` calls its function, worked out when it is built."""

    __slots__ = ("func", "kind", "names", "steps")

    def __init__(self, node: FunctionNode) -> None:
        unwrapped = node._unwrapped  # pyright: ignore[reportPrivateUsage]
        self.func = node._func  # pyright: ignore[reportPrivateUsage]
        if inspect.isasyncgenfunction(unwrapped):
            self.kind = _ASYNC_GEN
        elif inspect.isgeneratorfunction(unwrapped):
            self.kind = _GEN
        elif inspect.iscoroutinefunction(unwrapped):
            self.kind = _CORO
        else:
            self.kind = _SYNC
        signature = node._signature  # pyright: ignore[reportPrivateUsage]
        context_param = node._context_param  # pyright: ignore[reportPrivateUsage]
        hints = node._hints  # pyright: ignore[reportPrivateUsage]
        self.names = frozenset(signature.parameters)
        steps: list[tuple[str, int, Any, Any]] = []
        for name, param in signature.parameters.items():
            if name == context_param:
                step = _CTX
            elif param.kind is param.VAR_POSITIONAL:
                step = _SKIP
            elif param.kind is param.VAR_KEYWORD:
                step = _EXTRA
            elif name == "node_input":
                step = _INPUT  # looked up in the input instead with parameter_binding="node_input"
            else:
                step = _LOOKUP
            steps.append((name, step, param.default, hints.get(name)))
        self.steps = tuple(steps)


async def _awaited(result: Any) -> Any:
    return await result


def _is_content(item: Any) -> bool:
    """Eventide's ``Content``, or google-genai's (accepted wherever content is)."""
    if isinstance(item, types.Content):
        return True
    kind: type = item.__class__
    return kind.__name__ == "Content" and kind.__module__.startswith("google.genai")


def _lookup(source: Any, name: str) -> tuple[bool, Any]:
    if isinstance(source, BaseModel):
        return (True, getattr(source, name)) if hasattr(source, name) else (False, None)
    try:
        if name in source:
            return True, source[name]
    except TypeError:
        pass
    return False, None


def _context_parameter(signature: inspect.Signature, hints: dict[str, Any]) -> str | None:
    """The parameter that gets the node's context: one named ``ctx``, or annotated with
    a context class."""
    for name in signature.parameters:
        hint = hints.get(name)
        hint_name = getattr(hint, "__name__", None) if hint is not None else None
        if hint_name in _CONTEXT_TYPES:
            return name
    return "ctx" if "ctx" in signature.parameters else None


def _confirmation(answer: Any) -> ToolConfirmation:
    if isinstance(answer, ToolConfirmation):
        return answer
    if isinstance(answer, dict):
        fields: dict[str, Any] = {k: v for k, v in answer.items() if v is not None}  # pyright: ignore[reportUnknownVariableType]
        return ToolConfirmation.model_validate(fields)
    if isinstance(answer, bool):
        return ToolConfirmation(confirmed=answer)
    raise WorkflowDataError(
        "A confirmation answer must be a ToolConfirmation payload such as "
        f'{{"confirmed": true}}, got {type(answer).__name__}.'
    )
