"""How a workflow graph runs (issue 31, step 2): edge forms, timeouts and retries,
concurrency limits, state schemas, agents and tools as nodes, parallel workers, and the
errors a graph that cannot run gets at construction."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator
from typing import Any

import pytest
from pydantic import BaseModel

from eventide import Event, LlmAgent
from eventide.errors import (
    GraphValidationError,
    NodeTimeoutError,
    WorkflowConfigurationError,
    WorkflowDataError,
)
from eventide.testing import ScriptedModel
from eventide.tools.function_tool import FunctionTool
from eventide.workflow import (
    DEFAULT_ROUTE,
    START,
    Edge,
    FunctionNode,
    JoinNode,
    Node,
    RetryConfig,
    Workflow,
    node,
)
from tests.workflow.helpers import answer, outputs, play


def upper(node_input: str) -> str:
    return node_input.upper()


def exclaim(node_input: str) -> str:
    return node_input + "!"


async def test_edge_objects_and_start_by_name_give_the_same_graph_as_chains() -> None:
    chained = Workflow(name="wf", edges=[("START", upper, exclaim)])
    explicit = Workflow(
        name="wf",
        edges=[Edge(from_node=START, to_node=upper), Edge(from_node=upper, to_node=exclaim)],
    )
    for workflow in (chained, explicit):
        events, _ = await play(workflow, "hi")
        assert outputs(events) == [("wf@1/upper@1", "HI"), ("wf@1/exclaim@1", "HI!")]


async def test_routes_from_a_list_and_from_ctx_route() -> None:
    def pick(ctx: Any, node_input: str) -> None:
        ctx.route = ["x", "y"]

    def x(node_input: Any) -> str:
        return "x"

    def y(node_input: Any) -> str:
        return "y"

    def other(node_input: Any) -> str:
        return "other"

    join = JoinNode(name="join")
    workflow = Workflow(
        name="wf",
        edges=[("START", pick, {"x": x, "y": y, DEFAULT_ROUTE: other}), ((x, y), join)],
    )
    events, _ = await play(workflow, "go")
    assert outputs(events)[-1] == ("wf@1/join@1", {"x": "x", "y": "y"})
    assert [e.actions.route for e in events if e.actions.route] == [["x", "y"]]


async def test_timeout_fails_the_node_and_retry_runs_it_again() -> None:
    """A node past its timeout is cancelled with NodeTimeoutError; RetryConfig retries it,
    an error event recording each failed attempt."""
    attempts: list[int] = []

    @node(timeout=0.05, retry_config=RetryConfig(max_attempts=3, initial_delay=0, jitter=0))
    async def slow_then_fast(ctx: Any) -> str:
        attempts.append(ctx.attempt_count)
        if ctx.attempt_count == 1:
            await asyncio.Event().wait()  # never set: only the timeout ends this attempt
        return "done"

    events, _ = await play(Workflow(name="wf", edges=[("START", slow_then_fast)]), "go")
    assert attempts == [1, 2]
    assert [e.error_code for e in events if e.error_code] == ["NodeTimeoutError"]
    assert outputs(events) == [("wf@1/slow_then_fast@1", "done")]


async def test_a_timeout_without_retry_ends_the_run_with_the_error() -> None:
    @node(timeout=0.01)
    async def stuck() -> None:
        await asyncio.Event().wait()

    with pytest.raises(NodeTimeoutError) as caught:
        await play(Workflow(name="wf", edges=[("START", stuck)]), "go")
    assert (caught.value.node_name, caught.value.timeout) == ("stuck", 0.01)


async def test_retry_only_on_the_listed_exceptions() -> None:
    calls: list[str] = []

    @node(retry_config=RetryConfig(max_attempts=5, initial_delay=0, exceptions=[KeyError]))
    def picky() -> None:
        calls.append("x")
        raise ValueError("not retried")

    with pytest.raises(ValueError, match="not retried"):
        await play(Workflow(name="wf", edges=[("START", picky)]), "go")
    assert calls == ["x"]


async def test_max_concurrency_limits_the_nodes_running_at_once() -> None:
    running = 0
    peak = 0

    async def work(node_input: Any) -> int:
        nonlocal running, peak
        running += 1
        peak = max(peak, running)
        await asyncio.sleep(0)
        await asyncio.sleep(0)
        running -= 1
        return 1

    workers = [FunctionNode(func=work, name=f"w{i}") for i in range(6)]
    join = JoinNode(name="join")
    workflow = Workflow(name="wf", max_concurrency=2, edges=[("START", tuple(workers), join)])
    events, _ = await play(workflow, "go")
    assert peak == 2
    assert outputs(events)[-1] == ("wf@1/join@1", {f"w{i}": 1 for i in range(6)})


class Counters(BaseModel):
    count: int = 0
    label: str = ""


async def test_state_schema_checks_parameters_and_writes() -> None:
    def needs_missing(missing: int) -> int:
        return missing

    with pytest.raises(GraphValidationError, match="'missing' is not declared in state_schema"):
        Workflow(name="wf", state_schema=Counters, edges=[("START", needs_missing)])

    def bad_write(ctx: Any, count: int = 0) -> None:
        ctx.state["count"] = "not a number"

    workflow = Workflow(name="wf", state_schema=Counters, edges=[("START", bad_write)])
    with pytest.raises(WorkflowDataError, match="does not fit state_schema 'Counters'"):
        await play(workflow, "go")


async def test_missing_state_parameter_says_what_to_do() -> None:
    def needs(city: str) -> str:
        return city

    with pytest.raises(WorkflowDataError, match="Missing value for parameter 'city'"):
        await play(Workflow(name="wf", edges=[("START", needs)]), "go")


def test_invalid_graphs_are_refused_at_construction() -> None:
    def a(node_input: Any) -> None: ...
    def b(node_input: Any) -> None: ...

    with pytest.raises(GraphValidationError, match="Unconditional cycle detected: a -> b -> a"):
        Workflow(name="wf", edges=[("START", a, b, a)])
    with pytest.raises(GraphValidationError, match="Duplicate node names"):
        Workflow(name="wf", edges=[("START", a, FunctionNode(func=b, name="a"))])
    with pytest.raises(GraphValidationError, match="must not have routes"):
        Workflow(name="wf", edges=[Edge(from_node=START, to_node=a, route="x")])
    with pytest.raises(WorkflowConfigurationError, match="Routing map must not be empty"):
        Workflow(name="wf", edges=[("START", a, {})])
    with pytest.raises(WorkflowConfigurationError, match="not a valid Python identifier"):
        FunctionNode(func=a, name="not valid")


def _increments(count: int) -> list[FunctionNode]:
    def add_one(node_input: int) -> int:
        return node_input + 1

    return [FunctionNode(func=add_one, name=f"step_{i}") for i in range(count)]


async def test_long_chains_and_wide_joins_build_and_run() -> None:
    """A 3,000-node chain is validated without recursion (a cycle at its end still found),
    and a 1,000-way join waits for every branch and gets each one's output."""
    steps = _increments(3000)
    Workflow(name="wf", edges=[("START", *steps)])
    with pytest.raises(GraphValidationError, match="step_2999 -> step_2998"):
        Workflow(name="wf", edges=[("START", *steps), (steps[-1], steps[-2])])

    def zero(node_input: Any) -> int:
        return 0

    def total(node_input: dict[str, int]) -> int:
        assert len(node_input) == 1000
        return sum(node_input.values())

    fan = Workflow(
        name="wf",
        edges=[("START", zero, tuple(_increments(1000)), JoinNode(name="join"), total)],
    )
    events, _ = await play(fan, "go")
    assert outputs(events)[-1] == ("wf@1/total@1", 1000)


