"""Fork (``Runner.fork_session_async``): a new session holding the source's events, session
state and artifact versions up to a chosen event; the two then diverge independently."""

from __future__ import annotations

from typing import Any

import pytest

from eventide.artifacts.in_memory_artifact_service import InMemoryArtifactService
from eventide.errors import EventNotFoundError, UsageError
from eventide.events import Event
from eventide.sessions.in_memory_session_service import InMemorySessionService
from tests.conformance.artifact_service_contract import Where
from tests.history.conftest import Stores
from tests.history.helpers import conversation, make_runner, turn


async def source_with_three_turns(stores: Stores) -> list[list[Event]]:
    runner, _ = make_runner(stores)
    await stores.sessions.create_session(
        app_name=stores.app, user_id=stores.user, session_id="src", state={"kept": 1}
    )
    return [await turn(runner, stores.user, "src", text) for text in ("one", "two", "three")]


async def test_fork_copies_events_state_and_artifact_versions_up_to_the_event(
    stores: Stores,
) -> None:
    """Rule: the fork holds the events up to and including the chosen one (same ids), the
    session state as it was right after it, and the session's artifacts with the same
    version numbers; the source is unchanged."""
    turns = await source_with_three_turns(stores)
    runner, _ = make_runner(stores)
    cut = turns[0][-1]  # the model's "ok one"

    fork = await runner.fork_session_async(
        user_id=stores.user, session_id="src", up_to_event_id=cut.id, new_session_id="branch"
    )

    assert fork.id == "branch"
    stored = await stores.sessions.get_session(
        app_name=stores.app, user_id=stores.user, session_id="branch"
    )
    source = await stores.sessions.get_session(
        app_name=stores.app, user_id=stores.user, session_id="src"
    )
    assert stored is not None and source is not None
    end = [e.id for e in source.events].index(cut.id) + 1
    assert end == 4  # the user's "one", the call, the tool's answer, "ok one"
    assert [e.model_dump(exclude={"actions"}) for e in stored.events] == [
        e.model_dump(exclude={"actions"}) for e in source.events[:end]
    ]
    # The tool's event keeps its session-scoped change; shared-scope changes are not replayed.
    assert source.events[2].actions.state_delta == {
        "last": "one",
        "app:last": "one",
        "user:last": "one",
    }
    assert stored.events[2].actions.state_delta == {"last": "one"}
    assert stored.events[2].actions.artifact_delta == source.events[2].actions.artifact_delta
    assert stored.state["kept"] == 1
    assert stored.state["last"] == "one"
    assert stored.state["eventide:forked_from"] == {"session_id": "src", "event_id": cut.id}
    assert "eventide:forked_from" not in source.state
    # Shared scopes are not copied back in time: they are the app's and the user's.
    assert stored.state["app:last"] == "three"
    assert stored.state["user:last"] == "three"
    assert await stores.artifacts.list_versions(
        app_name=stores.app, user_id=stores.user, session_id="branch", filename="notes.txt"
    ) == [0]
    part = await stores.artifacts.load_artifact(
        app_name=stores.app, user_id=stores.user, session_id="branch", filename="notes.txt"
    )
    assert part is not None and part.text == "one"
    assert len(source.events) == sum(len(t) + 1 for t in turns)
    assert source.state["last"] == "three"


async def test_fork_starts_from_the_sources_initial_state_so_rewinds_in_it_match(
    stores: Stores,
) -> None:
    """Rule: the fork is created with the source's initial state (plus
    ``eventide:forked_from``) and the copied events are replayed onto it, so rewinding the
    fork to its first turn restores the values given at the source's ``create_session``."""
    runner, _ = make_runner(stores)
    await stores.sessions.create_session(
        app_name=stores.app,
        user_id=stores.user,
        session_id="src",
        state={"last": "initial", "app:setting": "x"},
    )
    first = await turn(runner, stores.user, "src", "one")
    await turn(runner, stores.user, "src", "two")

    fork = await runner.fork_session_async(user_id=stores.user, session_id="src")
    source = await stores.sessions.get_session(
        app_name=stores.app, user_id=stores.user, session_id="src"
    )
    assert source is not None
    assert fork.state["last"] == "two"
    assert await stores.sessions.get_initial_state(
        app_name=stores.app, user_id=stores.user, session_id=fork.id
    ) == {
        "last": "initial",
        "eventide:forked_from": {"session_id": "src", "event_id": source.events[-1].id},
    }

    await runner.rewind_async(
        user_id=stores.user, session_id=fork.id, rewind_before_invocation_id=first[0].invocation_id
    )
    forked = await stores.sessions.get_session(
        app_name=stores.app, user_id=stores.user, session_id=fork.id
    )
    assert forked is not None
    assert forked.state["last"] == "initial"
    assert forked.state["app:setting"] == "x"
    assert forked.state["eventide:forked_from"]["session_id"] == "src"


