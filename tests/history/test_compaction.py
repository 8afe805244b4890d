"""Event compaction (``App(events_compaction_config=...)``): after every N invocations a
summary event stands in for older events in the model's contents; the log keeps them all."""

from __future__ import annotations

from typing import Any

from eventide import App, LlmAgent, Runner, types
from eventide.events import Event
from eventide.history.compaction import (
    COMPACTION_FAILED,
    EventsCompactionConfig,
    LlmEventSummarizer,
)
from eventide.history.model_view import SUMMARY_PREFIX
from eventide.models.llm_request import LlmRequest
from eventide.models.llm_response import LlmResponse
from eventide.testing import FunctionModel, ScriptedModel
from tests.history.conftest import Stores


def reply(request: LlmRequest) -> str:
    last = request.contents[-1].parts or [types.Part()]
    return f"reply to {last[-1].text}"


def make_runner(
    stores: Stores, summarizer_model: Any, *, interval: int = 2, overlap: int = 1
) -> tuple[Runner, FunctionModel]:
    model = FunctionModel(function=reply)
    config = EventsCompactionConfig(
        compaction_interval=interval,
        overlap_size=overlap,
        summarizer=LlmEventSummarizer(llm=summarizer_model),
    )
    app = App(
        name=stores.app,
        root_agent=LlmAgent(name="chat", model=model),
        events_compaction_config=config,
    )
    runner = Runner(app=app, session_service=stores.sessions, artifact_service=stores.artifacts)
    return runner, model


async def say(runner: Runner, stores: Stores, text: str) -> list[Event]:
    return [
        e
        async for e in runner.run_async(user_id=stores.user, session_id="s", new_message=text)
        if not e.partial
    ]


def request_texts(request: LlmRequest) -> list[tuple[str | None, str]]:
    return [(c.role, "".join(p.text or "" for p in c.parts or ())) for c in request.contents]


def prompt_of(request: LlmRequest) -> str:
    (content,) = request.contents
    (part,) = content.parts or []
    return part.text or ""


async def stored_events(stores: Stores) -> list[Event]:
    session = await stores.sessions.get_session(
        app_name=stores.app, user_id=stores.user, session_id="s"
    )
    assert session is not None
    return session.events


async def test_compaction_every_n_invocations_and_the_exact_model_request(
    stores: Stores,
) -> None:
    """Rule: after every ``compaction_interval`` invocations a compaction event (author
    user, ``actions.compaction`` with the covered time range and the summary) is appended;
    the next request carries the summary instead of the covered events; the summarizer
    reads the previous summary, the overlap and the new turns; the log keeps every event."""
    summarizer = ScriptedModel(responses=["S1: m0 and m1", "S2: up to m3"])
    runner, model = make_runner(stores, summarizer)
    await stores.sessions.create_session(app_name=stores.app, user_id=stores.user, session_id="s")

    await say(runner, stores, "m0")
    assert summarizer.calls == 0
    second = await say(runner, stores, "m1")

    compaction_event = second[-1]
    compaction = compaction_event.actions.compaction
    assert compaction is not None
    assert compaction_event.author == "user"
    assert compaction_event.content is None
    log = await stored_events(stores)
    assert log[-1].id == compaction_event.id
    assert (compaction.start_timestamp, compaction.end_timestamp) == (
        log[0].timestamp,
        log[3].timestamp,
    )
    assert compaction.compacted_content == types.Content(
        role="model", parts=[types.Part(text="S1: m0 and m1")]
    )
    assert prompt_of(summarizer.requests[0]).endswith(
        "\n\nuser: m0\nchat: reply to m0\nuser: m1\nchat: reply to m1"
    )

    await say(runner, stores, "m2")
    assert request_texts(model.requests[-1]) == [
        ("user", SUMMARY_PREFIX + "S1: m0 and m1"),
        ("user", "m2"),
    ]
    await say(runner, stores, "m3")
    assert prompt_of(summarizer.requests[1]).endswith(
        "\n\n[summary of the earlier conversation]: S1: m0 and m1\n"
        "user: m1\nchat: reply to m1\n"
        "user: m2\nchat: reply to m2\n"
        "user: m3\nchat: reply to m3"
    )
    second_compaction = (await stored_events(stores))[-1].actions.compaction
    assert second_compaction is not None
    assert second_compaction.start_timestamp == compaction.start_timestamp

    await say(runner, stores, "m4")
    assert request_texts(model.requests[-1]) == [
        ("user", SUMMARY_PREFIX + "S2: up to m3"),
        ("user", "m4"),
    ]
    log = await stored_events(stores)
    assert [e.text for e in log if e.content is not None] == [
        "m0",
        "reply to m0",
        "m1",
        "reply to m1",
        "m2",
        "reply to m2",
        "m3",
        "reply to m3",
        "m4",
        "reply to m4",
    ]
    assert sum(e.actions.compaction is not None for e in log) == 2


