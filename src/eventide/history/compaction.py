"""Event compaction: keep the model's context bounded as a session grows.

With ``App(events_compaction_config=EventsCompactionConfig(compaction_interval=N,
overlap_size=K))``, after every ``N`` invocations the Runner asks a summarizer for a summary
and appends a compaction event (author ``user``, its own invocation id,
``actions.compaction = EventCompaction(start_timestamp, end_timestamp, compacted_content)``,
ADK's shape). From then on the contents sent to the model carry the summary instead of the
events it covers (see :mod:`eventide.history.model_view`); the raw events stay in the log.

What a compaction covers: the ``N`` (or more) invocations since the previous compaction,
plus the ``K`` invocations before them again (the overlap, so the summary keeps the thread).
The previous summary is part of the summarizer's input and its range is folded into the new
one, so the model sees one summary followed by the recent turns: the request stays bounded
however long the session grows.

With ``token_threshold=T, event_retention_size=R`` instead (or as well), a compaction is due
when the last model call's prompt reached ``T`` tokens and keeps the last ``R`` events as
they are: see :mod:`eventide.history.token_compaction` (checked first).

When the summarizer fails, the turn has already completed: the Runner appends a warning
event (``custom_metadata["eventide_warning"] == "compaction_failed"``) and logs a warning;
the history stays uncompacted and compaction is tried again after the next invocation.
"""

from __future__ import annotations

import json
import logging
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence

from pydantic import BaseModel, ConfigDict, Field, model_validator

from eventide import types
from eventide._ids import new_invocation_id
from eventide.errors import UsageError
from eventide.events import Event, EventActions, EventCompaction
from eventide.history.token_compaction import token_events_to_compact
from eventide.models.base_llm import BaseLlm
from eventide.models.llm_request import LlmRequest
from eventide.runtime.markers import WARNING_KEY
from eventide.sessions.base_session_service import BaseSessionService
from eventide.sessions.session import Session

__all__ = [
    "COMPACTION_FAILED",
    "BaseEventsSummarizer",
    "Compactor",
    "EventsCompactionConfig",
    "LlmEventSummarizer",
    "compact_if_due",
    "events_to_compact",
]

logger = logging.getLogger(__name__)

COMPACTION_FAILED = "compaction_failed"

_DEFAULT_PROMPT = (
    "Summarise the conversation below between a user and an AI agent, so that the agent can "
    "carry on from the summary alone. It may begin with the summary of an earlier part. "
    "Keep: what the user asked for and still wants, decisions made, facts and figures "
    "learned (including tool results and the names of the tools used), and open questions. "
    "Write in the user's language. Be concise.\n\n{conversation}"
)


class BaseEventsSummarizer(ABC):
    """Writes compaction events. Implement :meth:`maybe_summarize_events`."""

    @abstractmethod
    async def maybe_summarize_events(self, *, events: list[Event]) -> Event | None:
        """A compaction event summarising ``events`` (oldest first), or None to skip.

        A compaction event among ``events`` stands for the events it covers: its summary is
        part of the input and its range is part of the new one.
        """


class LlmEventSummarizer(BaseEventsSummarizer):
    """Summarises with a model (any ``BaseLlm``: a provider's, ``ScriptedModel``, the
    offline demo model).

    Args:
        llm: the model that writes the summary.
        prompt_template: the instruction, with ``{conversation}`` where the transcript goes.
    """

    def __init__(self, llm: BaseLlm, prompt_template: str | None = None) -> None:
        template = prompt_template or _DEFAULT_PROMPT
        if "{conversation}" not in template:
            raise UsageError(
                "LlmEventSummarizer(prompt_template=...) must contain '{conversation}', "
                "where the transcript to summarise goes."
            )
        self.llm = llm
        self.prompt_template = template

    async def maybe_summarize_events(self, *, events: list[Event]) -> Event | None:
        if not events:
            return None
        transcript = transcript_of(events)
        if not transcript:
            return None
        prompt = self.prompt_template.replace("{conversation}", transcript)
        request = LlmRequest(
            model=self.llm.model,
            contents=[types.Content(role="user", parts=[types.Part(text=prompt)])],
        )
        texts: list[str] = []
        usage = None
        async for response in self.llm.generate_content_async(request, stream=False):
            if response.partial:
                continue
            usage = response.usage_metadata or usage
            if response.error_code:
                raise RuntimeError(
                    f"the summarizer model answered with an error: {response.error_code}: "
                    f"{response.error_message or ''}"
                )
            if response.content is not None:
                texts.extend(
                    p.text for p in response.content.parts or () if p.text and not p.thought
                )
        summary = "".join(texts).strip()
        if not summary:
            raise RuntimeError("the summarizer model answered with no text")
        start, end = covered_range(events)
        return Event(
            invocation_id=new_invocation_id(),
            author="user",
            # What the summary cost, as google-adk records it on its compaction event.
            usage_metadata=usage,
            actions=EventActions(
                compaction=EventCompaction(
                    start_timestamp=start,
                    end_timestamp=end,
                    compacted_content=types.Content(role="model", parts=[types.Part(text=summary)]),
                )
            ),
        )


