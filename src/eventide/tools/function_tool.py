"""``FunctionTool``: a Python function the model can call.

The declaration is inferred from the signature: type hints give each parameter's JSON Schema
(through pydantic), defaults make parameters optional, and the docstring gives the tool's
description and each parameter's (Google-style ``Args:`` section). A parameter named
``tool_context``, or annotated ``ToolContext`` under any name, receives the
:class:`ToolContext` and is hidden from the model. Arguments the model invents that the
function lacks are dropped with a logged warning (as google-adk does).
"""

from __future__ import annotations

import asyncio
import functools
import inspect
import logging
import re
import typing
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Self, cast

import pydantic

from eventide import types
from eventide._json import JsonValue
from eventide.errors import ToolArgumentsError
from eventide.tools.base_tool import BaseTool

if TYPE_CHECKING:
    from eventide.contexts import ToolContext

__all__ = [
    "ConfirmationPredicate",
    "FunctionTool",
    "ToolArgumentsError",
    "strip_titles",
    "wrap_result",
]

ConfirmationPredicate = Callable[..., Any]
_CONTEXT_PARAM = "tool_context"
_log = logging.getLogger(__name__)
_ARGS_HEADER = re.compile(r"^\s*(Args|Arguments|Parameters)\s*:\s*$")
_ARG_LINE = re.compile(r"^\s*(\*{0,2}\w+)\s*(\([^)]*\))?\s*:\s*(.*)$")
_SECTION = re.compile(r"^\s*(Returns|Raises|Yields|Examples?|Notes?|Attributes)\s*:\s*$")


class FunctionTool(BaseTool):
    """Wrap a sync or async function as a tool.

    Sync functions run in a worker thread so they never block the event loop.

    Args:
        func: the function. Its name is the tool's name unless ``name`` is given.
        name: override the tool's name.
        description: override the description taken from the docstring.
        require_confirmation: ask the user before each call (True), or when
            ``predicate(**args)`` (sync or async) returns True.
    """

    def __init__(
        self,
        func: Callable[..., Any],
        *,
        name: str | None = None,
        description: str | None = None,
        require_confirmation: bool | ConfirmationPredicate = False,
    ) -> None:
        doc_description, arg_docs = _parse_docstring(_callable_doc(func))
        super().__init__(
            name=name or str(getattr(func, "__name__", type(func).__name__)),
            description=description if description is not None else doc_description,
        )
        self.func = func
        self.require_confirmation = require_confirmation
        self._is_async = inspect.iscoroutinefunction(func) or inspect.iscoroutinefunction(
            getattr(func, "__call__", None)  # noqa: B004 - callable objects with async __call__
        )
        self._signature = inspect.signature(func)
        self._context_param = _context_param(func, self._signature)
        self._arg_docs = arg_docs
        self._args_model_cache: type[pydantic.BaseModel] | None = None
        self._declaration: types.FunctionDeclaration | None = None

    @property
    def _args_model(self) -> type[pydantic.BaseModel]:
        # Built on first use: building a validator at import time would make importing
        # a module of tools slow.
        if self._args_model_cache is None:
            self._args_model_cache = _build_args_model(
                self.name, self.func, self._signature, self._arg_docs, self._context_param
            )
        return self._args_model_cache

    def with_name(self, name: str) -> Self:
        clone = super().with_name(name)
        clone._declaration = None
        return clone

    def get_declaration(self) -> types.FunctionDeclaration:
        if self._declaration is None:
            schema = self._args_model.model_json_schema()
            strip_titles(schema)
            self._declaration = types.FunctionDeclaration(
                name=self.name,
                description=self.description or None,
                parameters_json_schema=schema,
            )
        return self._declaration

    def validate_args(self, args: dict[str, Any]) -> dict[str, Any]:
        """The model's arguments converted to the parameters' types.

        Raises:
            ToolArgumentsError: with a message the model can act on.
        """
        fields = self._args_model.model_fields
        invented = [name for name in args if name not in fields]
        if invented:
            _log.warning(
                "Tool %r: dropped argument(s) %s the function does not take.",
                self.name,
                ", ".join(repr(name) for name in invented),
            )
            args = {name: value for name, value in args.items() if name in fields}
        missing = [
            name for name, field in fields.items() if field.is_required() and name not in args
        ]
        if missing:
            # google-adk 2.13's words, which its apps and tests match on.
            raise ToolArgumentsError(
                f"Invoking `{self.name}()` failed as the following mandatory input parameters "
                f"are not present:\n{chr(10).join(missing)}\nYou could retry calling this tool, "
                "but it is IMPORTANT for you to provide all the mandatory parameters."
            )
        try:
            model = self._args_model.model_validate(args)
        except pydantic.ValidationError as exc:
            problems = "; ".join(
                f"{'.'.join(str(p) for p in err['loc']) or '(arguments)'}: {err['msg']}"
                for err in exc.errors()
            )
            raise ToolArgumentsError(
                f"Invalid arguments for tool {self.name!r}: {problems}. Call it again with "
                f"arguments matching its parameters schema."
            ) from None
        # Keep only what the model passed plus defaults, as plain Python values.
        return {name: getattr(model, name) for name in type(model).model_fields}

    async def needs_confirmation(self, args: dict[str, Any]) -> bool:
        """Whether this call must be confirmed by the user first."""
        rule = self.require_confirmation
        if isinstance(rule, bool):
            return rule
        verdict = rule(**args)
        if inspect.isawaitable(verdict):
            verdict = await verdict
        return bool(verdict)

    async def run_async(self, *, args: dict[str, Any], tool_context: ToolContext) -> Any:
        """Call the function with ``args`` (validated and converted); arguments it cannot
        take are answered with ``{"error": ...}`` saying what to fix, as google-adk does,
        and the function is not called."""
        try:
            kwargs = self.validate_args(args)
        except ToolArgumentsError as exc:
            return {"error": str(exc)}
        if self._context_param is not None:
            kwargs[self._context_param] = tool_context
        if self._is_async:
            return await self.func(**kwargs)
        result = await asyncio.to_thread(self.func, **kwargs)
        if inspect.isawaitable(result):
            result = await result
        return result


