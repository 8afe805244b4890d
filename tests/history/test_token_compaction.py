"""Token-threshold compaction (``EventsCompactionConfig(token_threshold=T,
event_retention_size=R)``): after an invocation whose last model call's prompt reached ``T``
tokens, the events since the last compaction are summarised except the last ``R``."""

from __future__ import annotations

import pydantic
import pytest

from eventide import App, LlmAgent, Runner, types
from eventide.events import Event, EventActions, EventCompaction
from eventide.history.compaction import (
    BaseEventsSummarizer,
    EventsCompactionConfig,
    LlmEventSummarizer,
    compact_if_due,
)
from eventide.history.model_view import SUMMARY_PREFIX
from eventide.history.token_compaction import prompt_tokens_now, token_events_to_compact
from eventide.models.llm_request import LlmRequest
from eventide.models.llm_response import LlmResponse
from eventide.sessions.in_memory_session_service import InMemorySessionService
from eventide.testing import FunctionModel, ScriptedModel


def said(ts: float, inv: str, text: str, tokens: int | None = None) -> Event:
    usage = None if tokens is None else types.UsageMetadata(prompt_token_count=tokens)
    return Event(
        timestamp=ts,
        invocation_id=inv,
        author="user",
        content=types.Content(role="user", parts=[types.Part(text=text)]),
        usage_metadata=usage,
    )


def call(ts: float, inv: str, call_id: str) -> Event:
    part = types.Part(function_call=types.FunctionCall(id=call_id, name="tool", args={}))
    return Event(
        timestamp=ts,
        invocation_id=inv,
        author="agent",
        content=types.Content(role="model", parts=[part]),
    )


def answer(ts: float, inv: str, call_id: str, tokens: int | None = None) -> Event:
    part = types.Part(
        function_response=types.FunctionResponse(id=call_id, name="tool", response={"ok": 1})
    )
    usage = None if tokens is None else types.UsageMetadata(prompt_token_count=tokens)
    return Event(
        timestamp=ts,
        invocation_id=inv,
        author="agent",
        content=types.Content(role="user", parts=[part]),
        usage_metadata=usage,
    )


def summary(start: float, end: float, text: str, at: float) -> Event:
    return Event(
        timestamp=at,
        invocation_id=f"c{at}",
        author="user",
        actions=EventActions(
            compaction=EventCompaction(
                start_timestamp=start,
                end_timestamp=end,
                compacted_content=types.Content(role="model", parts=[types.Part(text=text)]),
            )
        ),
    )


def labels(events: list[Event] | None) -> list[str]:
    assert events is not None
    out: list[str] = []
    for event in events:
        compaction = event.actions.compaction
        if compaction is not None:
            out.append(f"S:{compaction.compacted_content.parts[0].text}")  # type: ignore[index]
        else:
            out.append(event.invocation_id)
    return out


# --- the config ---
def test_config_takes_either_pair_or_both() -> None:
    both = EventsCompactionConfig(
        compaction_interval=2, overlap_size=1, token_threshold=50_000, event_retention_size=5
    )
    assert (both.token_threshold, both.event_retention_size) == (50_000, 5)
    tokens = EventsCompactionConfig(token_threshold=10, event_retention_size=0)
    assert tokens.compaction_interval is None and tokens.overlap_size is None
    window = EventsCompactionConfig(compaction_interval=2, overlap_size=0)
    assert window.token_threshold is None and window.event_retention_size is None


@pytest.mark.parametrize(
    ("fields", "says"),
    [
        ({}, "needs a trigger"),
        ({"compaction_interval": 2}, "compaction_interval and overlap_size"),
        ({"overlap_size": 0}, "compaction_interval and overlap_size"),
        ({"token_threshold": 10}, "token_threshold and event_retention_size"),
        ({"event_retention_size": 3}, "token_threshold and event_retention_size"),
        ({"token_threshold": 0, "event_retention_size": 0}, "greater than 0"),
        ({"token_threshold": 5, "event_retention_size": -1}, "greater than or equal to 0"),
        ({"compaction_interval": 0, "overlap_size": 0}, "greater than 0"),
        ({"compaction_interval": 1, "overlap_size": -1}, "greater than or equal to 0"),
        ({"compaction_interval": 1, "overlap_size": 0, "every": 3}, "Extra inputs"),
    ],
)
def test_config_refuses_half_a_pair_no_pair_and_bad_values(
    fields: dict[str, int], says: str
) -> None:
    with pytest.raises(pydantic.ValidationError, match=says):
        EventsCompactionConfig.model_validate(fields)


