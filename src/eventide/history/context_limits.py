"""Context limits: how much history one agent sends to its model.

``LlmAgent(context_limit=ContextLimit(max_invocations=5))`` sends only the last five
invocations (the current one included; a compaction's summary does not count as one, and is
sent when all the invocations after it are); ``ContextLimit(max_tokens=8000)`` drops the oldest
contents until the request's contents fit the budget, counted by ``token_counter`` (by
default about four characters a token). Both may be set; both apply.

What is never done:
- a function call is never sent without its response, nor a response without its call: the
  contents kept always start with a message of the user (not a function response), and a
  response whose call was cut off (a long-running tool answered in a later invocation) is
  dropped with it;
- the current turn is never cut: from the user's latest message on, everything is sent even
  when it alone is over the token budget.

The limits apply to the model's view of the session (rewound turns already left out,
compacted ones already summarised, see :mod:`eventide.history.model_view`); the session's
log is not changed.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from eventide import types
from eventide.errors import UsageError
from eventide.events import Event

__all__ = ["ContextLimit", "approximate_tokens", "limited_contents"]

TokenCounter = Callable[[types.Content], int]


def approximate_tokens(content: types.Content) -> int:
    """About four characters a token, over text, function calls and their results."""
    return max(1, content_characters(content) // 4)


def content_characters(
    content: types.Content | None, *, thoughts: bool = True, inline_data: bool = True
) -> int:
    """The characters of a content's text, function calls and results (and, unless told
    otherwise, its thoughts and inline data): what the token estimates count."""
    characters = 0
    for part in (content.parts or ()) if content is not None else ():
        if part.thought and not thoughts:
            continue
        if part.text:
            characters += len(part.text)
        elif part.function_call is not None:
            call = part.function_call
            characters += len(call.name or "") + len(json.dumps(call.args or {}, default=str))
        elif part.function_response is not None:
            answer = part.function_response
            characters += len(answer.name or "") + len(
                json.dumps(answer.response or {}, default=str)
            )
        elif inline_data and part.inline_data is not None and part.inline_data.data:
            characters += len(part.inline_data.data)
    return characters


@dataclass(frozen=True, slots=True, kw_only=True)
class ContextLimit:
    """A limit on the history an agent sends to its model (see the module docstring).

    Attributes:
        max_invocations: send at most this many of the latest invocations (>= 1).
        max_tokens: keep the contents within this many tokens (the current turn is always
            sent whole).
        token_counter: counts one content's tokens; ``approximate_tokens`` by default. Pass
            a provider's tokenizer for exact budgets.
    """

    max_invocations: int | None = None
    max_tokens: int | None = None
    token_counter: TokenCounter = approximate_tokens

    def __post_init__(self) -> None:
        if self.max_invocations is None and self.max_tokens is None:
            raise UsageError(
                "ContextLimit needs max_invocations=..., max_tokens=... or both; with neither "
                "it would limit nothing (leave context_limit unset for the whole history)."
            )
        if self.max_invocations is not None and self.max_invocations < 1:
            raise UsageError(f"max_invocations must be at least 1, got {self.max_invocations}.")
        if self.max_tokens is not None and self.max_tokens < 1:
            raise UsageError(f"max_tokens must be at least 1, got {self.max_tokens}.")


def limited_contents(
    view: Sequence[Event], limit: ContextLimit, *, agent_name: str, branch: str | None
) -> list[types.Content]:
    """The conversation for ``agent_name`` built from the model's view, within ``limit``."""
    from eventide.flows.contents import ContentsBuilder

    start = 0
    if limit.max_invocations is not None:
        start = _start_of_last_invocations(view, limit.max_invocations)
    builder = ContentsBuilder(agent_name=agent_name, branch=branch)
    for index in range(start, len(view)):
        builder.add(view[index])
    contents: list[types.Content] = builder.contents()
    if limit.max_tokens is not None:
        contents = _within_tokens(contents, limit.max_tokens, limit.token_counter)
    return _paired(contents)


def _start_of_last_invocations(view: Sequence[Event], count: int) -> int:
    """Where the last ``count`` invocations start in the view. A compaction's summary is not
    an invocation: it is kept when every invocation after it is, and left out (with what it
    stands for) when the window starts later."""
    from eventide.history.model_view import is_summary_event

    seen: set[str] = set()
    for index in range(len(view) - 1, -1, -1):
        if is_summary_event(view[index]):
            continue
        invocation = view[index].invocation_id
        if invocation not in seen:
            if len(seen) == count:
                return index + 1
            seen.add(invocation)
    return 0


def _is_message(content: types.Content) -> bool:
    """A user-role content that is not a function response: where a kept history may start."""
    return content.role == "user" and not any(
        p.function_response is not None for p in content.parts or ()
    )


def _within_tokens(
    contents: list[types.Content], budget: int, count: TokenCounter
) -> list[types.Content]:
    # The current turn (from the user's latest message on) is always kept.
    last_message = next(
        (i for i in range(len(contents) - 1, -1, -1) if _is_message(contents[i])), 0
    )
    sizes = [count(c) for c in contents]
    total = sum(sizes)
    start = 0
    while total > budget and start < last_message:
        total -= sizes[start]
        start += 1
        # Only start at a message: dropping a call drops its response with it.
        while start < last_message and not _is_message(contents[start]):
            total -= sizes[start]
            start += 1
    return contents[start:]


def _paired(contents: list[types.Content]) -> list[types.Content]:
    """Start at a user message, and drop answers whose call is not in ``contents``."""
    start = 0
    while start < len(contents) and not _is_message(contents[start]):
        start += 1
    if start == len(contents):
        start = 0  # nothing but tool traffic: leave it as it is rather than send nothing
    kept = contents[start:]
    calls: set[str] = set()
    result: list[types.Content] = []
    for content in kept:
        parts = content.parts or []
        for part in parts:
            if part.function_call is not None and part.function_call.id:
                calls.add(part.function_call.id)
        rest = [
            p
            for p in parts
            if p.function_response is None
            or not p.function_response.id
            or p.function_response.id in calls
        ]
        if len(rest) == len(parts):
            result.append(content)
        elif rest:
            result.append(types.Content(role=content.role, parts=rest))
    return result