class EventsCompactionConfig(BaseModel):
    """When and how an app's sessions are compacted (``App(events_compaction_config=...)``).

    Two triggers, each a pair of settings given together (at least one pair):

    - every few invocations: ``compaction_interval`` and ``overlap_size``;
    - when the prompt is large: ``token_threshold`` and ``event_retention_size``
      (:mod:`eventide.history.token_compaction`); checked first when both are set.

    A pair given by half, or no pair, is a ``pydantic.ValidationError`` (google-adk's).

    Attributes:
        compaction_interval: compact after this many invocations since the last compaction.
        overlap_size: how many already-compacted invocations the next summary covers again.
        token_threshold: compact after an invocation whose last model call's prompt had at
            least this many tokens.
        event_retention_size: how many of the latest events a token-threshold compaction
            leaves as they are.
        summarizer: writes the summaries; by default an ``LlmEventSummarizer`` on the root
            agent's model.
    """

    model_config = ConfigDict(arbitrary_types_allowed=True, extra="forbid")

    summarizer: BaseEventsSummarizer | None = None
    compaction_interval: int | None = Field(default=None, gt=0)
    overlap_size: int | None = Field(default=None, ge=0)
    token_threshold: int | None = Field(default=None, gt=0)
    event_retention_size: int | None = Field(default=None, ge=0)

    @model_validator(mode="after")
    def _check_pairs(self) -> EventsCompactionConfig:
        if (self.compaction_interval is None) != (self.overlap_size is None):
            raise ValueError(
                "compaction_interval and overlap_size must be set together (overlap_size=0 "
                "for summaries that do not overlap)."
            )
        if (self.token_threshold is None) != (self.event_retention_size is None):
            raise ValueError(
                "token_threshold and event_retention_size must be set together "
                "(event_retention_size=0 to summarise every event)."
            )
        if self.compaction_interval is None and self.token_threshold is None:
            raise ValueError(
                "EventsCompactionConfig needs a trigger: compaction_interval with "
                "overlap_size, or token_threshold with event_retention_size (or both pairs)."
            )
        return self


def transcript_of(events: Sequence[Event]) -> str:
    """The events as plain lines for a summarizer: ``author: text``, tool calls and results."""
    lines: list[str] = []
    for event in events:
        compaction = event.actions.compaction
        if compaction is not None:
            text = "".join(p.text or "" for p in compaction.compacted_content.parts or ())
            lines.append(f"[summary of the earlier conversation]: {text}")
            continue
        content = event.content
        if content is None:
            continue
        for part in content.parts or ():
            if part.thought:
                continue
            if part.text:
                lines.append(f"{event.author}: {part.text}")
            elif part.function_call is not None:
                call = part.function_call
                args = json.dumps(call.args or {}, default=str, ensure_ascii=False)
                lines.append(f"{event.author} called tool {call.name} with {args}")
            elif part.function_response is not None:
                answer = part.function_response
                result = json.dumps(answer.response or {}, default=str, ensure_ascii=False)
                lines.append(f"tool {answer.name} returned {result}")
    return "\n".join(lines)


def covered_range(events: Sequence[Event]) -> tuple[float, float]:
    """The timestamps a compaction of ``events`` covers (a compaction among them brings its
    own range)."""
    starts: list[float] = []
    ends: list[float] = []
    for event in events:
        compaction = event.actions.compaction
        if compaction is not None:
            starts.append(compaction.start_timestamp)
            ends.append(compaction.end_timestamp)
        else:
            starts.append(event.timestamp)
            ends.append(event.timestamp)
    return min(starts), max(ends)


def events_to_compact(
    events: Sequence[Event], *, interval: int, overlap: int
) -> list[Event] | None:
    """The summarizer's input when a compaction is due, else None.

    Reads the log backwards only as far as the last compaction (and ``overlap`` invocations
    before it), so the check costs the same at 10 events as at 5,000. A session with a
    rewind in that stretch is read whole, by the rules of
    :mod:`eventide.history.model_view`.
    """
    tail_start, previous = _tail(events, overlap)
    if tail_start is None:
        # A rewind in the recent stretch: plan over the whole log.
        return _plan(events, 0, interval=interval, overlap=overlap)
    return _plan(events, tail_start, interval=interval, overlap=overlap, previous=previous)


