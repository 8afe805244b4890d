"""Context limits (``LlmAgent(context_limit=ContextLimit(...))``): the last N invocations or
a token budget, never a function call without its response or a response without its call."""

from __future__ import annotations

import pytest

from eventide import App, LlmAgent, Runner, types
from eventide.errors import UsageError
from eventide.events import Event
from eventide.history.compaction import EventsCompactionConfig, LlmEventSummarizer
from eventide.history.context_limits import ContextLimit, approximate_tokens, limited_contents
from eventide.history.model_view import SUMMARY_PREFIX
from eventide.testing import FunctionModel, ScriptedModel
from tests.history.conftest import Stores
from tests.history.helpers import answer, conversation, remember, turn
from tests.history.test_compaction import reply, request_texts, say


async def three_turns_then(stores: Stores, limit: ContextLimit) -> list[tuple[str, str]]:
    """Turns one, two, three, then four; the request of turn four's first model call."""
    model = FunctionModel(function=answer)
    agent = LlmAgent(name="keeper", model=model, tools=[remember], context_limit=limit)
    runner = Runner(
        app_name=stores.app,
        agent=agent,
        session_service=stores.sessions,
        artifact_service=stores.artifacts,
    )
    await stores.sessions.create_session(app_name=stores.app, user_id=stores.user, session_id="s")
    for text in ("one", "two", "three", "four"):
        await turn(runner, stores.user, "s", text)
    return conversation(model.requests[-2])


def one_turn(text: str) -> list[tuple[str, str]]:
    return [
        ("user", text),
        ("model", "call:remember"),
        ("user", "answer:remember"),
        ("model", f"ok {text}"),
    ]


async def test_last_n_invocations(stores: Stores) -> None:
    """Rule: ``max_invocations=N`` sends the last N invocations, the current one included;
    the log keeps everything."""
    request = await three_turns_then(stores, ContextLimit(max_invocations=2))
    assert request == [*one_turn("three"), ("user", "four")]
    session = await stores.sessions.get_session(
        app_name=stores.app, user_id=stores.user, session_id="s"
    )
    assert session is not None and len(session.events) == 16


async def test_a_token_budget_never_splits_a_call_from_its_response(stores: Stores) -> None:
    """Rule: the token budget drops whole turns from the front: with one token a content and
    a budget of 7, the last 7 contents would start with a function response; the request
    starts at the user's "three" instead (5 contents)."""
    request = await three_turns_then(
        stores, ContextLimit(max_tokens=7, token_counter=lambda content: 1)
    )
    assert request == [*one_turn("three"), ("user", "four")]


async def test_the_current_turn_is_never_cut(stores: Stores) -> None:
    """Rule: a budget smaller than the current turn still sends the whole current turn."""
    request = await three_turns_then(stores, ContextLimit(max_tokens=1))
    assert request == [("user", "four")]


def event(invocation: str, author: str, part: types.Part) -> Event:
    role = "model" if author == "agent" else "user"
    return Event(
        invocation_id=invocation, author=author, content=types.Content(role=role, parts=[part])
    )


def test_a_response_whose_call_was_cut_off_is_dropped() -> None:
    """Rule: a long-running tool's call in one invocation and its answer in the next: a
    window holding only the answer drops it (no response without its call); a window
    holding both keeps them next to each other."""
    call = types.FunctionCall(id="c1", name="approve", args={})
    reply = types.FunctionResponse(id="c1", name="approve", response={"ok": True})
    view = [
        event("a", "user", types.Part(text="start")),
        event("a", "agent", types.Part(function_call=call)),
        event("b", "user", types.Part(function_response=reply)),
        event("b", "agent", types.Part(text="approved")),
        event("c", "user", types.Part(text="next")),
    ]

    def roles(limit: ContextLimit) -> list[str]:
        contents = limited_contents(view, limit, agent_name="agent", branch=None)
        return [
            f"{c.role}:{p.text or (p.function_call and 'call') or 'answer'}"
            for c in contents
            for p in c.parts or ()
        ]

    assert roles(ContextLimit(max_invocations=2)) == ["user:next"]
    assert roles(ContextLimit(max_invocations=3)) == [
        "user:start",
        "model:call",
        "user:answer",
        "model:approved",
        "user:next",
    ]


def test_bad_limits_are_refused() -> None:
    """Rule: a limit that limits nothing, or a non-positive one, is a UsageError."""
    with pytest.raises(UsageError, match="needs max_invocations"):
        ContextLimit()
    with pytest.raises(UsageError, match="max_invocations must be at least 1"):
        ContextLimit(max_invocations=0)
    with pytest.raises(UsageError, match="max_tokens must be at least 1"):
        ContextLimit(max_tokens=0)
    assert approximate_tokens(types.Content(role="user", parts=[types.Part(text="x" * 40)])) == 10


async def test_a_compaction_summary_is_not_counted_as_an_invocation(stores: Stores) -> None:
    """Rule: with compaction on, ``max_invocations=N`` counts turns only: the summary is sent
    with the last N invocations when they are all the turns after it, and left out when the
    window starts later (so the request never jumps over unsummarised turns)."""
    model = FunctionModel(function=reply)
    agent = LlmAgent(name="chat", model=model, context_limit=ContextLimit(max_invocations=1))
    config = EventsCompactionConfig(
        compaction_interval=2,
        overlap_size=1,
        summarizer=LlmEventSummarizer(llm=ScriptedModel(responses=["S1", "S2"])),
    )
    app = App(name=stores.app, root_agent=agent, events_compaction_config=config)
    runner = Runner(app=app, session_service=stores.sessions, artifact_service=stores.artifacts)
    await stores.sessions.create_session(app_name=stores.app, user_id=stores.user, session_id="s")
    for text in ("m0", "m1"):  # the second turn ends with the first compaction
        await say(runner, stores, text)

    await say(runner, stores, "m2")
    assert request_texts(model.requests[-1]) == [("user", SUMMARY_PREFIX + "S1"), ("user", "m2")]
    await say(runner, stores, "m3")  # m2 is between the summary and m3: no summary
    assert request_texts(model.requests[-1]) == [("user", "m3")]
    await say(runner, stores, "m4")  # S2 covers up to m3
    assert request_texts(model.requests[-1]) == [("user", SUMMARY_PREFIX + "S2"), ("user", "m4")]
