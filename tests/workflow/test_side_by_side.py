"""The same workflows on Eventide and on google-adk 2.13: the same events (node paths,
authors, branches, outputs, routes, state deltas), the same requests for input and the
same final state (issue 31, "Behaviour side by side with google-adk 2.13")."""

from __future__ import annotations

from typing import Any

import pytest

from tests.workflow.side_by_side import normalized, play_here, play_on_adk

ROUTES_FAN_OUT_JOIN = """
from ADK import Event
from ADK.workflow import JoinNode, Workflow

def start(node_input: str):
    return node_input.upper()

async def classify(node_input: str):
    yield Event(route="long" if len(node_input) > 3 else "short", state={"seen": node_input})
    yield Event(output=len(node_input))

def long_(node_input):
    return f"long:{node_input}"

def short(node_input):
    return f"short:{node_input}"

def a(node_input):
    return "a"

def b(node_input):
    return "b"

join = JoinNode(name="join")

def final(node_input, seen: str):
    return {"join": node_input, "seen": seen}

wf = Workflow(name="wf", edges=[
    ("START", start, classify, {"long": long_, "short": short}),
    (long_, (a, b), join, final),
    (short, final),
])
"""

DYNAMIC_RETRY_NESTED_AGENT = """
from ADK import Event
from ADK.agents import BaseAgent
from ADK.workflow import RetryConfig, Workflow, node

def double(node_input: int):
    return node_input * 2

@node(rerun_on_resume=True)
async def dyn(ctx, node_input: str):
    first = await ctx.run_node(double, 3)
    second = await ctx.run_node(double, first)
    return [first, second]

attempts = []

@node(retry_config=RetryConfig(max_attempts=3, initial_delay=0.0, jitter=0.0))
def flaky(node_input):
    attempts.append(1)
    if len(attempts) < 2:
        raise ValueError("boom")
    return node_input + [len(attempts)]

inner = Workflow(name="inner", edges=[("START", double)])

def tonum(node_input: list):
    return node_input[-1]

class Echo(BaseAgent):
    async def _run_async_impl(self, ctx):
        yield Event(author=self.name, output="agent-out")

def after_agent(node_input, ctx):
    ctx.state["got"] = node_input
    return {"got": node_input}

wf = Workflow(name="wf", edges=[
    ("START", dyn, flaky, tonum, inner, Echo(name="echo"), after_agent),
])
"""

HUMAN_INPUT = """
from ADK import Event
from ADK.workflow import Workflow
try:
    from google.adk.events.request_input import RequestInput
except ImportError:
    from eventide.workflow import RequestInput

def prep(node_input: str, ctx):
    ctx.state["prepared"] = True
    return node_input + "!"

async def ask(node_input):
    yield RequestInput(message="approve?", payload={"x": node_input})

def after(node_input):
    return {"answer": node_input}

wf = Workflow(name="wf", edges=[("START", prep, ask, after)])
"""

LOOP_WITH_ROUTES = """
from ADK import Event
from ADK.workflow import DEFAULT_ROUTE, Workflow

def init(ctx):
    ctx.state["n"] = 0
    return 0

def step(node_input: int, ctx):
    n = node_input + 1
    ctx.state["n"] = n
    yield Event(output=n, route="again" if n < 3 else "stop")

def finish(node_input: int):
    return f"done after {node_input}"

wf = Workflow(name="wf", edges=[
    ("START", init, step),
    (step, {"again": step, DEFAULT_ROUTE: finish}),
])
"""

SCENARIOS: dict[str, tuple[str, list[Any]]] = {
    "routes, fan-out and join, state-bound parameter": (ROUTES_FAN_OUT_JOIN, ["hello"]),
    "short route": (ROUTES_FAN_OUT_JOIN, ["hi"]),
    "dynamic nodes, retry, nested workflow, custom agent node": (
        DYNAMIC_RETRY_NESTED_AGENT,
        ["go"],
    ),
    "RequestInput pauses, the answer continues": (
        HUMAN_INPUT,
        ["hi", {"answer": {"result": "yes"}}],
    ),
    "a routed cycle with DEFAULT_ROUTE": (LOOP_WITH_ROUTES, ["go"]),
}


LLM_AGENT_NODE = """
from ADK import Event
from ADK.agents import LlmAgent
from ADK.models.base_llm import BaseLlm
from ADK.models.llm_response import LlmResponse
from ADK.workflow import Workflow
from pydantic import BaseModel
from TYPES import Content, Part

class Verdict(BaseModel):
    label: str

class Fake(BaseLlm):
    model: str = "fake"

    async def generate_content_async(self, llm_request, stream=False):
        yield LlmResponse(content=Content(role="model", parts=[Part(text='{"label": "spam"}')]))

judge = LlmAgent(name="judge", model=Fake(), output_schema=Verdict, output_key="verdict")

def describe(node_input: str):
    return {"text": node_input}

def act(node_input: dict):
    return "blocked" if node_input["label"] == "spam" else "ok"

wf = Workflow(name="wf", edges=[("START", describe, judge, act)])
"""

TIMEOUT_AND_STATE_SCHEMA = """
import asyncio
from pydantic import BaseModel
from ADK import Event
from ADK.workflow import RetryConfig, Workflow, node

class Counters(BaseModel):
    tries: int = 0
    label: str = ""

@node(timeout=0.2, retry_config=RetryConfig(max_attempts=2, initial_delay=0.0, jitter=0.0))
async def slow_once(ctx, tries: int = 0):
    ctx.state["tries"] = tries + 1
    if ctx.attempt_count == 1:
        await asyncio.sleep(5)
    return "fast"

def label(node_input: str, ctx):
    ctx.state["label"] = node_input.upper()
    return node_input

wf = Workflow(name="wf", state_schema=Counters, edges=[("START", slow_once, label)])
"""

NESTED_HUMAN_INPUT = """
from ADK import Event
from ADK.workflow import Workflow
try:
    from google.adk.events.request_input import RequestInput
except ImportError:
    from eventide.workflow import RequestInput

def start(node_input: str, ctx):
    ctx.state["started"] = node_input
    return node_input

async def ask(node_input):
    yield RequestInput(message="size?", payload=node_input)

def size(node_input):
    return {"size": node_input}

inner = Workflow(name="inner", edges=[("START", ask, size)])

def done(node_input):
    return {"done": node_input}

wf = Workflow(name="wf", edges=[("START", start, inner, done)])
"""

SCENARIOS["a nested workflow pauses for input and continues"] = (
    NESTED_HUMAN_INPUT,
    ["tea", {"answer": {"result": "large"}}],
)
SCENARIOS["an LlmAgent node with output_schema"] = (LLM_AGENT_NODE, ["buy now"])
SCENARIOS["timeout, retry and state_schema"] = (TIMEOUT_AND_STATE_SCHEMA, ["go"])


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_same_as_google_adk(name: str) -> None:
    source, turns = SCENARIOS[name]
    ours = normalized(play_here(source, turns))
    theirs = normalized(play_on_adk(source, turns))
    assert ours == theirs
