"""A tool-calling, multi-agent app whose every model and tool call is logged, with kill points.

Shared by the in-process resume tests and the worker process the kill tests SIGKILL
(``tests/durable/worker.py``). The tree::

    pipeline (SequentialAgent)
      planner      LlmAgent: calls book(item="flight"), then answers
      fan          ParallelAgent: left and right each call fetch(source=...), then answer
      refine       LoopAgent (max 4 rounds): critic calls count() (a state counter), says
                   "again", and after the second round calls exit_loop

Every model call appends ``model <agent> <n>`` to the ledger, every tool call ``start <tool>
<call id>`` and ``end <tool> <call id>``. At a kill point (``Probe.kill_at``) the process writes
the point's name to ``Probe.signal`` and blocks, so a test can SIGKILL it exactly there.
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

from eventide import (
    App,
    LlmAgent,
    LoopAgent,
    ParallelAgent,
    ResumabilityConfig,
    SequentialAgent,
    ToolContext,
    exit_loop,
    types,
)
from eventide.models.llm_request import LlmRequest
from eventide.models.llm_response import LlmResponse
from eventide.testing import FunctionModel, text_response, tool_call_response
from eventide.tools.base_tool import BaseTool

# The kill points of the tests, in the order the invocation reaches them.
KILL_POINTS = (
    "after_call_committed",  # planner's book() call committed, the tool not started
    "tool_running",  # inside book(), after its side effect started
    "after_response_committed",  # book()'s response committed, planner's next model call
    "parallel_branch",  # inside left's fetch(), in the fan-out
    "loop_round_2",  # inside count() in the loop's second round
)


class Crash(Exception):
    """Raised at a kill point by the in-process tests (a crash the process survives)."""


class Probe:
    """The ledger of calls and the kill point of one process."""

    def __init__(self, ledger: Path, *, kill_at: str | None = None, signal: Path | None = None):
        self.ledger = ledger
        self.kill_at = kill_at
        self.signal = signal
        self.raise_at: str | None = None  # in-process crash: raise Crash once at this point
        self.model_calls: dict[str, int] = {}

    def log(self, line: str) -> None:
        with self.ledger.open("a") as file:
            file.write(line + "\n")
            file.flush()
            os.fsync(file.fileno())

    def point(self, name: str) -> None:
        """Reach a kill point: block (to be SIGKILLed) or raise, if it is the chosen one."""
        if self.raise_at == name:
            self.raise_at = None
            raise Crash(name)
        if self.kill_at == name:
            assert self.signal is not None
            if self.signal.exists():
                return  # already killed once (another worker process runs it again)
            partial = self.signal.with_name(self.signal.name + ".tmp")
            partial.write_text(f"{name} {os.getpid()}")
            partial.rename(self.signal)  # atomic: a reader never sees it half written
            time.sleep(60)  # the test kills the process long before this ends
            raise AssertionError(f"the test did not kill the process at {name}")

    def wait_for(self, line: str, timeout: float = 20.0) -> None:
        """Wait until ``line`` is in the ledger, then a moment for its event's commit."""
        deadline = time.monotonic() + timeout
        while line not in self.ledger_lines():
            if time.monotonic() > deadline:
                raise AssertionError(f"{line!r} never reached the ledger")
            time.sleep(0.02)
        time.sleep(0.3)

    def ledger_lines(self) -> list[str]:
        if not self.ledger.exists():
            return []
        return self.ledger.read_text().splitlines()


def _last_part(request: LlmRequest) -> types.Part | None:
    for content in reversed(request.contents):
        if content.parts:
            return content.parts[-1]
    return None


