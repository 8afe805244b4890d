"""Translating an Eventide history for providers that are not Gemini: call ids, tool
results, code parts, and the built-in tools they lack."""

from __future__ import annotations

import json
from collections import deque

from eventide import types
from eventide.errors import UsageError
from eventide.models._json import JsonObject, obj
from eventide.models.llm_request import LlmRequest

__all__ = [
    "GEMINI_BUILTIN_TOOLS",
    "CallIdAssigner",
    "code_part_as_text",
    "count_function_calls",
    "fill_missing_call_ids",
    "json_arguments",
    "reject_builtin_tools",
    "response_payload",
]


def count_function_calls(llm_request: LlmRequest) -> int:
    """How many function calls the request's history holds (numbers generated ids)."""
    return sum(
        1
        for content in llm_request.contents
        for part in content.parts or ()
        if part.function_call is not None
    )


class CallIdAssigner:
    """Gives id-less function calls the stable ids ``call_<n>`` and pairs their responses.

    Some providers (Gemini) may omit call ids, but OpenAI and Anthropic require every tool
    result to name its call. Ids are numbered by position in the history, so the same
    history always translates to the same request; a response without an id pairs with the
    oldest unanswered call of the same name.
    """

    def __init__(self) -> None:
        self._count = 0
        self._pending: dict[str, deque[str]] = {}

    def call_id(self, call: types.FunctionCall) -> str:
        """The id to send for ``call``."""
        self._count += 1
        call_id = call.id or f"call_{self._count}"
        self._pending.setdefault(call.name or "", deque()).append(call_id)
        return call_id

    def copy(self) -> CallIdAssigner:
        """An assigner in this one's state that goes on independently of it."""
        twin = CallIdAssigner()
        twin._count = self._count
        twin._pending = {name: deque(ids) for name, ids in self._pending.items() if ids}
        return twin

    def response_id(self, response: types.FunctionResponse) -> str:
        """The id to send for ``response``: its own, else its call's."""
        pending = self._pending.get(response.name or "")
        if response.id:
            if pending and response.id in pending:
                pending.remove(response.id)
            return response.id
        if pending:
            return pending.popleft()
        self._count += 1
        return f"call_{self._count}"


def fill_missing_call_ids(parts: list[types.Part], *, calls_before: int) -> None:
    """Give function calls without an id the id ``call_<n>`` (n continues the history's)."""
    number = calls_before
    for part in parts:
        if part.function_call is not None:
            number += 1
            if not part.function_call.id:
                part.function_call.id = f"call_{number}"


def json_arguments(raw: str | None) -> tuple[JsonObject, str | None]:
    """Parse a function call's JSON arguments; on failure return ``{}`` and a message."""
    if not raw:
        return {}, None
    try:
        # strict=False: small local models put raw newlines inside argument strings.
        value: object = json.loads(raw, strict=False)
    except json.JSONDecodeError as exc:
        return {}, f"the model sent function arguments that are not JSON ({exc}): {raw[:200]!r}"
    args = obj(value)
    if not args and value != {}:
        return {}, f"the model sent function arguments that are not a JSON object: {raw[:200]!r}"
    return args, None


def response_payload(response: types.FunctionResponse) -> str:
    """A function response's payload as the JSON text OpenAI and Anthropic expect."""
    return json.dumps(response.response or {}, ensure_ascii=False, default=str)


def code_part_as_text(part: types.Part) -> str | None:
    """Gemini code-execution parts, rendered as text for providers that lack them."""
    if part.executable_code is not None:
        lang = (part.executable_code.language or "").lower().replace("language_unspecified", "")
        return f"```{lang}\n{part.executable_code.code or ''}\n```"
    if part.code_execution_result is not None:
        result = part.code_execution_result
        return f"Code execution {result.outcome or 'result'}:\n{result.output or ''}"
    return None


# The fields of ``types.Tool`` that switch on one of Gemini's built-in tools.
GEMINI_BUILTIN_TOOLS = ("code_execution", "google_search", "url_context", "retrieval")


def reject_builtin_tools(llm_request: LlmRequest, *, provider: str) -> None:
    """Refuse Gemini's built-in tools where a provider has no equivalent, rather than
    silently leaving them out.

    Raises:
        UsageError: the request enables one of :data:`GEMINI_BUILTIN_TOOLS`.
    """
    for tool in llm_request.config.tools or ():
        for name in GEMINI_BUILTIN_TOOLS:
            setting: object = getattr(tool, name)
            if setting is not None:
                raise UsageError(
                    f"Tool(.., {name}=...) is a Gemini built-in tool, which {provider} cannot "
                    "run. Use a Gemini model for it, or give the agent a FunctionTool that "
                    "does the same job."
                )
