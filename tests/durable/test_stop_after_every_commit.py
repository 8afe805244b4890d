"""Stopped after every commit, for the apps the kill-anywhere tests SIGKILL (issue 31).

The random SIGKILLs of ``test_kill_anywhere`` (a ``SequentialAgent`` with a fan-out) and
``test_kill_anywhere_workflow`` (a graph workflow on DBOS workers) land where they land;
this test takes every place instead. For each message's run and each event it commits, the
process "stops" right after that commit (the Runner's generator is closed there, as a crash
leaves it: everything yielded is committed, nothing after it), ``Runner.resume_async``
continues the invocation in a new Runner (a new "process": with a SQLite file or PostgreSQL,
it reads the session back from the database), and the remaining messages run. The session must
end as an uninterrupted run's: the same events per branch (markers included), node outputs
and state, and each invocation's markers (finished exactly once, or paused and then
finished) as uninterrupted.

It found an LLM agent node stopped between its answer (which carries the node's output)
and its ``end_of_agent`` marker: the node was replayed as finished, and the marker was
never committed.
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from eventide import (
    App,
    InMemorySessionService,
    LlmAgent,
    ResumabilityConfig,
    Runner,
    SequentialAgent,
    types,
)
from eventide.events import Event
from eventide.models.llm_request import LlmRequest
from eventide.models.llm_response import LlmResponse
from eventide.node_context import Context
from eventide.run_config import RunConfig, StreamingMode
from eventide.runtime.markers import ENDED, FINISHED, invocation_mark
from eventide.sessions import SqlSessionService
from eventide.sessions.base_session_service import BaseSessionService
from eventide.testing import FunctionModel, text_response, tool_call_response
from eventide.tools import AgentTool, LongRunningFunctionTool
from eventide.workflow import RequestInput, Workflow, node
from tests.durable import durable_app, kill_anywhere_app, paused_app, workflow_kill_app
from tests.durable.workflow_kill_app import answer, node_outputs, normalized_log, pending_request


@dataclass(frozen=True)
class _Case:
    app_name: str
    build_app: Callable[[Path], App]
    messages: int
    message: Callable[[int, list[Event]], Any]  # the i-th message, given the log so far
    run_config: RunConfig | None = None  # streaming: the stops fall between partial chunks too


def _workflow_message(i: int, events: list[Event]) -> Any:
    """A turn's text, then the answer to the request it pauses on."""
    request = pending_request(events)
    return answer(request, f"yes-{i // 2}") if request is not None else f"turn-{i // 2}"


def _task_app(ledger: Path) -> App:
    """A chat agent that delegates a task (google-adk's Task API) whose agent asks the user
    a question first, then finishes with the answer; the chat agent then answers."""
    del ledger  # no side effects outside the log

    def last_part(request: LlmRequest) -> types.Part:
        return (request.contents[-1].parts or [types.Part()])[-1]

    def pick(request: LlmRequest) -> LlmResponse:
        last = last_part(request)
        if last.text and last.text.startswith("{"):  # the task's request
            return text_response("Which colour?")
        return tool_call_response(("finish_task", {"result": last.text or ""}))

    def chat(request: LlmRequest) -> LlmResponse:
        response = last_part(request).function_response
        if response is not None:
            return text_response(f"Picked {(response.response or {}).get('result')}.")
        return tool_call_response(("picker", {"request": "pick a colour"}))

    picker = LlmAgent(
        name="picker", description="picks", mode="task", model=FunctionModel(function=pick)
    )
    root = LlmAgent(name="root", model=FunctionModel(function=chat), sub_agents=[picker])
    return App(
        name="task_app", root_agent=root, resumability_config=ResumabilityConfig(is_resumable=True)
    )