async def test_two_terminal_outputs_are_an_error() -> None:
    def a(node_input: Any) -> str:
        return "a"

    def b(node_input: Any) -> str:
        return "b"

    with pytest.raises(WorkflowConfigurationError, match="multiple terminal nodes"):
        await play(Workflow(name="wf", edges=[("START", (a, b))]), "go")


class Verdict(BaseModel):
    label: str
    score: int


async def test_llm_agent_node_outputs_its_validated_answer_and_reads_the_input() -> None:
    """An LlmAgent with output_schema is a node: the earlier node's output reaches the model
    as a user message, and the parsed JSON answer is the node's output."""
    model = ScriptedModel(responses=['{"label": "spam", "score": 9}'])
    judge = LlmAgent(name="judge", model=model, output_schema=Verdict, output_key="verdict")

    def describe(node_input: str) -> dict[str, str]:
        return {"text": node_input}

    def act(node_input: dict[str, Any]) -> str:
        return f"{node_input['label']}:{node_input['score']}"

    events, state = await play(Workflow(name="wf", edges=[("START", describe, judge, act)]), "buy")
    assert outputs(events)[-2:] == [
        ("wf@1/judge@1", {"label": "spam", "score": 9}),
        ("wf@1/act@1", "spam:9"),
    ]
    assert state["verdict"] == {"label": "spam", "score": 9}
    seen = [c.parts[0].text for c in model.requests[0].contents if c.parts]
    assert '{"text": "buy"}' in seen
    assert {e.author for e in events if e.node_info.path == "wf@1/judge@1"} == {"judge", "user"}


async def test_a_tool_is_a_node_its_result_the_output() -> None:
    def add(a: int, b: int) -> int:
        """Add two numbers."""
        return a + b

    def operands(node_input: Any) -> dict[str, int]:
        return {"a": 2, "b": 3}

    events, _ = await play(Workflow(name="wf", edges=[("START", operands, FunctionTool(add))]), "x")
    assert outputs(events)[-1] == ("wf@1/add@1", 5)