async def test_fork_copies_tombstones_as_tombstones_and_shares_user_artifacts(
    stores: Stores,
) -> None:
    """Rule: artifact versions are copied by number, a tombstone (a rewound artifact that
    did not exist before) stays a tombstone in the fork; ``user:`` artifacts are the
    user's, shared by both sessions, and not copied."""
    turns = await source_with_three_turns(stores)
    runner, _ = make_runner(stores)
    await runner.rewind_async(
        user_id=stores.user, session_id="src", rewind_before_invocation_id=turns[0][0].invocation_id
    )

    fork = await runner.fork_session_async(user_id=stores.user, session_id="src")

    def where(session_id: str) -> Where:
        return {"app_name": stores.app, "user_id": stores.user, "session_id": session_id}

    artifacts = stores.artifacts
    assert await artifacts.list_versions(**where(fork.id), filename="notes.txt") == [0, 1, 2, 3]
    assert await artifacts.load_artifact(**where(fork.id), filename="notes.txt") is None
    texts = [
        await artifacts.load_artifact(**where(fork.id), filename="notes.txt", version=v)
        for v in range(3)
    ]
    assert [t.text if t else None for t in texts] == ["one", "two", "three"]
    assert await artifacts.list_artifact_keys(**where(fork.id)) == ["user:profile.txt"]
    # One user: file, seen from both sessions; saving it from the fork is seen by the source.
    assert await artifacts.list_versions(**where(fork.id), filename="user:profile.txt") == [
        0,
        1,
        2,
    ]
    await turn(runner, stores.user, fork.id, "alt")
    shared = await artifacts.load_artifact(**where("src"), filename="user:profile.txt")
    assert shared is not None and shared.text == "alt"


async def test_fork_then_diverge(stores: Stores) -> None:
    """Rule: after a fork, turns in either session do not affect the other; each model sees
    its own session's history."""
    turns = await source_with_three_turns(stores)
    runner, model = make_runner(stores)
    fork = await runner.fork_session_async(
        user_id=stores.user, session_id="src", up_to_event_id=turns[1][-1].id
    )

    await turn(runner, stores.user, fork.id, "alt")
    await turn(runner, stores.user, "src", "four")

    fork_request, source_request = model.requests[0], model.requests[2]
    assert [w for _, w in conversation(fork_request) if not w.startswith(("call", "answer"))] == [
        "one",
        "ok one",
        "two",
        "ok two",
        "alt",
    ]
    assert [w for _, w in conversation(source_request) if not w.startswith(("call", "answer"))] == [
        "one",
        "ok one",
        "two",
        "ok two",
        "three",
        "ok three",
        "four",
    ]
    forked = await stores.sessions.get_session(
        app_name=stores.app, user_id=stores.user, session_id=fork.id
    )
    source = await stores.sessions.get_session(
        app_name=stores.app, user_id=stores.user, session_id="src"
    )
    assert forked is not None and source is not None
    assert forked.state["last"] == "alt"
    assert source.state["last"] == "four"
    assert await stores.artifacts.list_versions(
        app_name=stores.app, user_id=stores.user, session_id=fork.id, filename="notes.txt"
    ) == [0, 1, 2]
    assert await stores.artifacts.list_versions(
        app_name=stores.app, user_id=stores.user, session_id="src", filename="notes.txt"
    ) == [0, 1, 2, 3]


async def test_fork_of_a_rewound_session_keeps_the_rewind(stores: Stores) -> None:
    """Rule: a fork copies rewind events as they are, so the fork's model does not see the
    rewound turns either."""
    turns = await source_with_three_turns(stores)
    runner, model = make_runner(stores)
    await runner.rewind_async(
        user_id=stores.user, session_id="src", rewind_before_invocation_id=turns[1][0].invocation_id
    )
    fork = await runner.fork_session_async(user_id=stores.user, session_id="src")
    stored = await stores.sessions.get_session(
        app_name=stores.app, user_id=stores.user, session_id=fork.id
    )
    assert stored is not None and stored.state["last"] == "one"

    await turn(runner, stores.user, fork.id, "alt")

    assert len(model.requests[0].contents) == 5


async def test_fork_bad_input_creates_nothing(stores: Stores) -> None:
    """Rule: an unknown event raises EventNotFoundError and an existing target id a
    UsageError; no session is created."""
    await source_with_three_turns(stores)
    runner, _ = make_runner(stores)
    with pytest.raises(EventNotFoundError, match="'nope' is not in session 'src'"):
        await runner.fork_session_async(
            user_id=stores.user, session_id="src", up_to_event_id="nope"
        )
    with pytest.raises(UsageError, match="already exists"):
        await runner.fork_session_async(user_id=stores.user, session_id="src", new_session_id="src")
    listed = await stores.sessions.list_sessions(app_name=stores.app, user_id=stores.user)
    assert [s.id for s in listed.sessions] == ["src"]


async def test_fork_of_a_session_whose_initial_state_is_unknown() -> None:
    """Rule: when the source's initial state was never recorded (a session service that does
    not record it, or a session created before schema version 3), the fork starts from the
    source's session state at the chosen event instead, and still names its source."""

    class Unrecorded(InMemorySessionService):
        async def get_initial_state(
            self, *, app_name: str, user_id: str, session_id: str
        ) -> dict[str, Any] | None:
            return None

    stores = Stores(sessions=Unrecorded(), artifacts=InMemoryArtifactService())
    turns = await source_with_three_turns(stores)
    runner, _ = make_runner(stores)

    fork = await runner.fork_session_async(
        user_id=stores.user, session_id="src", up_to_event_id=turns[1][-1].id
    )

    assert fork.state["kept"] == 1
    assert fork.state["last"] == "two"
    assert fork.state["eventide:forked_from"] == {
        "session_id": "src",
        "event_id": turns[1][-1].id,
    }