def _workflow_features_app(ledger: Path) -> App:
    """Routes, a parallel worker, a dynamic child (``ctx.run_node``), a nested workflow and
    a node that asks the user, in one graph."""
    del ledger

    def items(node_input: Any) -> list[int]:
        return [1, 2, 3]

    @node(parallel_worker=True, max_parallel_workers=2)
    def square(node_input: int) -> int:
        return node_input * node_input

    def pick(node_input: list[int]) -> Event:
        total = sum(node_input)
        return Event(output=total, route="big" if total > 10 else "small")

    def double(node_input: int) -> int:
        return node_input * 2

    @node(rerun_on_resume=True)
    async def big(node_input: int, ctx: Context) -> int:
        doubled: int = await ctx.run_node(double, node_input)
        ctx.state["doubled"] = doubled
        return doubled + 1

    def small(node_input: int) -> int:
        return node_input

    async def ask(node_input: int) -> Any:
        yield RequestInput(message="Keep it?", payload={"value": node_input})

    def keep(node_input: Any, ctx: Context) -> str:
        ctx.state["kept"] = node_input
        return f"kept {node_input}"

    inner = Workflow(name="inner", edges=[("START", ask, keep)])
    graph = Workflow(
        name="graph",
        edges=[("START", items, square, pick, {"big": big, "small": small}), ((big, small), inner)],
    )
    return App(
        name="graph_app",
        root_agent=graph,
        resumability_config=ResumabilityConfig(is_resumable=True),
    )


def _agent_features_app(ledger: Path, chunk: int = 0) -> App:
    """A transfer to a sub-agent, an ``AgentTool`` and a long-running tool whose result the
    user sends later (with ``chunk``, the agents' text answers stream in chunks of that
    many characters)."""
    del ledger

    def last_part(request: LlmRequest) -> types.Part:
        return (request.contents[-1].parts or [types.Part()])[-1]

    def front(request: LlmRequest) -> LlmResponse:
        return tool_call_response(("transfer_to_agent", {"agent_name": "desk"}))

    def desk(request: LlmRequest) -> LlmResponse:
        last = last_part(request)
        response = last.function_response
        if response is None:
            return tool_call_response(("lookup", {"request": last.text or ""}))
        if response.name == "lookup":
            return tool_call_response(("approve", {"item": "refund"}))
        return text_response(f"Done: {response.response}")

    def lookup_model(request: LlmRequest) -> LlmResponse:
        return text_response("order 7 found")

    def approve(item: str) -> dict[str, Any]:
        """Ask a manager to approve (the answer comes later)."""
        return {"status": "pending", "item": item}

    lookup = LlmAgent(
        name="lookup", model=FunctionModel(function=lookup_model, stream_chunk_size=chunk)
    )
    desk_agent = LlmAgent(
        name="desk",
        model=FunctionModel(function=desk, stream_chunk_size=chunk),
        tools=[AgentTool(agent=lookup), LongRunningFunctionTool(func=approve)],
    )
    root = LlmAgent(name="front", model=FunctionModel(function=front), sub_agents=[desk_agent])
    return App(
        name="agent_app", root_agent=root, resumability_config=ResumabilityConfig(is_resumable=True)
    )


def _nested_transfer_app(ledger: Path) -> App:
    """The root hands over to a sequence whose middle step hands over to its own sub-agent
    (google-adk ends that step after its sub-agent, and the root right at its transfer)."""
    del ledger

    def says(text: str) -> FunctionModel:
        return FunctionModel(function=lambda request: text_response(text))

    def hands_to(name: str) -> FunctionModel:
        return FunctionModel(
            function=lambda request: tool_call_response(("transfer_to_agent", {"agent_name": name}))
        )

    middle = LlmAgent(
        name="middle",
        model=hands_to("helper"),
        sub_agents=[LlmAgent(name="helper", model=says("helped"))],
    )
    flow = SequentialAgent(
        name="flow",
        sub_agents=[
            LlmAgent(name="first", model=says("one")),
            middle,
            LlmAgent(name="last", model=says("three")),
        ],
    )
    root = LlmAgent(name="front", model=hands_to("flow"), sub_agents=[flow])
    return App(
        name="nested_app",
        root_agent=root,
        resumability_config=ResumabilityConfig(is_resumable=True),
    )


