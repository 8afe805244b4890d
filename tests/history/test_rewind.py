"""Rewind (``Runner.rewind_async``): state in every scope and artifacts go back to before an
invocation, the log keeps everything, and the model no longer sees the rewound turns."""

from __future__ import annotations

import pytest

from eventide.errors import InvocationNotFoundError, SessionNotFoundError
from tests.history.conftest import Stores
from tests.history.helpers import conversation, make_runner, turn


async def three_turns(stores: Stores) -> tuple[list[str], int]:
    """Session ``s`` with turns "one", "two", "three"; their invocation ids and event count."""
    runner, _ = make_runner(stores)
    await stores.sessions.create_session(app_name=stores.app, user_id=stores.user, session_id="s")
    invocations = []
    for text in ("one", "two", "three"):
        events = await turn(runner, stores.user, "s", text)
        invocations.append(events[0].invocation_id)
    session = await stores.sessions.get_session(
        app_name=stores.app, user_id=stores.user, session_id="s"
    )
    assert session is not None
    return invocations, len(session.events)


async def load_text(stores: Stores, filename: str, version: int | None = None) -> str | None:
    part = await stores.artifacts.load_artifact(
        app_name=stores.app, user_id=stores.user, session_id="s", filename=filename, version=version
    )
    return None if part is None else part.text


async def test_rewind_restores_the_sessions_state_and_artifacts_keeping_the_log(
    stores: Stores,
) -> None:
    """Rule: a rewind appends one event restoring the session's own state and artifact
    versions to before the invocation; ``temp:`` is never stored; no event is deleted and no
    artifact version is lost."""
    invocations, count = await three_turns(stores)
    runner, _ = make_runner(stores)

    rewind = await runner.rewind_async(
        user_id=stores.user, session_id="s", rewind_before_invocation_id=invocations[1]
    )

    assert rewind.author == "user"
    assert rewind.invocation_id not in invocations
    assert rewind.content is None
    assert rewind.actions.rewind_before_invocation_id == invocations[1]
    assert rewind.actions.state_delta == {"last": "one"}
    assert rewind.actions.artifact_delta == {"notes.txt": 3}
    session = await stores.sessions.get_session(
        app_name=stores.app, user_id=stores.user, session_id="s"
    )
    assert session is not None
    assert len(session.events) == count + 1
    assert session.events[-1].id == rewind.id
    assert session.events[-1].actions.rewind_before_invocation_id == invocations[1]
    assert session.state["last"] == "one"
    assert "temp:last" not in session.state
    assert await stores.artifacts.list_versions(
        app_name=stores.app, user_id=stores.user, session_id="s", filename="notes.txt"
    ) == [0, 1, 2, 3]
    assert await load_text(stores, "notes.txt") == "one"
    assert [await load_text(stores, "notes.txt", v) for v in range(3)] == ["one", "two", "three"]


async def test_rewind_leaves_shared_app_and_user_data_as_it_is(stores: Stores) -> None:
    """Rule (shared scopes, as google-adk 2.13): ``app:`` and ``user:`` state and ``user:``
    artifacts belong to every session of the app or user, so a rewind of one session leaves
    them as they are, whether this session or another one wrote them last."""
    invocations, _ = await three_turns(stores)
    runner, _ = make_runner(stores)
    await stores.sessions.create_session(
        app_name=stores.app, user_id=stores.user, session_id="other"
    )
    await turn(runner, stores.user, "other", "elsewhere")

    rewind = await runner.rewind_async(
        user_id=stores.user, session_id="s", rewind_before_invocation_id=invocations[1]
    )

    assert not any(k.startswith(("app:", "user:")) for k in rewind.actions.state_delta)
    assert "user:profile.txt" not in rewind.actions.artifact_delta
    for session_id in ("s", "other"):
        session = await stores.sessions.get_session(
            app_name=stores.app, user_id=stores.user, session_id=session_id
        )
        assert session is not None
        assert (session.state["app:last"], session.state["user:last"]) == (
            "elsewhere",
            "elsewhere",
        )
    assert await load_text(stores, "user:profile.txt") == "elsewhere"
    assert await stores.artifacts.list_versions(
        app_name=stores.app, user_id=stores.user, session_id="s", filename="user:profile.txt"
    ) == [0, 1, 2, 3]


