"""One graph-workflow scenario on one framework, in this (fresh) process.

``python benchmarks/workflow_worker.py --framework eventide|adk|langgraph|langgraph-saver
--scenario S [--quick]`` prints one JSON line: ``{"metrics": {...}}`` or ``{"error": "..."}``.

The scenarios, written as each framework's users write them:

- ``chain100``: 100 function nodes in a chain, each adding one to its input.
- ``fan1000``: one source node fanned out to 1,000 function nodes, joined by one join node,
  summed by a last node.
- ``pipeline3``: three LLM agents in a chain, on a fake model answering with text.
- ``resume1000`` (Eventide only): a 1,000-node chain whose last node crashes the run once;
  ``Runner.resume_async`` then replays the 999 completed nodes from the log and runs the
  last one. The metric is the replay's cost: the resume's wall time.

Eventide and google-adk run the very same workflow source (their public names are the same;
only the import differs); LangGraph runs the same shapes as a ``StateGraph``: ``langgraph``
without a checkpointer (it keeps no record of a run), ``langgraph-saver`` with its
``InMemorySaver`` (a checkpoint after every step, what a run that can resume needs: the
like-for-like of Eventide's committed event log). Each run starts
a new session (a new thread for LangGraph), its result is checked, and the metrics are per
node: ``per_node_us`` (wall time of a whole run over its node count, one sample per run) and
``peak_kib_per_node`` (tracemalloc's peak over a separate run, over the node count).
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import operator
import sys
import time
import tracemalloc
import warnings
from collections.abc import Awaitable, Callable
from typing import Annotated, Any, TypedDict

Run = Callable[[], Awaitable[int]]
FRAMEWORKS = ("eventide", "adk", "langgraph", "langgraph-saver")
NODES = {"chain100": 100, "fan1000": 1002, "pipeline3": 3}
TEXT = "Noted."


def _steps(count: int) -> list[Callable[[int], int]]:
    """``count`` distinct named functions adding one to their input."""

    def make(index: int) -> Callable[[int], int]:
        def step(node_input: int) -> int:
            return node_input + 1

        step.__name__ = f"step_{index}"
        return step

    return [make(index) for index in range(count)]


def _start(node_input: Any) -> int:
    """The first node: the user's message in, zero out."""
    return 0


def _total(node_input: dict[str, int]) -> int:
    return sum(node_input.values())


def adk_like(framework: str, scenario: str) -> Run:
    """The workflow on google-adk 2.13 or on Eventide (same source, another import)."""
    if framework == "adk":
        from google.adk import Workflow
        from google.adk.agents import LlmAgent
        from google.adk.models import BaseLlm, LlmResponse
        from google.adk.runners import InMemoryRunner
        from google.adk.workflow import JoinNode
        from google.genai import types
    else:
        from eventide import InMemoryRunner, LlmAgent, types
        from eventide.models import BaseLlm, LlmResponse
        from eventide.workflow import JoinNode, Workflow

    class TextLlm(BaseLlm):  # type: ignore[misc, valid-type]
        async def generate_content_async(self, llm_request: Any, stream: bool = False) -> Any:
            yield LlmResponse(content=types.Content(role="model", parts=[types.Part(text=TEXT)]))

    expected: Any
    if scenario == "chain100":
        workflow = Workflow(name="chain", edges=[("START", _start, *_steps(99))])
        expected = 99
    elif scenario == "fan1000":
        source = _start
        join = JoinNode(name="join")
        workers = tuple(_steps(1000))
        workflow = Workflow(name="fan", edges=[("START", source, workers, join, _total)])
        expected = 1000
    elif scenario == "pipeline3":
        agents = [
            LlmAgent(name=f"agent_{index}", model=TextLlm(model="bench-text"), instruction="Go.")
            for index in range(3)
        ]
        workflow = Workflow(name="pipeline", edges=[("START", *agents)])
        expected = TEXT
    else:
        raise ValueError(f"unknown scenario {scenario!r}")
    runner = InMemoryRunner(node=workflow, app_name="bench")
    message = types.Content(role="user", parts=[types.Part(text="go")])

    async def run() -> int:
        session = await runner.session_service.create_session(app_name="bench", user_id="u")
        output: Any = None
        async for event in runner.run_async(
            user_id="u", session_id=session.id, new_message=message
        ):
            if event.output is not None:
                output = event.output
            elif event.content and event.content.parts and event.content.parts[0].text:
                output = event.content.parts[0].text
        if output != expected:
            raise AssertionError(f"workflow ended with {output!r}, expected {expected!r}")
        return NODES[scenario]

    return run


