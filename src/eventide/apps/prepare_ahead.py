"""Prepare an agent tree's models in a background thread, so the first turn does not pay for
the provider SDK's import and client set-up.

``eventide run`` starts this right after loading the app: the work (about half a second for
the ``openai`` SDK) happens while the session opens and the user types the first message.
A failure here is not reported: the first model call does the same work and reports it.
"""

from __future__ import annotations

import logging
import threading

from eventide.agents.base_agent import BaseAgent
from eventide.agents.llm_agent import LlmAgent
from eventide.errors import EventideError
from eventide.models.base_llm import BaseLlm, build_turn_schemas

__all__ = ["ModelsPreparing", "prepare_models_ahead"]

_LOG = logging.getLogger("eventide.apps")


class ModelsPreparing:
    """The background preparation of some models; :meth:`wait` before exiting."""

    def __init__(self, models: list[BaseLlm]) -> None:
        self.models = models
        self._thread = threading.Thread(
            target=self._run, name="eventide-prepare-models", daemon=True
        )

    def start(self) -> ModelsPreparing:
        """Start preparing (returns at once)."""
        if self.models:
            self._thread.start()
        return self

    def wait(self) -> None:
        """Wait until every model is prepared (an import is not cut off at exit)."""
        if self._thread.is_alive():
            self._thread.join()

    def _run(self) -> None:
        for model in self.models:
            try:
                model.prepare()
            except Exception:  # the first call does the same work and reports the failure
                _LOG.debug("Preparing model %r failed", model.model, exc_info=True)


def prepare_models_ahead(root: BaseAgent) -> ModelsPreparing:
    """Start preparing the model of every ``LlmAgent`` of ``root``'s tree.

    The models are resolved here, in the calling thread (a model name becomes its
    connector), and the records a turn makes get their schemas here too (about 15 ms):
    built in the background they could race the event loop building the same ones on first
    use, which older pydantic releases do not guard against. Only :meth:`BaseLlm.prepare`
    (the SDK's import and client) runs in the background.
    """
    build_turn_schemas()
    models: list[BaseLlm] = []
    for agent in root.walk():
        if not isinstance(agent, LlmAgent):
            continue
        try:
            model = agent.canonical_model
        except EventideError:
            continue  # reported when the agent runs
        if all(model is not seen for seen in models):
            models.append(model)
    return ModelsPreparing(models).start()
