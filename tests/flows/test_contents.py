"""The model's conversation built from session events (flows/contents.py)."""

from __future__ import annotations

import random

from eventide import Event, types
from eventide.flows.contents import ContentsCache, build_contents
from eventide.models.llm_request import Conversation


def text(author: str, value: str, branch: str | None = None) -> Event:
    role = "user" if author == "user" else "model"
    return Event(
        author=author,
        branch=branch,
        content=types.Content(role=role, parts=[types.Part(text=value)]),
    )


def call(author: str, call_id: str, name: str = "tool") -> Event:
    part = types.Part(function_call=types.FunctionCall(id=call_id, name=name, args={"q": call_id}))
    return Event(author=author, content=types.Content(role="model", parts=[part]))


def response(author: str, call_id: str, result: str, name: str = "tool") -> Event:
    part = types.Part(
        function_response=types.FunctionResponse(id=call_id, name=name, response={"r": result})
    )
    return Event(author=author, content=types.Content(role="user", parts=[part]))


def shape(contents: list[types.Content]) -> list[tuple[str | None, str]]:
    out = []
    for content in contents:
        for part in content.parts or ():
            if part.text is not None:
                out.append((content.role, part.text))
            elif part.function_call is not None:
                out.append((content.role, f"call {part.function_call.id}"))
            elif part.function_response is not None:
                out.append(
                    (
                        content.role,
                        f"response {part.function_response.id}={part.function_response.response}",
                    )
                )
    return out


def test_calls_are_followed_by_their_latest_response() -> None:
    """Issue 3: each function call is paired with its response; a long-running call answered
    again later uses the latest answer, placed right after the call. Issue 14 (google-adk's
    rule): while that answer is the latest event, the conversation ends at the call and its
    answer; once the model replied, the turns in between are back."""
    events = [
        text("user", "go"),
        call("a", "c1"),
        response("a", "c1", "pending"),
        text("a", "waiting"),
        text("user", "any news?"),
        response("user", "c1", "done"),
    ]
    assert shape(build_contents(events, agent_name="a", branch=None)) == [
        ("user", "go"),
        ("model", "call c1"),
        ("user", "response c1={'r': 'done'}"),
    ]
    events.append(text("a", "It is done."))
    assert shape(build_contents(events, agent_name="a", branch=None)) == [
        ("user", "go"),
        ("model", "call c1"),
        ("user", "response c1={'r': 'done'}"),
        ("model", "waiting"),
        ("user", "any news?"),
        ("model", "It is done."),
    ]


def test_other_agents_turns_are_presented_as_context() -> None:
    """Issue 3: other agents' turns appear as user-role context, not as the model's own."""
    events = [
        text("user", "hi"),
        text("other", "I am other"),
        call("other", "c9"),
        response("other", "c9", "x"),
    ]
    assert shape(build_contents(events, agent_name="a", branch=None)) == [
        ("user", "hi"),
        ("user", "For context:"),
        ("user", "[other] said: I am other"),
        ("user", "For context:"),
        ("user", '[other] called tool `tool` with parameters: {"q": "c9"}'),
        ("user", "For context:"),
        ("user", '[other] `tool` tool returned result: {"r": "x"}'),
    ]


def test_branch_filtering() -> None:
    """Issue 4: a branch sees its own events and its ancestors', never a sibling's."""
    events = [
        text("user", "start"),
        text("a", "root level", branch=None),
        text("a", "mine", branch="par.a"),
        text("b", "sibling", branch="par.b"),
        text("a", "deeper", branch="par.a.x"),
    ]
    visible = shape(build_contents(events, agent_name="a", branch="par.a"))
    assert visible == [("user", "start"), ("model", "root level"), ("model", "mine")]
    gathering = shape(build_contents(events, agent_name="a", branch=None))
    assert ("user", "[b] said: sibling") in gathering and ("model", "deeper") in gathering