# --- the trigger ---
def test_the_last_model_calls_prompt_count_is_the_size() -> None:
    events = [said(1, "i1", "x" * 400, tokens=7), said(2, "i2", "y" * 40)]
    assert prompt_tokens_now(events) == 7  # the reported count, not the text's length


def test_a_count_from_before_the_latest_compaction_is_stale() -> None:
    """Without a count since the summary, the estimate is 4 characters a token over what
    the model sees: the summary, what it left visible, and what came after."""
    events = [
        said(1, "i1", "a" * 40, tokens=900),
        said(2, "i2", "b" * 40, tokens=950),
        summary(1, 1, "S", at=3),
        said(4, "i3", "c" * 20),
    ]
    assert prompt_tokens_now(events) == (1 + 40 + 20) // 4


def test_below_the_threshold_nothing_is_due_and_equal_is_due() -> None:
    events = [said(1, "i1", "e1"), said(2, "i2", "e2", tokens=99)]
    assert token_events_to_compact(events, threshold=100, retention=1) is None
    events[-1] = said(2, "i2", "e2", tokens=100)
    assert labels(token_events_to_compact(events, threshold=100, retention=1)) == ["i1"]


# --- what is summarised ---
def test_the_last_events_are_kept() -> None:
    events = [said(float(n), f"i{n}", f"e{n}") for n in range(1, 5)]
    events.append(said(5, "i5", "e5", tokens=100))
    assert labels(token_events_to_compact(events, threshold=50, retention=2)) == [
        "i1",
        "i2",
        "i3",
    ]
    assert labels(token_events_to_compact(events, threshold=50, retention=0)) == [
        "i1",
        "i2",
        "i3",
        "i4",
        "i5",
    ]
    assert token_events_to_compact(events, threshold=50, retention=5) is None


def test_the_previous_summary_comes_first_and_what_it_covers_is_not_repeated() -> None:
    events = [
        said(1, "i1", "e1"),
        said(2, "i2", "e2"),
        summary(1, 2, "1-2", at=2.5),
        said(3, "i3", "e3"),
        said(4, "i4", "e4"),
        said(5, "i5", "e5"),
        said(6, "i6", "e6", tokens=100),
    ]
    assert labels(token_events_to_compact(events, threshold=50, retention=2)) == [
        "S:1-2",
        "i3",
        "i4",
    ]


def test_the_latest_summary_in_log_order_is_the_seed() -> None:
    events = [said(float(n), f"i{n}", f"e{n}") for n in range(1, 4)]
    events += [
        said(15, "i15", "e15"),
        summary(15, 15, "15", at=16),
        summary(1, 3, "1-3", at=17),
        said(18, "i18", "e18"),
        said(19, "i19", "e19", tokens=120),
    ]
    assert labels(token_events_to_compact(events, threshold=50, retention=1)) == [
        "S:1-3",
        "i15",
        "i18",
    ]


def test_no_summary_when_what_it_replaces_is_smaller_than_the_last_one() -> None:
    """The prompt is over the threshold, but the two new events hold fewer characters than
    the previous summary: a new one would not shrink the prompt, so none is written until
    enough has been said."""
    events = [
        said(1, "i1", "e1"),
        summary(1, 1, "x" * 30, at=1.5),
        said(2, "i2", "a" * 10),
        said(3, "i3", "b" * 10),
        said(4, "i4", "kept", tokens=100),
    ]
    assert token_events_to_compact(events, threshold=50, retention=1) is None
    events.insert(-1, said(3.5, "i35", "c" * 11))
    assert labels(token_events_to_compact(events, threshold=50, retention=1)) == [
        f"S:{'x' * 30}",
        "i2",
        "i3",
        "i35",
    ]


def test_a_kept_response_keeps_its_call() -> None:
    events = [said(1, "i1", "e1"), call(2, "i2", "c1"), answer(3, "i2", "c1", tokens=100)]
    assert labels(token_events_to_compact(events, threshold=50, retention=1)) == ["i1"]