def wrap_result(result: Any) -> dict[str, Any]:
    """A tool's result as the dict a function response carries (``{"result": value}`` for
    anything that is not already a dict)."""
    if isinstance(result, pydantic.BaseModel):
        result = result.model_dump(mode="json")
    if isinstance(result, dict):
        return cast("dict[str, Any]", result)
    return {"result": result}


def _context_param(func: Callable[..., Any], signature: inspect.Signature) -> str | None:
    """The parameter that receives the ``ToolContext``: ``tool_context``, or one annotated
    ``ToolContext`` (or a subclass, such as google-adk 2.x's ``Context``), whatever its
    name."""
    if _CONTEXT_PARAM in signature.parameters:
        return _CONTEXT_PARAM
    from eventide.contexts import ToolContext

    try:
        hints = typing.get_type_hints(func)
    except Exception:  # unresolved forward references: read the raw annotations
        hints = {}
    for name, param in signature.parameters.items():
        annotation = hints.get(name, param.annotation)
        if isinstance(annotation, str):
            if annotation.rsplit(".", 1)[-1] in ("ToolContext", "Context"):
                return name
        elif isinstance(annotation, type) and issubclass(annotation, ToolContext):
            return name
    return None


def _build_args_model(
    tool_name: str,
    func: Callable[..., Any],
    signature: inspect.Signature,
    arg_docs: dict[str, str],
    context_param: str | None,
) -> type[pydantic.BaseModel]:
    try:
        hints = typing.get_type_hints(func, include_extras=True)
    except Exception:  # unresolved forward references: fall back to raw annotations
        hints = {}
    fields: dict[str, Any] = {}
    for name, param in signature.parameters.items():
        if name == context_param or param.kind in (
            inspect.Parameter.VAR_POSITIONAL,
            inspect.Parameter.VAR_KEYWORD,
        ):
            continue
        annotation = hints.get(name, param.annotation)
        if annotation is inspect.Parameter.empty:
            annotation = Any
        default = ... if param.default is inspect.Parameter.empty else param.default
        fields[name] = (
            annotation,
            pydantic.Field(default=default, description=arg_docs.get(name)),
        )
    model_name = "".join(p.capitalize() for p in re.split(r"\W+", tool_name) if p) + "Args"
    return pydantic.create_model(
        model_name or "ToolArgs",
        __config__=pydantic.ConfigDict(extra="forbid", arbitrary_types_allowed=True),
        **fields,
    )


_PARTIAL_DOC = inspect.getdoc(functools.partial)


def _callable_doc(func: Callable[..., Any]) -> str:
    """The docstring that describes ``func``: a ``functools.partial``'s is its function's,
    a callable object's is its class's, else its ``__call__``'s (as google-adk reads them)."""
    target: Any = func  # any callable: a function, a partial, an object with __call__
    doc = inspect.getdoc(target) or ""
    if isinstance(target, functools.partial):
        return _callable_doc(target.func) if doc == _PARTIAL_DOC else doc
    if not doc and not inspect.isroutine(target) and not isinstance(target, type):
        call = getattr(target, "__call__", None)  # noqa: B004 - the method, not callable()
        if call is not None:
            doc = inspect.getdoc(call) or ""
    return doc


def _parse_docstring(doc: str) -> tuple[str, dict[str, str]]:
    """The description (text before the sections) and the ``Args:`` entries."""
    description: list[str] = []
    args: dict[str, str] = {}
    section = "description"
    current: str | None = None
    for line in doc.splitlines():
        if _ARGS_HEADER.match(line):
            section, current = "args", None
            continue
        if _SECTION.match(line):
            section, current = "other", None
            continue
        if section == "description":
            description.append(line)
        elif section == "args":
            match = _ARG_LINE.match(line)
            if match and (current is None or len(line) - len(line.lstrip()) <= 4):
                name = match.group(1).lstrip("*")
                args[name] = (match.group(3) or "").strip()
                current = name
            elif current is not None and line.strip():
                args[current] = f"{args[current]} {line.strip()}".strip()
    return "\n".join(description).strip(), args


def strip_titles(schema: JsonValue) -> None:
    """Remove pydantic's auto-generated ``title`` keys (noise in the model's prompt) from a
    JSON schema, in place."""
    if isinstance(schema, dict):
        schema.pop("title", None)
        for key, value in schema.items():
            if key == "properties" and isinstance(value, dict):
                for prop in value.values():
                    strip_titles(prop)
            elif isinstance(value, dict | list):
                strip_titles(value)
    elif isinstance(schema, list):
        for item in schema:
            strip_titles(item)
