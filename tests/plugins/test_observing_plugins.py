"""``BasePlugin.observes_only``: a plugin that only observes (tracing, the dev server's
request recorder) does not make the LLM flow validate each model response again as an
event (issue 33: the server's streaming turn paid a pydantic validation per chunk for the
tracing plugin's after-model hook); any other plugin's hook still does."""

from __future__ import annotations

from typing import Any

import pytest

from eventide import InMemoryRunner, LlmAgent
from eventide._callbacks import only_observes
from eventide.events import Event
from eventide.plugins.base_plugin import AFTER_MODEL, BasePlugin
from eventide.plugins.plugin_manager import PluginManager
from eventide.server.model_request_recorder import ModelRequestRecorder
from eventide.testing import ScriptedModel


class Watcher(BasePlugin):
    observes_only = True

    def __init__(self) -> None:
        super().__init__("watcher")
        self.seen: list[str] = []

    async def after_model_callback(self, *, callback_context: Any, llm_response: Any) -> None:
        self.seen.append(llm_response.content.parts[0].text)


class Editor(BasePlugin):
    """Not an observer: it may change what it is given."""

    async def after_model_callback(self, *, callback_context: Any, llm_response: Any) -> None:
        return None


def test_only_observing_chains_are_marked() -> None:
    assert only_observes(PluginManager([Watcher()]).chain(AFTER_MODEL))
    assert not only_observes(PluginManager([Watcher(), Editor("e")]).chain(AFTER_MODEL))
    assert only_observes(())


def test_the_runtimes_own_observers_say_so() -> None:
    pytest.importorskip("opentelemetry")
    from eventide.plugins.tracing_plugin import TracingPlugin

    assert TracingPlugin.observes_only and ModelRequestRecorder.observes_only
    assert not BasePlugin.observes_only


@pytest.mark.parametrize("plugin", [Watcher, lambda: Editor("editor")])
async def test_events_are_the_same_with_an_observer_or_an_editor(plugin: Any) -> None:
    """The event the flow builds is the same either way (trusted or validated)."""
    events: list[list[Event]] = []
    for plugins in ([], [plugin()]):
        agent = LlmAgent(name="a", model=ScriptedModel(responses=["hello"]))
        runner = InMemoryRunner(agent, app_name="app", plugins=plugins)
        session = await runner.session_service.create_session(app_name="app", user_id="u")
        events.append(
            [
                e
                async for e in runner.run_async(
                    user_id="u", session_id=session.id, new_message="hi"
                )
            ]
        )
    plain, observed = events
    keep = {"content", "author", "partial", "actions", "node_info", "custom_metadata"}
    assert [e.model_dump(include=keep) for e in observed] == [
        e.model_dump(include=keep) for e in plain
    ]