def test_synthetic_requests_are_left_out() -> None:
    """Confirmation requests the runtime synthesized never reach the model."""
    events = [
        text("user", "delete it"),
        call("a", "c1"),
        response("a", "c1", "waiting"),
        call("a", "s1", name="eventide_request_confirmation"),
        response("user", "s1", "yes", name="eventide_request_confirmation"),
        response("a", "c1", "deleted"),
    ]
    assert shape(build_contents(events, agent_name="a", branch=None)) == [
        ("user", "delete it"),
        ("model", "call c1"),
        ("user", "response c1={'r': 'deleted'}"),
    ]


def test_current_turn_only() -> None:
    """include_contents='none': only the events from the last user message on."""
    events = [text("user", "one"), text("a", "first"), text("user", "two"), call("a", "c1")]
    assert shape(build_contents(events, agent_name="a", branch=None, current_turn_only=True)) == [
        ("user", "two"),
        ("model", "call c1"),
    ]


def test_incremental_cache_equals_building_from_scratch() -> None:
    """The per-session cache gives exactly what building from scratch gives, at every step,
    whatever the mix of events; a log that no longer extends the cached prefix is rebuilt."""
    rng = random.Random(7)
    cache = ContentsCache()
    events: list[Event] = []
    open_calls: list[str] = []
    for step in range(400):
        roll = rng.random()
        if roll < 0.25:
            events.append(text("user", f"u{step}"))
        elif roll < 0.45:
            events.append(text("a", f"a{step}"))
        elif roll < 0.6:
            call_id = f"c{step}"
            events.append(call(rng.choice(["a", "b"]), call_id))
            open_calls.append(call_id)
        elif roll < 0.85 and open_calls:
            events.append(response("a", rng.choice(open_calls), f"r{step}"))
        else:
            events.append(text("b", f"b{step}"))
        if rng.random() < 0.3:
            got = cache.contents("s", events, agent_name="a", branch=None)
            assert shape(got) == shape(build_contents(events, agent_name="a", branch=None)), step
    rewritten = events[:50]
    assert shape(cache.contents("s", rewritten, agent_name="a", branch=None)) == shape(
        build_contents(rewritten, agent_name="a", branch=None)
    )


def test_agents_of_one_session_share_what_they_make_of_others_events() -> None:
    """The cache builds a user message, or another agent's text as context, once per session
    for every agent that is not its author (a workflow's pipeline of agents reads each
    earlier node's words); each agent's conversation still equals building from scratch,
    whatever the mix of calls, answers and agents."""
    rng = random.Random(5)
    cache = ContentsCache()
    events: list[Event] = [text("user", "start")]
    open_calls: list[str] = []
    agents = ("a", "b", "c")
    for step in range(300):
        roll = rng.random()
        author = rng.choice(agents)
        if roll < 0.3:
            events.append(text("user", f"u{step}"))
        elif roll < 0.6:
            events.append(text(author, f"{author}{step}"))
        elif roll < 0.75:
            call_id = f"c{step}"
            events.append(call(author, call_id))
            open_calls.append(call_id)
        elif open_calls:
            events.append(response(author, rng.choice(open_calls), f"r{step}"))
        if rng.random() < 0.4:
            for agent in agents:
                got = cache.contents("s", events, agent_name=agent, branch=None)
                expected = build_contents(events, agent_name=agent, branch=None)
                assert shape(got) == shape(expected), (step, agent)
    first = events[0]
    assert first.author == "user"
    made = [cache.contents("s", events, agent_name=agent, branch=None)[0] for agent in agents]
    assert made[0] is made[1] is made[2]
    spoken = next(e for e in events if e.author == "a" and e.text)
    index = events.index(spoken)
    for_b = build_contents(events[: index + 1], agent_name="b", branch=None)[-1]
    assert shape([for_b]) == [("user", "For context:"), ("user", f"[a] said: {spoken.text}")]
    seen_by = [
        next(
            c
            for c in cache.contents("s", events, agent_name=agent, branch=None)
            if shape([c]) == shape([for_b])
        )
        for agent in ("b", "c")
    ]
    assert seen_by[0] is seen_by[1]


