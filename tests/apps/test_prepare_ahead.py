"""The models of an app's agent tree are prepared in a background thread (first-call cost)."""

from __future__ import annotations

import threading
from collections.abc import AsyncGenerator

from eventide import LlmAgent
from eventide.apps.prepare_ahead import prepare_models_ahead
from eventide.models.base_llm import BaseLlm
from eventide.models.llm_request import LlmRequest
from eventide.models.llm_response import LlmResponse


class Recording(BaseLlm):
    """Records the threads ``prepare()`` ran in; fails when told to."""

    model: str = "recording"
    fail: bool = False
    threads: list[str] = []

    async def generate_content_async(
        self, llm_request: LlmRequest, stream: bool = False
    ) -> AsyncGenerator[LlmResponse, None]:
        yield LlmResponse()

    def prepare(self) -> None:
        self.threads.append(threading.current_thread().name)
        if self.fail:
            raise RuntimeError("cannot prepare")


def test_every_model_of_the_tree_is_prepared_once_in_a_background_thread() -> None:
    """Rule (first call): each distinct model of the tree is prepared once, off the calling
    thread; a failing one does not stop the others (its first call reports the failure);
    an agent without a model of its own uses its ancestor's."""
    shared, failing, other = (
        Recording(threads=[]),
        Recording(threads=[], fail=True),
        Recording(threads=[]),
    )
    root = LlmAgent(
        name="root",
        model=shared,
        sub_agents=[
            LlmAgent(name="inherits"),
            LlmAgent(name="same", model=shared),
            LlmAgent(name="failing", model=failing),
            LlmAgent(name="other", model=other),
        ],
    )
    preparing = prepare_models_ahead(root)
    preparing.wait()
    assert preparing.models == [shared, failing, other]
    for model in (shared, failing, other):
        assert model.threads == ["eventide-prepare-models"]


def test_a_tree_without_models_to_prepare_starts_no_thread() -> None:
    root = LlmAgent(name="root", model=Recording(threads=[]))
    root.model = "no-such-model-anywhere"
    preparing = prepare_models_ahead(root)
    preparing.wait()
    assert preparing.models == []


def test_the_api_server_prepares_the_models_of_its_apps_at_start_up() -> None:
    """Rule (first call): a server built with apps given directly prepares their models in
    the background from start-up on, so its first request does not pay for the SDK's import
    and client set-up; with an invocation queue (the workers call the models) it does not."""
    from fastapi.testclient import TestClient

    from eventide.apps.app import App
    from eventide.server import create_app

    model = Recording(threads=[])
    api = create_app(apps={"a": App(name="a", root_agent=LlmAgent(name="root", model=model))})
    with TestClient(
        api, base_url="http://localhost"
    ) as client:  # start-up, then shutdown (which waits for preparing)
        assert client.get("/health").status_code == 200
    assert model.threads == ["eventide-prepare-models"]

    queued = Recording(threads=[])
    api = create_app(
        apps={"a": App(name="a", root_agent=LlmAgent(name="root", model=queued))},
        invocation_queue=object(),  # type: ignore[arg-type]  # never used by this test
    )
    with TestClient(api, base_url="http://localhost") as client:
        assert client.get("/health").status_code == 200
    assert queued.threads == []


def test_a_runner_prepares_its_tree_s_models_when_asked() -> None:
    """Rule (first call): ``Runner.prepare_models()`` prepares every model of the runner's
    agent tree in a background thread, for programs that use the Runner directly (a web
    app's start-up), as ``eventide run`` and the api-server do on their own."""
    from eventide import InMemoryRunner

    first, second = Recording(threads=[]), Recording(threads=[])
    root = LlmAgent(name="root", model=first, sub_agents=[LlmAgent(name="sub", model=second)])
    runner = InMemoryRunner(root, app_name="app")
    assert first.threads == [] and second.threads == []  # nothing happens unasked
    preparing = runner.prepare_models()
    preparing.wait()
    assert preparing.models == [first, second]
    assert first.threads == second.threads == ["eventide-prepare-models"]