def build_app(probe: Probe) -> App:
    """The app above, logging to (and stopping at the kill points of) ``probe``."""

    def model_for(agent_name: str) -> FunctionModel:
        def answer(request: LlmRequest) -> LlmResponse:
            n = probe.model_calls.get(agent_name, 0) + 1
            probe.model_calls[agent_name] = n
            probe.log(f"model {agent_name} {n}")
            part = _last_part(request)
            response = part.function_response if part is not None else None
            if agent_name == "planner":
                if response is not None and response.name == "book":
                    probe.point("after_response_committed")
                    return text_response("planned: flight booked")
                return tool_call_response(("book", {"item": "flight"}))
            if agent_name in ("left", "right"):
                if response is not None and response.name == "fetch":
                    return text_response(f"{agent_name} fetched {response.response}")
                return tool_call_response(("fetch", {"source": agent_name}))
            # critic
            if response is not None and response.name == "count":
                rounds = (response.response or {}).get("rounds", 0)
                if rounds >= 2:
                    return tool_call_response(("exit_loop", {}))
                return text_response("again")
            return tool_call_response(("count", {}))

        return FunctionModel(function=answer)

    def book(item: str, tool_context: ToolContext) -> dict[str, Any]:
        """Book an item."""
        call_id = tool_context.function_call_id
        probe.log(f"start book {call_id}")
        probe.point("tool_running")
        tool_context.state["booked"] = [*tool_context.state.get("booked", []), item]
        probe.log(f"end book {call_id}")
        return {"booking": f"{item}-confirmed"}

    def fetch(source: str, tool_context: ToolContext) -> dict[str, Any]:
        """Fetch from a source."""
        call_id = tool_context.function_call_id
        probe.log(f"start fetch {call_id}")
        if source == "left":
            if probe.kill_at == "parallel_branch":
                probe.wait_for("model right 2")  # the other branch has answered
            probe.point("parallel_branch")
        tool_context.state[f"fetched_{source}"] = True
        probe.log(f"end fetch {call_id}")
        return {"data": f"{source}-data"}

    def count(tool_context: ToolContext) -> dict[str, Any]:
        """Count one round."""
        call_id = tool_context.function_call_id
        probe.log(f"start count {call_id}")
        rounds = int(tool_context.state.get("rounds", 0)) + 1
        if rounds == 2:
            probe.point("loop_round_2")
        tool_context.state["rounds"] = rounds
        probe.log(f"end count {call_id}")
        return {"rounds": rounds}

    def before_tool(tool: BaseTool, args: dict[str, Any], tool_context: ToolContext) -> None:
        if tool.name == "book":
            probe.point("after_call_committed")

    planner = LlmAgent(
        name="planner",
        model=model_for("planner"),
        tools=[book],
        before_tool_callback=before_tool,
        output_key="plan",
    )
    left = LlmAgent(name="left", model=model_for("left"), tools=[fetch])
    right = LlmAgent(name="right", model=model_for("right"), tools=[fetch])
    critic = LlmAgent(name="critic", model=model_for("critic"), tools=[count, exit_loop])
    root = SequentialAgent(
        name="pipeline",
        sub_agents=[
            planner,
            ParallelAgent(name="fan", sub_agents=[left, right]),
            LoopAgent(name="refine", max_iterations=4, sub_agents=[critic]),
        ],
    )
    return App(
        name="durable_app",
        root_agent=root,
        resumability_config=ResumabilityConfig(is_resumable=True),
    )


def normalized(events: list[Any]) -> dict[str | None, list[tuple[Any, ...]]]:
    """The events per branch, in order, without ids, timestamps or invocation markers:
    what an interrupted-then-resumed run must share with an uninterrupted one."""
    per_branch: dict[str | None, list[tuple[Any, ...]]] = {}
    for event in events:
        parts: list[tuple[Any, ...]] = []
        for part in (event.content.parts or []) if event.content is not None else []:
            if part.text is not None:
                parts.append(("text", part.text))
            if part.function_call is not None:
                parts.append(("call", part.function_call.name, part.function_call.args))
            if part.function_response is not None:
                parts.append(
                    ("response", part.function_response.name, part.function_response.response)
                )
        actions = event.actions
        per_branch.setdefault(event.branch, []).append(
            (
                event.author,
                tuple(map(repr, parts)),
                repr(sorted(actions.state_delta.items())),
                actions.end_of_agent,
                repr(actions.agent_state),
                actions.escalate,
            )
        )
    return per_branch
