"""Not a test module: run by google-adk's interpreter (``tests/adk_env.py``): the paused-sequence app of
``test_pause.py`` on google-adk 2.13.0 with resumability, printed as JSON.

A ``SequentialAgent`` of ``a`` (calls a long-running tool that returns nothing; answers with
the tool's later result) and ``b`` (answers). The script sends "go", then the tool's result
as a function response, and prints the session's events with content (author, kind, text),
the number of invocation ids, and how many times the tool ran.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncGenerator
from typing import Any

from google.adk.agents import LlmAgent, SequentialAgent
from google.adk.apps import App, ResumabilityConfig
from google.adk.models.base_llm import BaseLlm
from google.adk.models.llm_request import LlmRequest
from google.adk.models.llm_response import LlmResponse
from google.adk.runners import Runner
from google.adk.sessions import InMemorySessionService
from google.adk.tools import LongRunningFunctionTool
from google.genai import types

RAN: list[int] = []


class Model(BaseLlm):  # type: ignore[misc]  # google-adk is untyped here
    async def generate_content_async(
        self, llm_request: LlmRequest, stream: bool = False
    ) -> AsyncGenerator[LlmResponse, None]:
        last = llm_request.contents[-1].parts[-1]
        if last.function_response is not None:
            part = types.Part(text=f"{self.model} got {last.function_response.response}")
        elif self.model == "b":
            part = types.Part(text="b done")
        else:
            part = types.Part(function_call=types.FunctionCall(name="approve", args={"x": 1}))
        yield LlmResponse(content=types.Content(role="model", parts=[part]))


def approve(x: int) -> None:
    """Ask for an approval."""
    RAN.append(x)


def trace(events: list[Any]) -> list[list[str]]:
    rows: list[list[str]] = []
    for event in events:
        for part in (event.content.parts or []) if event.content else []:
            if part.text:
                rows.append([event.author, "text", part.text])
            if part.function_call:
                rows.append([event.author, "call", part.function_call.name])
            if part.function_response:
                rows.append([event.author, "response", str(part.function_response.response)])
    return rows


async def main() -> None:
    root = SequentialAgent(
        name="seq",
        sub_agents=[
            LlmAgent(name="a", model=Model(model="a"), tools=[LongRunningFunctionTool(approve)]),
            LlmAgent(name="b", model=Model(model="b")),
        ],
    )
    app = App(
        name="app", root_agent=root, resumability_config=ResumabilityConfig(is_resumable=True)
    )
    service = InMemorySessionService()
    runner = Runner(app=app, session_service=service)
    session = await service.create_session(app_name="app", user_id="u")
    call_id = None
    go = types.Content(role="user", parts=[types.Part(text="go")])
    async for event in runner.run_async(user_id="u", session_id=session.id, new_message=go):
        for call in event.get_function_calls():
            call_id = call.id
    answer = types.Content(
        role="user",
        parts=[
            types.Part(
                function_response=types.FunctionResponse(
                    id=call_id, name="approve", response={"ok": True}
                )
            )
        ],
    )
    async for _ in runner.run_async(user_id="u", session_id=session.id, new_message=answer):
        pass
    stored = await service.get_session(app_name="app", user_id="u", session_id=session.id)
    assert stored is not None
    print(
        json.dumps(
            {
                "trace": trace(stored.events),
                "invocations": len({e.invocation_id for e in stored.events}),
                "ran": len(RAN),
            }
        )
    )


if __name__ == "__main__":
    asyncio.run(main())
