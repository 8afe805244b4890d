"""Issue 32: a store written against the documented protocol alone runs the contract and the
differential suites through their public entry points, as a third party's tests would."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from eventide import InMemoryRunner, LlmAgent, Runner
from eventide.sessions import BaseSessionService, SessionService, SessionStore
from eventide.testing import ScriptedModel
from eventide.testing.session_contract import *  # noqa: F403
from eventide.testing.session_differential import check_stores_agree
from tests.sessions.third_party_store import KeyValueStore


@pytest.fixture
async def session_service() -> AsyncIterator[BaseSessionService]:
    service = SessionService(KeyValueStore())
    yield service
    await service.close()


def test_the_store_satisfies_the_protocol() -> None:
    store: SessionStore = KeyValueStore()  # checked by the type checkers
    assert store.dialect == "key-value"


def test_the_store_answers_like_eventides_own() -> None:
    """The differential check (a small budget: the suite's own run is the full one)."""
    check_stores_agree({"key-value": SessionService(KeyValueStore())}, seed=0, examples=10)


async def test_a_runner_runs_on_the_store() -> None:
    agent = LlmAgent(name="a", model=ScriptedModel(responses=["hi"]), output_key="said")
    service = SessionService(KeyValueStore())
    runner = Runner(app_name="app", agent=agent, session_service=service)
    assert not isinstance(runner, InMemoryRunner)
    session = await service.create_session(app_name="app", user_id="u")
    texts = [
        event.text
        async for event in runner.run_async(user_id="u", session_id=session.id, new_message="x")
    ]
    assert texts == ["hi"]
    stored = await service.get_session(app_name="app", user_id="u", session_id=session.id)
    assert stored is not None
    assert [e.author for e in stored.events] == ["user", "a"]
    assert stored.state == {"said": "hi"}
    await runner.close()