async def test_rewind_before_the_first_invocation_clears_what_it_created(stores: Stores) -> None:
    """Rule: keys that did not exist before the invocation are set to None; an artifact that
    did not exist gets a tombstone version: it loads as absent and is no longer listed,
    while its earlier versions stay readable."""
    invocations, _ = await three_turns(stores)
    runner, _ = make_runner(stores)

    rewind = await runner.rewind_async(
        user_id=stores.user, session_id="s", rewind_before_invocation_id=invocations[0]
    )

    assert rewind.actions.state_delta == {"last": None}
    assert rewind.actions.artifact_delta == {"notes.txt": 3}
    assert await load_text(stores, "notes.txt") is None
    assert await load_text(stores, "notes.txt", 3) is None
    assert await load_text(stores, "notes.txt", 2) == "three"
    assert await stores.artifacts.list_artifact_keys(
        app_name=stores.app, user_id=stores.user, session_id="s"
    ) == ["user:profile.txt"]

    # A turn after the rewind saves the file again: it is back, as a new version.
    await turn(runner, stores.user, "s", "four")
    assert await load_text(stores, "notes.txt") == "four"
    assert await stores.artifacts.list_versions(
        app_name=stores.app, user_id=stores.user, session_id="s", filename="notes.txt"
    ) == [0, 1, 2, 3, 4]


async def test_rewind_to_the_first_invocation_restores_the_state_given_at_create(
    stores: Stores,
) -> None:
    """Rule: the value "before" an invocation starts from the state the session was created
    with, so a key set only at ``create_session`` and overwritten later comes back with its
    initial value, not None; a key the turns never touched is left alone."""
    runner, _ = make_runner(stores)
    await stores.sessions.create_session(
        app_name=stores.app,
        user_id=stores.user,
        session_id="s",
        state={"last": "initial", "untouched": [1, 2], "temp:scratch": "never stored"},
    )
    first = await turn(runner, stores.user, "s", "one")
    await turn(runner, stores.user, "s", "two")
    assert await stores.sessions.get_initial_state(
        app_name=stores.app, user_id=stores.user, session_id="s"
    ) == {"last": "initial", "untouched": [1, 2]}

    rewind = await runner.rewind_async(
        user_id=stores.user, session_id="s", rewind_before_invocation_id=first[0].invocation_id
    )

    assert rewind.actions.state_delta["last"] == "initial"
    assert "untouched" not in rewind.actions.state_delta
    session = await stores.sessions.get_session(
        app_name=stores.app, user_id=stores.user, session_id="s"
    )
    assert session is not None
    assert session.state["last"] == "initial"
    assert session.state["untouched"] == [1, 2]
    assert (
        await stores.sessions.get_initial_state(
            app_name=stores.app, user_id=stores.user, session_id="missing"
        )
        is None
    )


async def test_a_turn_after_a_rewind_does_not_see_the_rewound_turns(stores: Stores) -> None:
    """Rule: later turns (and the model's contents) do not see the rewound events."""
    invocations, _ = await three_turns(stores)
    runner, model = make_runner(stores)
    await runner.rewind_async(
        user_id=stores.user, session_id="s", rewind_before_invocation_id=invocations[1]
    )

    events = await turn(runner, stores.user, "s", "four")

    assert conversation(model.requests[0]) == [
        ("user", "one"),
        ("model", "call:remember"),
        ("user", "answer:remember"),
        ("model", "ok one"),
        ("user", "four"),
    ]
    assert events[-1].text == "ok four"
    session = await stores.sessions.get_session(
        app_name=stores.app, user_id=stores.user, session_id="s"
    )
    assert session is not None
    assert session.state["last"] == "four"


