"""An agent node that was running when its invocation stopped continues its agent from the
agent's own committed events (the replay index every agent resumes with, issue 31): a
committed model response is not requested again, its calls run with their committed ids,
and a workflow agent (``SequentialAgent``, ``ParallelAgent``) as a node continues its step
in flight and skips the steps it finished."""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest

from eventide import (
    App,
    InMemorySessionService,
    LlmAgent,
    ParallelAgent,
    ResumabilityConfig,
    Runner,
    SequentialAgent,
    ToolContext,
)
from eventide.agents.base_agent import BaseAgent
from eventide.models.llm_request import LlmRequest
from eventide.models.llm_response import LlmResponse
from eventide.runtime.markers import FINISHED, invocation_mark
from eventide.testing import FunctionModel, text_response, tool_call_response
from eventide.workflow import Workflow


class Crash(Exception):
    """The failure that stops the invocation half way (once)."""


class Tools:
    """``work(step)``: counts its runs by call id; fails once for the step ``fail_at``."""

    def __init__(self, fail_at: str) -> None:
        self.fail_at = fail_at
        self.runs: Counter[str] = Counter()
        self.models: Counter[str] = Counter()

    def agent(self, step: str) -> LlmAgent:
        def answer(request: LlmRequest) -> LlmResponse:
            self.models[step] += 1
            last = request.contents[-1].parts or [] if request.contents else []
            if any(p.function_response is not None for p in last):
                return text_response(f"{step} done")
            return tool_call_response(("work", {"step": step}))

        def work(step: str, tool_context: ToolContext) -> dict[str, Any]:
            """Do a step's work."""
            call_id = tool_context.function_call_id
            assert call_id is not None
            self.runs[call_id] += 1
            if step == self.fail_at:
                self.fail_at = ""
                raise Crash(step)
            return {"worked": step}

        return LlmAgent(name=step, model=FunctionModel(function=answer), tools=[work])


async def _crash_then_resume(node: BaseAgent) -> tuple[list[Any], list[Any]]:
    """Run the workflow ``START -> node`` until the tool fails, then resume it; the texts
    and node outputs of the whole invocation, and its finished markers."""

    workflow = Workflow(name="wf", edges=[("START", node)])
    app = App(
        name="app", root_agent=workflow, resumability_config=ResumabilityConfig(is_resumable=True)
    )
    service = InMemorySessionService()
    runner = Runner(app=app, session_service=service)
    await service.create_session(app_name="app", user_id="u", session_id="s")
    with pytest.raises(Exception, match="Crash|work"):
        async for _ in runner.run_async(user_id="u", session_id="s", new_message="go"):
            pass
    async for _ in runner.resume_async(user_id="u", session_id="s"):
        pass
    session = await service.get_session(app_name="app", user_id="u", session_id="s")
    assert session is not None
    outputs = [e.output for e in session.events if e.output is not None]
    outputs += [e.text for e in session.events if e.text and e.author != "user"]
    marks = [invocation_mark(e) for e in session.events if invocation_mark(e) == FINISHED]
    return outputs, marks


async def test_an_llm_agent_node_in_flight_runs_its_committed_call_again_by_its_id() -> None:
    tools = Tools(fail_at="solo")
    outputs, marks = await _crash_then_resume(tools.agent("solo"))
    assert outputs == ["solo done", "solo done"]  # the answer, its output
    assert marks == [FINISHED]
    # The committed call ran again by its own id; the model was not asked for a new one.
    assert list(tools.runs.values()) == [2]
    assert tools.models == {"solo": 2}  # the call, then the answer to its result


async def test_a_sequential_agent_node_continues_its_step_in_flight() -> None:
    tools = Tools(fail_at="second")
    steps = SequentialAgent(name="steps", sub_agents=[tools.agent("first"), tools.agent("second")])
    outputs, marks = await _crash_then_resume(steps)
    assert outputs == ["first done", "second done"]
    assert marks == [FINISHED]
    assert sorted(tools.runs.values()) == [1, 2]  # first's call once, second's twice
    assert tools.models == {"first": 2, "second": 2}


async def test_a_parallel_agent_node_continues_each_branch_from_its_events() -> None:
    tools = Tools(fail_at="left")
    fan = ParallelAgent(name="fan", sub_agents=[tools.agent("left"), tools.agent("right")])
    texts, marks = await _crash_then_resume(fan)
    assert sorted(texts) == ["left done", "right done"]
    assert marks == [FINISHED]
    # Two calls, each by the id its model response committed: left's ran twice, right's
    # once, or twice when the fan-out was cancelled while it ran (in flight, not answered).
    assert len(tools.runs) == 2
    assert sorted(tools.runs.values())[-1] == 2
    assert tools.models["left"] == 2