def _agent_features_message(i: int, events: list[Event]) -> Any:
    if i == 0:
        return "refund order 7"
    call = next(c for e in reversed(events) for c in e.get_function_calls() if c.name == "approve")
    response = types.FunctionResponse(id=call.id, name="approve", response={"status": "approved"})
    return types.Content(role="user", parts=[types.Part(function_response=response)])


def _graph_message(i: int, events: list[Event]) -> Any:
    if i == 0:
        return "go"
    request = pending_request(events)
    assert request is not None
    return answer(request, "yes")


def _paused_message(i: int, events: list[Event]) -> Any:
    step = paused_app.STEPS[i]
    return "go" if step == "go" else paused_app.answer_for(step, events)


CASES = {
    "graph workflow": _Case(
        workflow_kill_app.APP_NAME, workflow_kill_app.build_app, 6, _workflow_message
    ),
    "agent pipeline": _Case(
        kill_anywhere_app.APP_NAME, kill_anywhere_app.build_app, 2, lambda i, _: f"turn-{i}"
    ),
    "sequence, fan-out and loop": _Case(
        "durable_app",
        lambda ledger: durable_app.build_app(durable_app.Probe(ledger)),
        1,
        lambda i, _: "go",
    ),
    "pauses for approval and confirmation": _Case(
        "paused_app",
        lambda ledger: paused_app.build_app(durable_app.Probe(ledger)),
        len(paused_app.STEPS),
        _paused_message,
    ),
    "graph features": _Case("graph_app", _workflow_features_app, 2, _graph_message),
    "transfer, agent tool, long-running tool": _Case(
        "agent_app", _agent_features_app, 2, _agent_features_message
    ),
    "the same, streaming": _Case(
        "agent_app",
        lambda ledger: _agent_features_app(ledger, chunk=4),
        2,
        _agent_features_message,
        RunConfig(streaming_mode=StreamingMode.SSE),
    ),
    "a transfer inside a sequence": _Case("nested_app", _nested_transfer_app, 1, lambda i, _: "go"),
    "task delegation": _Case(
        "task_app", _task_app, 4, lambda i, _: f"turn-{i // 2}" if i % 2 == 0 else f"blue-{i // 2}"
    ),
}


class _Store:
    """Where the session lives: one in-memory service shared by every "process", or a
    database (a SQLite file, PostgreSQL) that each process opens anew (what a restarted
    process reads back)."""

    def __init__(self, url: str | None) -> None:
        self.url = url
        self._memory = InMemorySessionService()

    @asynccontextmanager
    async def open(self) -> AsyncIterator[BaseSessionService]:
        if self.url is None:
            yield self._memory
            return
        service = SqlSessionService(self.url)
        try:
            yield service
        finally:
            await service.close()


async def _play(
    case: _Case,
    store: _Store,
    ledger: Path,
    stop: tuple[int, int] | None,
    yielded: list[int] | None = None,
) -> tuple[list[Event], dict[str, Any]]:
    """The case's messages on a fresh session; with ``stop = (i, k)``, the run of message
    ``i`` stops after its ``k``-th committed event and is resumed (by another "process")
    before the next message. ``yielded`` gets the number of events each message's run
    yielded."""
    app_name = case.app_name
    async with store.open() as service:
        session_id = (await service.create_session(app_name=app_name, user_id="u")).id
    for i in range(case.messages):
        async with store.open() as service:
            runner = Runner(app=case.build_app(ledger), session_service=service)
            session = await service.get_session(
                app_name=app_name, user_id="u", session_id=session_id
            )
            assert session is not None
            events = runner.run_async(
                user_id="u",
                session_id=session_id,
                new_message=case.message(i, session.events),
                run_config=case.run_config,
            )
            seen = 0
            async for _event in events:
                seen += 1
                if stop == (i, seen):
                    break
            await events.aclose()
            await runner.close()
        if stop == (i, seen):
            await _resume_unless_done(case, store, ledger, session_id)
        if yielded is not None:
            yielded.append(seen)
    async with store.open() as service:
        final = await service.get_session(app_name=app_name, user_id="u", session_id=session_id)
    assert final is not None
    return final.events, dict(final.state)