async def test_two_rewinds_in_a_row_and_a_rewind_of_a_rewound_invocation(stores: Stores) -> None:
    """Rule: a second rewind goes further back from the visible history; rewinding to an
    invocation already rewound is refused and writes nothing."""
    invocations, _ = await three_turns(stores)
    runner, model = make_runner(stores)
    await runner.rewind_async(
        user_id=stores.user, session_id="s", rewind_before_invocation_id=invocations[2]
    )
    with pytest.raises(InvocationNotFoundError, match="already rewound"):
        await runner.rewind_async(
            user_id=stores.user, session_id="s", rewind_before_invocation_id=invocations[2]
        )
    second = await runner.rewind_async(
        user_id=stores.user, session_id="s", rewind_before_invocation_id=invocations[1]
    )
    assert second.actions.state_delta == {"last": "one"}
    await turn(runner, stores.user, "s", "four")
    assert [what for _, what in conversation(model.requests[0])][:4] == [
        "one",
        "call:remember",
        "answer:remember",
        "ok one",
    ]
    assert len(model.requests[0].contents) == 5


async def test_rewind_to_an_unknown_invocation_or_another_sessions_fails_cleanly(
    stores: Stores,
) -> None:
    """Rule: rewinding to an invocation that is not in the session (unknown, or of another
    session) raises InvocationNotFoundError naming it, and writes nothing."""
    invocations, count = await three_turns(stores)
    runner, _ = make_runner(stores)
    await stores.sessions.create_session(
        app_name=stores.app, user_id=stores.user, session_id="other"
    )
    other = (await turn(runner, stores.user, "other", "elsewhere"))[0].invocation_id

    with pytest.raises(InvocationNotFoundError, match="'nope'.*not in session 's'") as error:
        await runner.rewind_async(
            user_id=stores.user, session_id="s", rewind_before_invocation_id="nope"
        )
    assert error.value.invocation_id == "nope"
    with pytest.raises(InvocationNotFoundError, match="belongs to another session"):
        await runner.rewind_async(
            user_id=stores.user, session_id="s", rewind_before_invocation_id=other
        )
    with pytest.raises(SessionNotFoundError):
        await runner.rewind_async(
            user_id=stores.user, session_id="missing", rewind_before_invocation_id=invocations[0]
        )

    session = await stores.sessions.get_session(
        app_name=stores.app, user_id=stores.user, session_id="s"
    )
    assert session is not None
    assert len(session.events) == count
    assert session.state["last"] == "three"
    assert await stores.artifacts.list_versions(
        app_name=stores.app, user_id=stores.user, session_id="s", filename="notes.txt"
    ) == [0, 1, 2]


async def test_after_a_rewind_the_agent_of_a_rewound_turn_no_longer_keeps_the_conversation(
    stores: Stores,
) -> None:
    """Rule (sticky routing): a turn transferred to a sub-agent and then rewound does not
    leave that sub-agent answering the next turn; the root answers as before it."""
    from eventide import LlmAgent, Runner
    from eventide.testing import ScriptedModel, tool_call_response

    root_model = ScriptedModel(
        responses=[tool_call_response(("transfer_to_agent", {"agent_name": "billing"})), "root"]
    )
    billing_model = ScriptedModel(responses=["billing here"])
    billing = LlmAgent(name="billing", model=billing_model, description="Bills.")
    root = LlmAgent(name="triage", model=root_model, sub_agents=[billing])
    runner = Runner(app_name=stores.app, agent=root, session_service=stores.sessions)
    await stores.sessions.create_session(app_name=stores.app, user_id=stores.user, session_id="s")
    first = await turn(runner, stores.user, "s", "my invoice")
    assert first[-1].author == "billing"

    await runner.rewind_async(
        user_id=stores.user, session_id="s", rewind_before_invocation_id=first[0].invocation_id
    )
    second = await turn(runner, stores.user, "s", "hello")

    assert [(e.author, e.text) for e in second] == [("triage", "root")]
    assert billing_model.calls == 1
