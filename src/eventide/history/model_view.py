"""Which of a session's events reach the model: rewound invocations are left out, and events
a compaction covers are replaced by its summary.

Rules (the log itself is never changed):
- A rewind event (``actions.rewind_before_invocation_id``) hides every event from the first
  event of that invocation up to the rewind event itself.
- A compaction event (``actions.compaction``) hides the earlier events whose timestamps fall
  in its ``[start_timestamp, end_timestamp]`` and puts its summary where the first of them
  was. A summary whose range lies inside a later summary's range is left out too (the later
  one was written from it).
- A compaction hidden by a rewind is void: its summary may describe rewound turns.

A session without rewinds or compactions is passed through as it is. The Runner's
conversation cache (:class:`eventide.flows.contents.ContentsCache`) keeps each session's view
between model calls with :func:`extend_view`, so a long session costs only its new events.
"""

from __future__ import annotations

from collections.abc import Sequence

from eventide import types
from eventide.events import Event, EventCompaction

__all__ = [
    "SUMMARY_PREFIX",
    "extend_view",
    "is_summary_event",
    "model_view",
    "rewound_positions",
    "summary_event",
]

SUMMARY_PREFIX = "Summary of the earlier conversation:\n"
_SUMMARY_MARK = "eventide_summary"


def summary_event(compaction_event: Event, compaction: EventCompaction) -> Event:
    """The stand-in the model sees for the events a compaction covers.

    It is a user-role message (every provider accepts a conversation that starts with one),
    with the compaction event's id so caches can tell views apart.
    """
    text = "".join(p.text or "" for p in compaction.compacted_content.parts or ())
    return Event(
        id=compaction_event.id,
        invocation_id=compaction_event.invocation_id,
        author="user",
        timestamp=compaction.start_timestamp,
        content=types.Content(role="user", parts=[types.Part(text=SUMMARY_PREFIX + text)]),
        custom_metadata={_SUMMARY_MARK: True},
    )


def is_summary_event(event: Event) -> bool:
    """Whether a view event is a compaction's stand-in (:func:`summary_event`), not a turn."""
    metadata = event.custom_metadata
    return metadata is not None and metadata.get(_SUMMARY_MARK) is True


def _is_special(event: Event) -> bool:
    actions = event.actions
    return actions.rewind_before_invocation_id is not None or actions.compaction is not None


def model_view(events: Sequence[Event]) -> list[Event]:
    """The events (and summaries) the model sees, in order, built from the whole log."""
    hidden = rewound_positions(events)
    compactions: list[tuple[int, EventCompaction]] = []
    for index, event in enumerate(events):
        compaction = event.actions.compaction
        if compaction is not None and index not in hidden:
            compactions.append((index, compaction))
    view: list[Event] = []
    for index, event in enumerate(events):
        if index in hidden:
            continue
        compaction = event.actions.compaction
        if compaction is not None:
            _fold_compaction(view, event, compaction)
        elif not _is_special(event):
            view.append(event)
    return view


def rewound_positions(events: Sequence[Event]) -> set[int]:
    """Positions hidden by rewinds (a rewind of an already rewound invocation hides nothing
    more: :func:`eventide.history.rewind.rewind_session` refuses to write one)."""
    first_of: dict[str, int] = {}
    hidden: set[int] = set()
    for index, event in enumerate(events):
        first_of.setdefault(event.invocation_id, index)
        target = event.actions.rewind_before_invocation_id
        if target is not None and index not in hidden:
            start = first_of.get(target)
            if start is not None:
                hidden.update(range(start, index + 1))
    return hidden


def _fold_compaction(view: list[Event], event: Event, compaction: EventCompaction) -> None:
    """Replace the events of ``view`` that ``compaction`` covers by its summary (in place)."""
    start, end = compaction.start_timestamp, compaction.end_timestamp
    kept: list[Event] = []
    position = None
    for item in view:
        if start <= item.timestamp <= end:
            if position is None:
                position = len(kept)
            continue
        kept.append(item)
    if position is None:
        position = len(kept)
    kept.insert(position, summary_event(event, compaction))
    view[:] = kept


def extend_view(
    view: list[Event] | None, events: Sequence[Event], seen: int
) -> tuple[list[Event] | None, bool]:
    """The view of ``events`` given ``view``, the view of their first ``seen``, and whether
    it was extended by appending only.

    ``None`` stands for a log that is its own view (no rewind or compaction so far). A
    rewind, or the first compaction, rebuilds the view from the whole log; a later
    compaction rewrites ``view`` in place. Either way the answer's flag is False: what was
    derived from the view's earlier items no longer holds.
    """
    appended_only = True
    for index in range(seen, len(events)):
        event = events[index]
        actions = event.actions
        compaction = actions.compaction
        if actions.rewind_before_invocation_id is not None or (
            view is None and compaction is not None
        ):
            return model_view(events), False
        if view is None:
            continue
        if compaction is not None:
            _fold_compaction(view, event, compaction)
            appended_only = False
        else:
            view.append(event)
    return view, appended_only