async def test_parallel_worker_runs_once_per_item() -> None:
    @node(parallel_worker=True, max_parallel_workers=2)
    def square(node_input: int) -> int:
        return node_input * node_input

    def items(node_input: Any) -> list[int]:
        return [1, 2, 3]

    events, _ = await play(Workflow(name="wf", edges=[("START", items, square)]), "go")
    assert outputs(events)[-1] == ("wf@1/square@1", [1, 4, 9])
    assert ("wf@1/square@1/square@3", 9) in outputs(events)


async def test_node_subclass_and_generator_function() -> None:
    class Split(Node):
        async def run_node_impl(self, *, ctx: Any, node_input: Any) -> AsyncGenerator[Any, None]:
            for word in str(node_input).split():
                yield Event(state={f"word_{word}": True})
            yield len(str(node_input).split())

    def count_up(node_input: int) -> Any:
        for i in range(node_input):
            yield Event(state={"last": i})
        yield node_input * 10

    def text(node_input: str) -> str:
        return node_input

    events, state = await play(
        Workflow(name="wf", edges=[("START", text, Split(name="split"), count_up)]), "a b"
    )
    assert outputs(events)[1:] == [("wf@1/split@1", 2), ("wf@1/count_up@1", 20)]
    assert state == {"word_a": True, "word_b": True, "last": 1}


async def test_require_confirmation_asks_then_runs_or_rejects() -> None:
    ran: list[str] = []

    @node(require_confirmation=True)
    def delete(node_input: Any) -> str:
        ran.append("delete")
        return "deleted"

    workflow = Workflow(name="wf", edges=[("START", delete)])
    first, _ = await play(workflow, "go")
    (call,) = [c for e in first for c in e.get_function_calls()]
    assert call.name == "adk_request_input"
    assert call.id == "wf_tool_confirmation:wf@1/delete@1"
    assert ran == []
    events, _ = await play(workflow, "go", _confirm(call.id, True))
    assert ran == ["delete"]
    assert outputs(events)[-1] == ("wf@1/delete@1", "deleted")
    rejected, _ = await play(workflow, "go", _confirm(call.id, False))
    assert outputs(rejected)[-1] == ("wf@1/delete@1", {"error": "This tool call is rejected."})
    assert ran == ["delete"]


def _confirm(call_id: str, confirmed: bool) -> Any:
    content = answer(call_id, None)
    assert content.parts
    response = content.parts[0].function_response
    assert response is not None
    response.response = {"confirmed": confirmed}
    return content


async def test_run_node_outside_a_workflow_says_where_it_works() -> None:
    from eventide import Context
    from eventide.errors import ConfigurationError

    class Probe(Node):
        async def run_node_impl(self, *, ctx: Any, node_input: Any) -> AsyncGenerator[Any, None]:
            yield "ok"

    events, _ = await play(Workflow(name="wf", edges=[("START", Probe(name="probe"))]), "go")
    assert outputs(events) == [("wf@1/probe@1", "ok")]
    runner_ctx = Context.__new__(Context)
    Context.__init__(runner_ctx, _bare_invocation())
    with pytest.raises(ConfigurationError, match="only inside a workflow node"):
        await runner_ctx.run_node(Probe(name="probe"))


def _bare_invocation() -> Any:
    from eventide import InMemorySessionService, InvocationContext
    from eventide.sessions.session import Session

    service = InMemorySessionService()
    session = Session(id="s", app_name="app", user_id="u")
    return InvocationContext(
        invocation_id="i", agent=Workflow(name="wf"), session=session, session_service=service
    )


async def test_a_node_subclass_as_parallel_worker() -> None:
    class Shout(Node):
        async def run_node_impl(self, *, ctx: Any, node_input: Any) -> AsyncGenerator[Any, None]:
            yield str(node_input).upper()

    def words(node_input: str) -> list[str]:
        return node_input.split()

    shout = Shout(name="shout", parallel_worker=True, max_parallel_workers=1)
    events, _ = await play(Workflow(name="wf", edges=[("START", words, shout)]), "a b")
    assert outputs(events)[-1] == ("wf@1/shout@1", ["A", "B"])


async def test_in_memory_runner_takes_a_node_or_an_app_as_google_adk() -> None:
    """``InMemoryRunner(node=workflow)`` and ``InMemoryRunner(app=App(...))`` (google-adk
    2.x's keywords); the app's name is the runner's unless one is given; two roots refused."""
    from eventide import App, InMemoryRunner
    from eventide.errors import UsageError

    workflow = Workflow(name="wf", edges=[("START", upper)])
    by_node = InMemoryRunner(node=workflow)
    assert (by_node.app_name, by_node.agent) == ("InMemoryRunner", workflow)
    by_app = InMemoryRunner(app=App(name="shop", root_agent=workflow))
    assert (by_app.app_name, by_app.agent) == ("shop", workflow)
    session = await by_app.session_service.create_session(app_name="shop", user_id="u")
    events = [
        e async for e in by_app.run_async(user_id="u", session_id=session.id, new_message="hi")
    ]
    assert [e.output for e in events if e.output is not None] == ["HI"]
    with pytest.raises(UsageError, match="Only one of app, agent, or node"):
        InMemoryRunner(workflow, node=workflow)
