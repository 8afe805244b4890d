"""Token-threshold compaction: summarise when the model's prompt has grown past a size.

With ``EventsCompactionConfig(token_threshold=T, event_retention_size=R)``, after an
invocation whose last model call had a prompt of ``T`` tokens or more (the provider's
``usage_metadata.prompt_token_count``; when no model call since the last compaction reported
one, an estimate of four characters a token over what the model now sees), the events since
the last compaction are summarised except the last ``R``, which stay as they are. The
previous summary is the first event of the summarizer's input, so the new summary replaces
it. This check runs before the sliding window's (``compaction_interval``), which is skipped
when this one writes a summary (google-adk's order).

What is never summarised, so the model still sees a whole exchange:
- a kept function response's call: the kept tail grows back to include it;
- a function call with no response yet (a tool still to answer, a confirmation or
  credential request awaiting the user) and everything after it: the summarised stretch
  stops before it.

A summary is written only when the events it would replace hold more characters than the
previous summary (the best guess at the new one's size): with a threshold the summary and
the kept events alone exceed, it waits for enough new events rather than summarising every
turn.
"""

from __future__ import annotations

from collections.abc import Sequence

from eventide import types
from eventide.events import Event
from eventide.history.context_limits import content_characters

__all__ = ["prompt_tokens_now", "token_events_to_compact"]

_CHARS_PER_TOKEN = 4


def prompt_tokens_now(events: Sequence[Event]) -> int:
    """The size of the model's prompt, in tokens, as of the end of ``events``.

    The prompt token count of the last model call after the latest compaction (a count from
    before it describes a prompt the summary replaced); without one, an estimate from the
    characters the model sees: the latest summary, the events it left visible and those
    after it. Reads the log backwards only as far as the latest compaction's range.
    """
    chars = 0
    index = len(events) - 1
    while index >= 0:
        event = events[index]
        index -= 1
        compaction = event.actions.compaction
        if compaction is not None:
            chars += _content_chars(compaction.compacted_content)
            # The events its range left out (kept by retention) are still seen.
            while index >= 0 and events[index].timestamp > compaction.end_timestamp:
                if events[index].actions.compaction is None:
                    chars += _content_chars(events[index].content)
                index -= 1
            break
        usage = event.usage_metadata
        if usage is not None and usage.prompt_token_count is not None:
            return usage.prompt_token_count
        chars += _content_chars(event.content)
    return chars // _CHARS_PER_TOKEN


def token_events_to_compact(
    events: Sequence[Event], *, threshold: int, retention: int
) -> list[Event] | None:
    """The summarizer's input when the prompt has reached ``threshold`` tokens, else None.

    The latest compaction event (if any) first, then the visible events after its range,
    except the last ``retention`` of them and what must stay with them (see the module).
    None as well when nothing is left to summarise, or when what is left has fewer
    characters than the latest summary (a new one would not make the prompt smaller).
    """
    if prompt_tokens_now(events) < threshold:
        return None
    from eventide.history.model_view import rewound_positions

    hidden = rewound_positions(events)
    seed: Event | None = None
    for index in range(len(events) - 1, -1, -1):
        if index not in hidden and events[index].actions.compaction is not None:
            seed = events[index]
            break
    after = seed.actions.compaction.end_timestamp if seed and seed.actions.compaction else None
    candidates = [
        event
        for index, event in enumerate(events)
        if index not in hidden
        and event.actions.compaction is None
        and event.actions.rewind_before_invocation_id is None
        and (after is None or event.timestamp > after)
    ]
    chosen = candidates[: _split_keeping_calls(candidates, retention)]
    chosen = chosen[: _first_unanswered_call(chosen, events)]
    if not chosen:
        return None
    if seed is None:
        return chosen
    # Worth a summary only when what it replaces is larger than the last summary (the
    # best guess at this one's size): else every turn would pay for a summary that saves
    # nothing, the prompt staying over the threshold.
    previous = seed.actions.compaction
    assert previous is not None
    if sum(_content_chars(e.content) for e in chosen) <= _content_chars(previous.compacted_content):
        return None
    return [seed, *chosen]


def _split_keeping_calls(candidates: list[Event], retention: int) -> int:
    """Where the kept tail starts: ``retention`` events from the end, moved earlier until
    every function response it keeps has its call kept too."""
    split = len(candidates) - retention
    if split <= 0:
        return 0
    awaiting: set[str] = set()  # responses in the tail whose call is not in it yet
    for index in range(len(candidates), -1, -1):  # the tail is candidates[index:]
        if index < len(candidates):
            event = candidates[index]
            awaiting.update(r.id for r in event.get_function_responses() if r.id)
            awaiting.difference_update(c.id for c in event.get_function_calls() if c.id)
        if index <= split and not awaiting:
            return index
    return 0


def _first_unanswered_call(chosen: list[Event], events: Sequence[Event]) -> int:
    """The position in ``chosen`` of the first event with a call no event answers (the
    summarised stretch ends before it), or ``len(chosen)``."""
    calls: dict[str, int] = {}
    for index, event in enumerate(chosen):
        for call in event.get_function_calls():
            if call.id and call.id not in calls:
                calls[call.id] = index
    if not calls:
        return len(chosen)
    answered = {r.id for e in events for r in e.get_function_responses() if r.id}
    pending = [index for call_id, index in calls.items() if call_id not in answered]
    return min(pending, default=len(chosen))


def _content_chars(content: types.Content | None) -> int:
    """The characters of a content's text (thoughts left out), calls and responses."""
    return content_characters(content, thoughts=False, inline_data=False)
