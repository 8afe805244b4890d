"""A resumable app whose model asks for three tools in one response, with kill points.

Shared by the in-process tests (``tests/durable/test_siblings.py``) and the worker process the
kill tests SIGKILL (``tests/durable/worker.py`` with ``DURABLE_APP=sibling_app``). The tree::

    desk (SequentialAgent)
      gatherer   LlmAgent: calls fetch(source="a"), fetch(source="b") and slow() in one
                 response, then answers
      reporter   LlmAgent: answers

The tools finish in a fixed order (b waits for a's record to be committed, slow for both), so
the log of every run has the same shape. Every model call appends ``model <agent> <n>`` to the
ledger, every tool call ``start <tool> <call id>`` and ``end <tool> <call id>``.
"""

from __future__ import annotations

import asyncio
from typing import Any

from eventide import App, LlmAgent, ResumabilityConfig, SequentialAgent, ToolContext
from eventide.events import Event
from eventide.models.llm_request import LlmRequest
from eventide.models.llm_response import LlmResponse
from eventide.plugins.base_plugin import BasePlugin
from eventide.runtime.markers import CALL_KEY
from eventide.testing import FunctionModel, text_response, tool_call_response
from tests.durable.durable_app import Probe

APP_NAME = "sibling_app"
KILL_POINTS = (
    "sibling_running",  # inside slow(), both fetches recorded (committed)
    "all_recorded",  # slow()'s record committed, the response event of the three not yet
)
IN_TOOL = {"sibling_running"}


def recorded_calls(events: list[Event]) -> list[str]:
    """The names of the calls recorded (committed as they finished) in ``events``."""
    names: list[str] = []
    for event in events:
        record = (event.custom_metadata or {}).get(CALL_KEY)
        if isinstance(record, dict):
            names.append(str(record.get("name")))  # pyright: ignore[reportUnknownMemberType, reportUnknownArgumentType]
    return names


async def until_recorded(tool_context: ToolContext, count: int) -> None:
    """Wait until ``count`` calls of this response are recorded in the session."""
    for _ in range(3000):
        if len(recorded_calls(tool_context.session.events)) >= count:
            return
        await asyncio.sleep(0.01)
    raise AssertionError("the sibling calls were never recorded")


class _AllRecorded(BasePlugin):
    """Reaches the ``all_recorded`` point right after slow()'s record is committed."""

    def __init__(self, probe: Probe) -> None:
        super().__init__("all_recorded")
        self.probe = probe

    async def on_event_callback(self, *, invocation_context: Any, event: Event) -> None:
        if recorded_calls([event]) == ["slow"]:
            self.probe.point("all_recorded")


def build_app(probe: Probe) -> App:
    """The app above, logging to (and stopping at the kill points of) ``probe``."""

    def gatherer_model(request: LlmRequest) -> LlmResponse:
        n = probe.model_calls.get("gatherer", 0) + 1
        probe.model_calls["gatherer"] = n
        probe.log(f"model gatherer {n}")
        last = request.contents[-1].parts or []
        responses = [p.function_response for p in last if p.function_response is not None]
        if responses:
            return text_response(f"gathered {len(responses)}")
        return tool_call_response(
            ("fetch", {"source": "a"}), ("fetch", {"source": "b"}), ("slow", {})
        )

    def reporter_model(request: LlmRequest) -> LlmResponse:
        n = probe.model_calls.get("reporter", 0) + 1
        probe.model_calls["reporter"] = n
        probe.log(f"model reporter {n}")
        return text_response("reported")

    async def fetch(source: str, tool_context: ToolContext) -> dict[str, Any]:
        """Fetch from a source."""
        call_id = tool_context.function_call_id
        probe.log(f"start fetch {call_id}")
        if source == "b":
            await until_recorded(tool_context, 1)
        tool_context.state[f"got_{source}"] = True
        probe.log(f"end fetch {call_id}")
        return {"data": f"{source}-data"}

    async def slow(tool_context: ToolContext) -> dict[str, Any]:
        """A slow call."""
        call_id = tool_context.function_call_id
        probe.log(f"start slow {call_id}")
        await until_recorded(tool_context, 2)
        probe.point("sibling_running")
        tool_context.state["slow_done"] = True
        probe.log(f"end slow {call_id}")
        return {"slow": "done"}

    gatherer = LlmAgent(
        name="gatherer", model=FunctionModel(function=gatherer_model), tools=[fetch, slow]
    )
    reporter = LlmAgent(name="reporter", model=FunctionModel(function=reporter_model))
    return App(
        name=APP_NAME,
        root_agent=SequentialAgent(name="desk", sub_agents=[gatherer, reporter]),
        plugins=[_AllRecorded(probe)],
        resumability_config=ResumabilityConfig(is_resumable=True),
    )
