"""``Runner.run_debug`` prints google-adk 2.13's format and returns every event, partial ones
included. The expected output below is google-adk's own, taken from the same agent and model
run on google-adk 2.13 side by side (its venv, ``EVENTIDE_ADK_PYTHON``)."""

from __future__ import annotations

from collections.abc import AsyncGenerator
from typing import Any

import pytest

from eventide import BaseLlm, InMemoryRunner, LlmAgent, LlmRequest, LlmResponse, RunConfig, types
from eventide.run_config import StreamingMode


def lookup(city: str) -> dict[str, Any]:
    """Looks up a city."""
    return {"city": city, "population": 123456789, "notes": "x" * 120}


class Script(BaseLlm):
    """Turn 1: a thought, two text parts and a tool call; turn 2: text; turn 3: streamed."""

    turn: int = 0

    async def generate_content_async(
        self, llm_request: LlmRequest, stream: bool = False
    ) -> AsyncGenerator[LlmResponse, None]:
        self.turn += 1
        if self.turn == 1:
            call = types.FunctionCall(
                name="lookup", args={"city": "Oslo and a very long argument value to be cut"}
            )
            parts = [
                types.Part(text="thinking hard", thought=True),
                types.Part(text="Let me "),
                types.Part(text="check."),
                types.Part(function_call=call),
            ]
            yield LlmResponse(content=types.Content(role="model", parts=parts))
        elif self.turn == 2:
            yield LlmResponse(
                content=types.Content(role="model", parts=[types.Part(text="Oslo is big.")])
            )
        else:
            if stream:
                yield LlmResponse(
                    content=types.Content(role="model", parts=[types.Part(text="Str")]),
                    partial=True,
                )
                yield LlmResponse(
                    content=types.Content(role="model", parts=[types.Part(text="eamed")]),
                    partial=True,
                )
            yield LlmResponse(
                content=types.Content(role="model", parts=[types.Part(text="Streamed")])
            )


@pytest.mark.parametrize(
    ("verbose", "expected"),
    [
        (False, "helper > Let me check.\nhelper > Oslo is big.\n"),
        (
            True,
            "helper > thinking hardLet me check.\n"
            "helper > [Calling tool: lookup({'city': 'Oslo and a very long argument value to b...)]\n"
            "helper > [Tool result: {'city': 'Oslo and a very long argument value to be cut', "
            "'population': 123456789, 'notes': 'xxxxxxx...]\n"
            "helper > Oslo is big.\n",
        ),
    ],
)
async def test_the_printed_lines_are_google_adks(
    verbose: bool, expected: str, capsys: pytest.CaptureFixture[str]
) -> None:
    runner = InMemoryRunner(LlmAgent(name="helper", model=Script(model="m"), tools=[lookup]))
    events = await runner.run_debug("population of Oslo?", verbose=verbose)
    assert capsys.readouterr().out == expected
    assert len(events) == 3  # the call, the tool's result, the answer
    await runner.close()


async def test_streamed_partial_events_are_printed_and_returned(
    capsys: pytest.CaptureFixture[str],
) -> None:
    model = Script(model="m", turn=2)
    runner = InMemoryRunner(LlmAgent(name="helper", model=model))
    events = await runner.run_debug(
        "stream", run_config=RunConfig(streaming_mode=StreamingMode.SSE)
    )
    assert [bool(e.partial) for e in events] == [True, True, False]
    assert capsys.readouterr().out == "helper > Str\nhelper > eamed\nhelper > Streamed\n"
    await runner.close()