def _tail(events: Sequence[Event], overlap: int) -> tuple[int | None, int | None]:
    """Where the recent stretch starts (None: it holds a rewind) and the last compaction."""
    previous = None
    invocations_before: set[str] = set()
    for index in range(len(events) - 1, -1, -1):
        actions = events[index].actions
        if actions.rewind_before_invocation_id is not None:
            return None, None
        if previous is None:
            if actions.compaction is not None:
                previous = index
                if overlap == 0:
                    return index, previous
            continue
        if actions.compaction is None:
            invocations_before.add(events[index].invocation_id)
            if len(invocations_before) > overlap:
                return index + 1, previous
    return 0, previous


def _plan(
    events: Sequence[Event],
    start: int,
    *,
    interval: int,
    overlap: int,
    previous: int | None = None,
) -> list[Event] | None:
    from eventide.history.model_view import rewound_positions

    window = events[start:]
    hidden: set[int] = rewound_positions(window) if start == 0 else set()
    if start == 0 and previous is None:
        for index in range(len(window) - 1, -1, -1):
            if index not in hidden and window[index].actions.compaction is not None:
                previous = index
                break
    elif previous is not None:
        previous -= start
    # Invocations in order of their first event, visible and not compaction/rewind events.
    order: list[str] = []
    members: dict[str, list[Event]] = {}
    first_at: dict[str, int] = {}
    for index, event in enumerate(window):
        actions = event.actions
        if (
            index in hidden
            or actions.compaction is not None
            or actions.rewind_before_invocation_id is not None
        ):
            continue
        group = members.get(event.invocation_id)
        if group is None:
            group = members[event.invocation_id] = []
            order.append(event.invocation_id)
            first_at[event.invocation_id] = index
        group.append(event)
    if previous is None:
        new = order
        older: list[str] = []
    else:
        new = [i for i in order if first_at[i] > previous]
        older = [i for i in order if first_at[i] < previous]
    if len(new) < interval:
        return None
    chosen = (older[-overlap:] if overlap else []) + new
    summarized: list[Event] = [window[previous]] if previous is not None else []
    for invocation in chosen:
        summarized.extend(members[invocation])
    return summarized


class Compactor:
    """The Runner's side of compaction: after each invocation, append what
    :func:`compact_if_due` returns.

    Args:
        config: the app's settings.
        default_llm: the model of the default summarizer (called only when the config
            names no summarizer; the root agent's model).
    """

    def __init__(self, config: EventsCompactionConfig, default_llm: Callable[[], BaseLlm]) -> None:
        self.config = config
        self._default_llm = default_llm
        self._summarizer = config.summarizer

    async def after_invocation(
        self, session_service: BaseSessionService, session: Session
    ) -> Event | None:
        """Compact ``session`` if due; the committed compaction or warning event, or None."""
        summarizer = self._summarizer
        if summarizer is None:
            summarizer = self._summarizer = LlmEventSummarizer(self._default_llm())
        event = await compact_if_due(session.events, self.config, summarizer)
        if event is None:
            return None
        return await session_service.append_event(session, event)


async def compact_if_due(
    events: Sequence[Event], config: EventsCompactionConfig, summarizer: BaseEventsSummarizer
) -> Event | None:
    """The event to append after an invocation: a compaction event when one is due and the
    summarizer wrote it, a warning event when the summarizer failed, else None."""
    if config.token_threshold is not None and config.event_retention_size is not None:
        chosen = token_events_to_compact(
            events, threshold=config.token_threshold, retention=config.event_retention_size
        )
        if chosen is not None:
            written = await _summarize(summarizer, chosen)
            if written is not None:
                return written
    if config.compaction_interval is None:
        return None
    chosen = events_to_compact(
        events, interval=config.compaction_interval, overlap=config.overlap_size or 0
    )
    if chosen is None:
        return None
    return await _summarize(summarizer, chosen)


async def _summarize(summarizer: BaseEventsSummarizer, chosen: list[Event]) -> Event | None:
    """The summarizer's compaction event, None when it skips, a warning event when it fails."""
    try:
        return await summarizer.maybe_summarize_events(events=chosen)
    except Exception as exc:  # any failure of the summarizer leaves the history as it is
        message = (
            f"Event compaction failed ({type(exc).__name__}: {exc}); the history stays "
            "uncompacted and compaction is tried again after the next invocation."
        )
        logger.warning("%s", message)
        return Event(
            invocation_id=new_invocation_id(),
            author="user",
            custom_metadata={WARNING_KEY: COMPACTION_FAILED, "message": message},
        )