def test_the_stretch_stops_before_a_call_still_unanswered() -> None:
    events = [said(1, "i1", "e1"), call(2, "i2", "pending"), said(3, "i3", "e3", tokens=100)]
    assert labels(token_events_to_compact(events, threshold=50, retention=0)) == ["i1"]
    events.insert(0, call(0.5, "i0", "pending-too"))
    assert token_events_to_compact(events, threshold=50, retention=0) is None


def test_an_answered_call_is_summarised_with_its_answer() -> None:
    events = [call(1, "i1", "c1"), answer(2, "i1", "c1"), said(3, "i2", "e3", tokens=100)]
    assert labels(token_events_to_compact(events, threshold=50, retention=1)) == ["i1", "i1"]


# --- with the Runner ---
class _Recorder(BaseEventsSummarizer):
    def __init__(self) -> None:
        self.inputs: list[list[str]] = []
        self.inner = LlmEventSummarizer(llm=ScriptedModel(responses=["SUM1", "SUM2", "SUM3"]))

    async def maybe_summarize_events(self, *, events: list[Event]) -> Event | None:
        self.inputs.append(labels(events))
        return await self.inner.maybe_summarize_events(events=events)


async def test_the_runner_compacts_when_the_prompt_passes_the_threshold() -> None:
    """The model reports its prompt as 10 tokens per content: with a threshold of 45 the
    third turn's prompt (5 contents) triggers a summary that keeps the last 2 events."""
    requests: list[LlmRequest] = []

    def reply(request: LlmRequest) -> LlmResponse:
        requests.append(request)
        return LlmResponse(
            content=types.Content(role="model", parts=[types.Part(text=f"r{len(requests)}")]),
            usage_metadata=types.UsageMetadata(prompt_token_count=10 * len(request.contents)),
        )

    recorder = _Recorder()
    app = App(
        name="app",
        root_agent=LlmAgent(name="chat", model=FunctionModel(function=reply)),
        events_compaction_config=EventsCompactionConfig(
            token_threshold=45, event_retention_size=2, summarizer=recorder
        ),
    )
    service = InMemorySessionService()
    runner = Runner(app=app, session_service=service)
    session = await service.create_session(app_name="app", user_id="u", session_id="s")
    for text in ("m1", "m2", "m3", "m4"):
        async for _ in runner.run_async(user_id="u", session_id=session.id, new_message=text):
            pass
    # Prompts of 1, 3, 5 contents (10, 30, 50 tokens): the third turn's 50 >= 45; the
    # fourth's is 4 contents (40 tokens), below it again.
    assert [len(r.contents) for r in requests] == [1, 3, 5, 4]
    assert len(recorder.inputs) == 1
    assert len(recorder.inputs[0]) == 4  # m1, r1, m2, r2
    stored = await service.get_session(app_name="app", user_id="u", session_id="s")
    assert stored is not None
    compactions = [e for e in stored.events if e.actions.compaction is not None]
    assert len(compactions) == 1
    # The fourth request: the summary, the 2 kept events (m3, r3), then m4.
    texts = ["".join(p.text or "" for p in c.parts or ()) for c in requests[3].contents]
    assert texts[0].startswith(SUMMARY_PREFIX) and texts[0].endswith("SUM1")
    assert texts[1:] == ["m3", "r3", "m4"]


async def test_token_compaction_goes_first_and_the_window_waits() -> None:
    """With both triggers, a token-threshold summary this turn means no window summary."""
    recorder = _Recorder()
    config = EventsCompactionConfig(
        compaction_interval=1,
        overlap_size=0,
        token_threshold=50,
        event_retention_size=1,
        summarizer=recorder,
    )
    events = [said(1, "i1", "e1"), said(2, "i2", "e2", tokens=100)]
    written = await compact_if_due(events, config, recorder)
    assert written is not None and written.actions.compaction is not None
    assert recorder.inputs == [["i1"]]
    # Below the threshold the window decides, as before.
    events = [said(1, "i1", "e1"), said(2, "i2", "e2", tokens=10)]
    await compact_if_due(events, config, recorder)
    assert recorder.inputs[-1] == ["i1", "i2"]