def langgraph(scenario: str, *, saved: bool = False) -> Run:
    """The same shapes as a LangGraph ``StateGraph``; ``saved``: with an ``InMemorySaver``,
    each run on a thread of its own."""
    from langchain_core.language_models.chat_models import BaseChatModel
    from langchain_core.messages import AIMessage, HumanMessage
    from langchain_core.outputs import ChatGeneration, ChatResult
    from langgraph.graph import END, START, StateGraph

    class Chain(TypedDict):
        value: int

    class Fan(TypedDict):
        value: int
        results: Annotated[list[int], operator.add]
        total: int

    class Chat(TypedDict):
        messages: Annotated[list[Any], operator.add]

    expected: Any
    graph: Any
    if scenario == "chain100":
        graph = StateGraph(Chain)
        names = [f"step_{index}" for index in range(100)]
        for name in names:
            graph.add_node(name, lambda state: {"value": state["value"] + 1})
        graph.add_edge(START, names[0])
        for before, after in zip(names, names[1:], strict=False):
            graph.add_edge(before, after)
        graph.add_edge(names[-1], END)
        state: Any = {"value": -1}
        expected = 99
    elif scenario == "fan1000":
        graph = StateGraph(Fan)
        graph.add_node("source", lambda state: {"value": 0})
        graph.add_edge(START, "source")
        for index in range(1000):
            name = f"step_{index}"
            graph.add_node(name, lambda state: {"results": [state["value"] + 1]})
            graph.add_edge("source", name)
        graph.add_node("total", lambda state: {"total": sum(state["results"])})
        graph.add_edge([f"step_{index}" for index in range(1000)], "total")
        graph.add_edge("total", END)
        state = {"value": 0, "results": [], "total": 0}
        expected = 1000
    elif scenario == "pipeline3":

        class FakeChatModel(BaseChatModel):
            @property
            def _llm_type(self) -> str:
                return "bench"

            def _generate(self, messages: list[Any], *a: Any, **k: Any) -> ChatResult:
                return ChatResult(generations=[ChatGeneration(message=AIMessage(content=TEXT))])

            async def _agenerate(self, messages: list[Any], *a: Any, **k: Any) -> ChatResult:
                return self._generate(messages)

        model = FakeChatModel()

        async def agent(state: Chat) -> dict[str, Any]:
            return {"messages": [await model.ainvoke(state["messages"])]}

        graph = StateGraph(Chat)
        for index in range(3):
            graph.add_node(f"agent_{index}", agent)
        graph.add_edge(START, "agent_0")
        graph.add_edge("agent_0", "agent_1")
        graph.add_edge("agent_1", "agent_2")
        graph.add_edge("agent_2", END)
        state = {"messages": [HumanMessage(content="go")]}
        expected = TEXT
    else:
        raise ValueError(f"unknown scenario {scenario!r}")
    if saved:
        from langgraph.checkpoint.memory import InMemorySaver

        compiled = graph.compile(checkpointer=InMemorySaver())
    else:
        compiled = graph.compile()
    threads = iter(range(1 << 62))

    async def run() -> int:
        config = {"configurable": {"thread_id": f"run-{next(threads)}"}} if saved else None
        result = await compiled.ainvoke(dict(state), config)
        if scenario == "chain100":
            got: Any = result["value"]
        elif scenario == "fan1000":
            got = result["total"]
        else:
            got = result["messages"][-1].content
        if got != expected:
            raise AssertionError(f"graph ended with {got!r}, expected {expected!r}")
        return NODES[scenario]

    return run


async def eventide_resume(runs: int) -> dict[str, Any]:
    """Replay cost of resuming a 1,000-node chain whose last node crashed the first run."""
    from eventide import App, InMemorySessionService, ResumabilityConfig, Runner, types
    from eventide.workflow import Workflow

    class Crash(Exception):
        """Stands in for the process dying while the last node runs."""

    crashed: set[str] = set()

    def last(node_input: int) -> int:
        key = current[0]
        if key not in crashed:
            crashed.add(key)
            raise Crash
        return node_input + 1

    current = [""]
    workflow = Workflow(name="long", edges=[("START", _start, *_steps(998), last)])
    resumable = ResumabilityConfig(is_resumable=True)
    app = App(name="bench", root_agent=workflow, resumability_config=resumable)
    runner = Runner(app=app, session_service=InMemorySessionService())
    message = types.Content(role="user", parts=[types.Part(text="go")])
    samples = []
    for _ in range(runs):
        session = await runner.session_service.create_session(app_name="bench", user_id="u")
        current[0] = session.id
        invocation_id = None
        try:
            async for event in runner.run_async(
                user_id="u", session_id=session.id, new_message=message
            ):
                invocation_id = event.invocation_id
        except Crash:
            pass
        if invocation_id is None:
            raise AssertionError("the crashed run committed nothing")
        output = None
        started = time.perf_counter()
        async for event in runner.resume_async(
            user_id="u", session_id=session.id, invocation_id=invocation_id
        ):
            if event.output is not None:
                output = event.output
        samples.append((time.perf_counter() - started) * 1e3)
        if output != 999:
            raise AssertionError(f"resumed workflow ended with {output!r}, expected 999")
    return {"metrics": {"resume_ms": samples}}


async def measure(framework: str, scenario: str, quick: bool) -> dict[str, Any]:
    runs = 3 if quick else 15
    if scenario == "resume1000":
        if framework != "eventide":
            raise ValueError("resume1000 runs on Eventide only")
        return await eventide_resume(runs)
    if framework.startswith("langgraph"):
        run = langgraph(scenario, saved=framework == "langgraph-saver")
    else:
        run = adk_like(framework, scenario)
    await run()  # warm-up: imports, first-call caches
    samples = []
    for _ in range(runs):
        gc.collect()
        started = time.perf_counter()
        nodes = await run()
        samples.append((time.perf_counter() - started) * 1e6 / nodes)
    gc.collect()
    tracemalloc.start()
    nodes = await run()
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return {"metrics": {"per_node_us": samples, "peak_kib_per_node": [peak / 1024 / nodes]}}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--framework", required=True, choices=FRAMEWORKS)
    parser.add_argument("--scenario", required=True, choices=(*NODES, "resume1000"))
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    warnings.simplefilter("ignore")
    try:
        result = asyncio.run(measure(args.framework, args.scenario, args.quick))
    except Exception as exc:  # reported to the parent, which names the framework
        result = {"error": f"{type(exc).__name__}: {exc}"}
    print(json.dumps(result))
    sys.stdout.flush()


if __name__ == "__main__":
    main()