def test_one_cache_follows_rewinds_and_compactions() -> None:
    """Issue 32, the conversation cache's one validity rule: with rewinds and compactions
    mixed in (which rewrite the model's view), each agent's cached conversation and the
    cached view equal what building from the whole log gives, at every step."""
    from eventide.events import EventActions, EventCompaction
    from eventide.history.model_view import model_view

    rng = random.Random(11)
    cache = ContentsCache()
    events: list[Event] = []
    for step in range(300):
        invocation = f"inv{step // 3}"
        roll = rng.random()
        if roll < 0.06 and len(events) > 4:
            covered = events[rng.randrange(len(events) - 3) : -2]
            summary = types.Content(role="model", parts=[types.Part(text=f"sum{step}")])
            compaction = EventCompaction(
                start_timestamp=covered[0].timestamp,
                end_timestamp=covered[-1].timestamp,
                compacted_content=summary,
            )
            event = Event(author="a", actions=EventActions(compaction=compaction))
        elif roll < 0.1 and events:
            target = rng.choice(events).invocation_id
            event = Event(author="user", actions=EventActions(rewind_before_invocation_id=target))
        else:
            event = text(rng.choice(["user", "a", "b"]), f"t{step}")
        event.invocation_id = invocation
        event.timestamp = float(step)
        events.append(event)
        if rng.random() < 0.4:
            expected_view = model_view(events)
            assert [e.id for e in cache.view("s", events)] == [e.id for e in expected_view]
            for agent in ("a", "b"):
                got = cache.contents("s", events, agent_name=agent, branch=None)
                assert shape(got) == shape(
                    build_contents(expected_view, agent_name=agent, branch=None)
                ), (step, agent)
    # The check can fail: the log's view left events out by the end.
    assert len(model_view(events)) < len(events) - 10


def test_the_conversation_keeps_its_translations_only_while_it_grows() -> None:
    """Issue 32, the one validity rule reaching the connectors: every request of a growing
    conversation carries the same ``translations`` dict; an answer to an earlier call (the
    conversation is rewritten, or cut at that call) and a session that no longer extends
    what the cache saw each bring a new one."""
    cache = ContentsCache()
    events = [text("user", "hi"), call("a", "c1"), response("a", "c1", "r1")]

    def ask() -> dict[str, object]:
        got = cache.contents("s", events, agent_name="a", branch=None)
        assert isinstance(got, Conversation)
        return got.translations

    first = ask()
    events += [text("a", "done"), text("user", "more"), call("a", "c2")]
    assert ask() is first
    events.append(response("a", "c1", "r1 again"))  # answers c1 again: c2 ends the cut
    cut = ask()
    assert cut is not first
    events.append(response("a", "c2", "r2"))
    after = ask()
    assert after is not first and after is not cut
    assert ask() is after
    events[:] = events[:2]  # a shorter log (deleted and recreated): built afresh
    assert ask() is not after


def test_current_turn_starts_at_another_agents_message() -> None:
    """google-adk 2.13's include_contents='none': the current turn starts at the last message
    of the user or of another agent (the agent before this one in a sequence), so the model
    sees that agent's answer and not the user's earlier request; a transfer to this agent
    does not start a turn. Before, Eventide's turn started at the user's message."""
    transfer = Event(
        author="root",
        content=types.Content(
            role="model",
            parts=[
                types.Part(
                    function_call=types.FunctionCall(
                        id="t1", name="transfer_to_agent", args={"agent_name": "b"}
                    )
                )
            ],
        ),
    )
    sequence = [text("user", "write a poem"), text("a", "Draft: roses"), call("b", "c1")]
    assert shape(build_contents(sequence, agent_name="b", branch=None, current_turn_only=True)) == [
        ("user", "For context:"),
        ("user", "[a] said: Draft: roses"),
        ("model", "call c1"),
    ]
    transferred = [text("user", "help"), transfer]
    assert shape(build_contents(transferred, agent_name="b", branch=None, current_turn_only=True))[
        0
    ] == ("user", "help")