async def _resume_unless_done(case: _Case, store: _Store, ledger: Path, session_id: str) -> None:
    """Resume the session's latest invocation in a new Runner, unless it had already
    committed its last marker (finished, or paused for the user's answer): the latest
    marker says where an invocation is."""
    async with store.open() as service:
        session = await service.get_session(
            app_name=case.app_name, user_id="u", session_id=session_id
        )
        assert session is not None
        latest = session.events[-1].invocation_id
        marks = [
            m for e in session.events if e.invocation_id == latest if (m := invocation_mark(e))
        ]
        if marks[-1] in (FINISHED, ENDED):
            return
        runner = Runner(app=case.build_app(ledger), session_service=service)
        async for _event in runner.resume_async(user_id="u", session_id=session_id):
            pass
        await runner.close()


def _normalized(events: list[Event]) -> dict[str | None, list[str]]:
    """``normalized_log`` without the call ids each run draws anew: in a delegated task's
    branch (``picker@<call id>``) and in a confirmation's ``originalFunctionCall``."""
    return {
        re.sub(r"@[^.]+", "@<call>", branch) if branch else branch: [
            _CALL_ID.sub("<call>", repr(row)) for row in rows
        ]
        for branch, rows in normalized_log(events).items()
    }


_CALL_ID = re.compile(r"call-[0-9a-f]+-[0-9a-f]+")


def _marks(events: list[Event]) -> list[list[str]]:
    """Per invocation (in order), its invocation markers: each ends as it did uninterrupted
    (finished once; or paused for the user, then finished), whatever stopped it."""
    per: dict[str, list[str]] = {}
    for event in events:
        mark = invocation_mark(event)
        if event.invocation_id:
            per.setdefault(event.invocation_id, [])
            if mark:
                per[event.invocation_id].append(mark)
    return list(per.values())


@pytest.fixture(
    params=["in memory", "sqlite file", pytest.param("postgres", marks=pytest.mark.postgres)]
)
def stored(request: pytest.FixtureRequest, tmp_path: Path) -> Callable[[str], str | None]:
    """The session store's URL for a label (None: in memory): each label's run gets a
    database of its own (SQLite: a file; PostgreSQL: the test's private database, whose
    sessions differ by id)."""
    if request.param == "in memory":
        return lambda label: None
    if request.param == "sqlite file":
        return lambda label: f"sqlite+aiosqlite:///{tmp_path / label}.db"
    url: str = request.getfixturevalue("database")
    return lambda label: url


@pytest.mark.parametrize("name", sorted(CASES))
async def test_a_run_stopped_after_any_commit_resumes_to_the_uninterrupted_log(
    name: str,
    stored: Callable[[str], str | None],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(workflow_kill_app, "EFFECT_SECONDS", 0.0)
    monkeypatch.setattr(kill_anywhere_app, "STAMP_SECONDS", 0.0)
    case = CASES[name]

    def store(label: str) -> _Store:
        return _Store(stored(label))

    counts: list[int] = []
    expected, expected_state = await _play(
        case, store("baseline"), tmp_path / "baseline.ledger", None, counts
    )
    assert all(marks[-1] == FINISHED for marks in _marks(expected)[-1:])
    assert min(counts) >= 2  # each run commits an event, then its last marker
    places = [(i, k) for i, count in enumerate(counts) for k in range(1, count)]
    for place in places:
        label = f"{place[0]}-{place[1]}"
        events, state = await _play(case, store(label), tmp_path / f"{label}.ledger", place)
        assert _marks(events) == _marks(expected), place
        assert node_outputs(events) == node_outputs(expected), place
        assert state == expected_state, place
        assert _normalized(events) == _normalized(expected), place
