"""One framework that is not Eventide or google-adk, one scenario, in this (fresh) process.

``python benchmarks/peer_worker.py --framework openai-agents|pydantic-ai|langgraph
--scenario 2|3 [--quick]`` runs in that framework's own venv (it imports nothing from
Eventide) and prints one JSON line: ``{"metrics": {...}}`` or ``{"error": "..."}``.

The scenarios are ``benchmarks/scenarios.py``'s 2 and 3 as each framework's users write them:
2, an agent whose model answers with text; 3, the model calls ``get_weather(city)`` (an
``async def``), the framework runs it and sends the result back, the model answers. Each turn
starts a new conversation (the framework's in-memory default: a fresh input list, a fresh
message history, a fresh graph thread) and is timed from the call to its return. The model is
a fake built on the framework's own model interface, answering from the request alone, as
Eventide's and google-adk's fakes do; each turn's result is checked, so no side can look fast
by doing less.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import sys
import time
import warnings
from collections.abc import Awaitable, Callable
from typing import Any

WEATHER = "Sunny, 21 C in Paris."
ANSWER = "It is sunny in Paris."
TEXT = "Hello from the benchmark model."

Turn = Callable[[], Awaitable[str]]


async def get_weather(city: str) -> str:
    """Get the weather of a city.

    Args:
        city: the city's name.
    """
    return WEATHER if city == "Paris" else "unknown"


def openai_agents(tool: bool) -> Turn:
    from agents.models.interface import Model
    from openai.types.responses import (
        ResponseFunctionToolCall,
        ResponseOutputMessage,
        ResponseOutputText,
    )

    from agents import Agent, ModelResponse, Runner, Usage, function_tool, set_tracing_disabled

    set_tracing_disabled(True)

    def message(text: str) -> Any:
        part = ResponseOutputText(text=text, type="output_text", annotations=[])
        return ResponseOutputMessage(
            id="m", content=[part], role="assistant", status="completed", type="message"
        )

    class FakeModel(Model):
        async def get_response(self, system_instructions: Any, input: Any, *a: Any, **k: Any):
            items = input if isinstance(input, list) else []
            answered = any(
                isinstance(i, dict) and i.get("type") == "function_call_output" for i in items
            )
            if tool and not answered:
                call = ResponseFunctionToolCall(
                    arguments='{"city": "Paris"}',
                    call_id="call_1",
                    name="get_weather",
                    type="function_call",
                )
                output: list[Any] = [call]
            else:
                output = [message(ANSWER if tool else TEXT)]
            return ModelResponse(output=output, usage=Usage(), response_id=None)

        def stream_response(self, *a: Any, **k: Any) -> Any:
            raise NotImplementedError

    agent = Agent(
        name="bench_agent",
        instructions="You are a benchmark agent. Answer briefly.",
        model=FakeModel(),
        tools=[function_tool(get_weather)] if tool else [],
    )

    async def turn() -> str:
        result = await Runner.run(agent, "What is the weather in Paris?")
        return str(result.final_output)

    return turn


def pydantic_ai(tool: bool) -> Turn:
    from pydantic_ai import Agent
    from pydantic_ai.messages import ModelResponse, TextPart, ToolCallPart, ToolReturnPart
    from pydantic_ai.models.function import FunctionModel

    async def model(messages: list[Any], info: Any) -> Any:
        answered = any(
            isinstance(part, ToolReturnPart) for m in messages for part in getattr(m, "parts", ())
        )
        if tool and not answered:
            return ModelResponse(parts=[ToolCallPart("get_weather", {"city": "Paris"})])
        return ModelResponse(parts=[TextPart(ANSWER if tool else TEXT)])

    agent = Agent(
        FunctionModel(model),
        instructions="You are a benchmark agent. Answer briefly.",
        tools=[get_weather] if tool else [],
    )

    async def turn() -> str:
        result = await agent.run("What is the weather in Paris?")
        return str(result.output)

    return turn


def langgraph(tool: bool) -> Turn:
    from langchain_core.language_models.chat_models import BaseChatModel
    from langchain_core.messages import AIMessage, ToolMessage
    from langchain_core.outputs import ChatGeneration, ChatResult
    from langchain_core.tools import tool as as_tool
    from langgraph.prebuilt import create_react_agent

    def answer(messages: list[Any]) -> ChatResult:
        answered = any(isinstance(m, ToolMessage) for m in messages)
        if tool and not answered:
            call = {"name": "get_weather", "args": {"city": "Paris"}, "id": "call_1"}
            reply = AIMessage(content="", tool_calls=[call])
        else:
            reply = AIMessage(content=ANSWER if tool else TEXT)
        return ChatResult(generations=[ChatGeneration(message=reply)])

    class FakeChatModel(BaseChatModel):
        @property
        def _llm_type(self) -> str:
            return "bench-fake"

        def _generate(self, messages: list[Any], *a: Any, **k: Any) -> ChatResult:
            return answer(messages)

        async def _agenerate(self, messages: list[Any], *a: Any, **k: Any) -> ChatResult:
            return answer(messages)

        def bind_tools(self, tools: Any, **kwargs: Any) -> Any:
            return self

    graph = create_react_agent(
        FakeChatModel(),
        tools=[as_tool(get_weather)] if tool else [],
        prompt="You are a benchmark agent. Answer briefly.",
    )

    async def turn() -> str:
        state = await graph.ainvoke(
            {"messages": [{"role": "user", "content": "What is the weather in Paris?"}]}
        )
        messages = state["messages"]
        if tool and not any(isinstance(m, ToolMessage) and m.content == WEATHER for m in messages):
            raise RuntimeError("the tool did not run")
        return str(messages[-1].content)

    return turn


FRAMEWORKS: dict[str, Callable[[bool], Turn]] = {
    "openai-agents": openai_agents,
    "pydantic-ai": pydantic_ai,
    "langgraph": langgraph,
}


async def run(framework: str, scenario: int, quick: bool) -> dict[str, Any]:
    tool = scenario == 3
    turn = FRAMEWORKS[framework](tool)
    expected = ANSWER if tool else TEXT
    warmup, reps = (5, 20) if quick else (30, 150)
    samples: list[float] = []
    for i in range(warmup + reps):
        if i == warmup:
            gc.collect()
        start = time.perf_counter()
        text = await turn()
        elapsed = (time.perf_counter() - start) * 1e6
        if text != expected:
            raise RuntimeError(f"{framework}: expected {expected!r}, got {text!r}")
        if i >= warmup:
            samples.append(elapsed)
    return {"metrics": {"turn_async_tool_us" if tool else "turn_us": samples}}


def main() -> None:
    """Parse the arguments, run the scenario, print its samples as one JSON line."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--framework", required=True, choices=sorted(FRAMEWORKS))
    parser.add_argument("--scenario", required=True, type=int, choices=(2, 3))
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    warnings.simplefilter("ignore")
    try:
        result = asyncio.run(run(args.framework, args.scenario, args.quick))
    except Exception as exc:
        result = {"error": f"{type(exc).__name__}: {exc}"}
    sys.stdout.write(json.dumps(result) + "\n")


if __name__ == "__main__":
    main()
