"""The model's conversation built from session events (flows/contents.py)."""

from __future__ import annotations

import random

from eventide import Event, types
from eventide.flows.contents import ContentsCache, build_contents


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