async def test_a_failing_summarizer_leaves_the_turn_uncompacted_with_a_warning(
    stores: Stores,
) -> None:
    """Rule: when the summarizer fails, the turn's events are all committed, a warning event
    says so, the next request is uncompacted, and compaction is tried again next time."""
    summarizer = ScriptedModel(responses=[RuntimeError("summarizer down"), "S: m0 to m2"])
    runner, model = make_runner(stores, summarizer, overlap=0)
    await stores.sessions.create_session(app_name=stores.app, user_id=stores.user, session_id="s")
    await say(runner, stores, "m0")

    events = await say(runner, stores, "m1")

    assert [e.text for e in events[:-1]] == ["reply to m1"]
    warning = events[-1]
    assert warning.custom_metadata is not None
    assert warning.custom_metadata["eventide_warning"] == COMPACTION_FAILED
    assert "RuntimeError: summarizer down" in warning.custom_metadata["message"]
    assert warning.actions.compaction is None
    assert (await stored_events(stores))[-1].id == warning.id

    await say(runner, stores, "m2")
    assert request_texts(model.requests[-1]) == [
        ("user", "m0"),
        ("model", "reply to m0"),
        ("user", "m1"),
        ("model", "reply to m1"),
        ("user", "m2"),
    ]
    log = await stored_events(stores)
    assert log[-1].actions.compaction is not None
    assert prompt_of(summarizer.requests[1]).endswith(
        "user: m0\nchat: reply to m0\nuser: m1\nchat: reply to m1\nuser: m2\nchat: reply to m2"
    )
    await say(runner, stores, "m3")
    assert request_texts(model.requests[-1]) == [
        ("user", SUMMARY_PREFIX + "S: m0 to m2"),
        ("user", "m3"),
    ]


async def test_rewinding_past_a_compaction_voids_its_summary(stores: Stores) -> None:
    """Rule: a compaction written after the invocation rewound to is rewound too: the model
    sees the earlier summary and the raw turns it did not cover, never a summary of
    rewound turns."""
    summarizer = ScriptedModel(responses=["S1", "S2"])
    runner, model = make_runner(stores, summarizer, overlap=0)
    await stores.sessions.create_session(app_name=stores.app, user_id=stores.user, session_id="s")
    invocations = [(await say(runner, stores, f"m{i}"))[0].invocation_id for i in range(4)]
    assert summarizer.calls == 2

    await runner.rewind_async(
        user_id=stores.user, session_id="s", rewind_before_invocation_id=invocations[3]
    )
    await say(runner, stores, "again")

    assert request_texts(model.requests[-1]) == [
        ("user", SUMMARY_PREFIX + "S1"),
        ("user", "m2"),
        ("model", "reply to m2"),
        ("user", "again"),
    ]


async def test_the_default_summarizer_is_the_root_agents_model(stores: Stores) -> None:
    """Rule: without a summarizer, the root agent's model writes the summary (here a
    ScriptedModel, offline)."""
    model = ScriptedModel(responses=["a0", "a1", "the summary", "a2"])
    app = App(
        name=stores.app,
        root_agent=LlmAgent(name="chat", model=model),
        events_compaction_config=EventsCompactionConfig(compaction_interval=2, overlap_size=0),
    )
    runner = Runner(app=app, session_service=stores.sessions)
    await stores.sessions.create_session(app_name=stores.app, user_id=stores.user, session_id="s")
    for text in ("m0", "m1", "m2"):
        await say(runner, stores, text)

    assert request_texts(model.requests[3]) == [
        ("user", SUMMARY_PREFIX + "the summary"),
        ("user", "m2"),
    ]


async def test_the_compaction_event_carries_the_summarizers_usage() -> None:
    """google-adk 2.13 records what the summary cost (the model's ``usage_metadata``) on the
    compaction event; before, Eventide's compaction events had none."""
    usage = types.UsageMetadata(prompt_token_count=10, candidates_token_count=5)
    model = ScriptedModel(
        responses=[
            LlmResponse(
                content=types.Content(role="model", parts=[types.Part(text="Summary")]),
                usage_metadata=usage,
            )
        ]
    )
    events = [
        Event(
            author="user",
            timestamp=1.0,
            content=types.Content(role="user", parts=[types.Part(text="Hello")]),
        ),
        Event(
            author="a",
            timestamp=2.0,
            content=types.Content(role="model", parts=[types.Part(text="Hi")]),
        ),
    ]
    compaction = await LlmEventSummarizer(llm=model).maybe_summarize_events(events=events)
    assert compaction is not None
    assert compaction.usage_metadata == usage
    assert compaction.actions.compaction is not None
    assert compaction.actions.compaction.compacted_content.text == "Summary"
