"""google-adk's side of ``bench_history.py``: the same compaction scenario on google-adk.

Run by ``bench_history.py`` with google-adk's interpreter (``$EVENTIDE_ADK_PYTHON``, else
``/work/adk-venv/bin/python``); it imports only google-adk and prints one JSON object.

The scenario is the one Eventide runs, in google-adk's in-memory session service: an
``App`` with ``EventsCompactionConfig(compaction_interval=10, overlap_size=2)`` and an
``LlmEventSummarizer`` over a canned model; a ``small`` session with 10 stored events and a
``big`` one with 5,000 or more (``--quick``: 1,000), built by running the turns; then turns
alternate between the two, each timed from the ``run_async`` call to its last event.
Reported: median and p90 per session, the ratio big / small, and the size of the request
the agent's model received last in each session.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import time
from collections.abc import AsyncGenerator
from typing import Any

from google.adk.agents import LlmAgent
from google.adk.apps import App
from google.adk.apps.app import EventsCompactionConfig
from google.adk.apps.llm_event_summarizer import LlmEventSummarizer
from google.adk.models import BaseLlm, LlmRequest, LlmResponse
from google.adk.runners import Runner
from google.adk.sessions import InMemorySessionService
from google.genai import types

INTERVAL = 10
OVERLAP = 2


class CannedLlm(BaseLlm):
    """Answers ``Noted: <the last text>`` (``bench-notes``) or a fixed summary
    (``bench-summary``), and keeps the last request it got."""

    last_request: Any = None

    async def generate_content_async(
        self, llm_request: LlmRequest, stream: bool = False
    ) -> AsyncGenerator[LlmResponse, None]:
        self.last_request = llm_request
        if self.model == "bench-summary":
            text = "The user has been sending numbered notes; the agent acknowledged each one."
        else:
            last = (llm_request.contents[-1].parts or [types.Part()])[-1]
            text = "Noted: " + (last.text or "")[:40]
        yield LlmResponse(content=types.Content(role="model", parts=[types.Part(text=text)]))


async def _turn(runner: Runner, session_id: str, text: str) -> float:
    message = types.Content(role="user", parts=[types.Part(text=text)])
    start = time.perf_counter()
    async for _ in runner.run_async(user_id="u", session_id=session_id, new_message=message):
        pass
    return time.perf_counter() - start


def _request_size(model: CannedLlm) -> dict[str, int]:
    request = model.last_request
    chars = sum(len(p.text or "") for c in request.contents for p in c.parts or ())
    return {"contents": len(request.contents), "characters": chars}


async def bench(big_events: int, rounds: int) -> dict[str, Any]:
    service = InMemorySessionService()
    model = CannedLlm(model="bench-notes")
    summarizer = CannedLlm(model="bench-summary")
    app = App(
        name="bench_history",
        root_agent=LlmAgent(name="notes", model=model),
        events_compaction_config=EventsCompactionConfig(
            compaction_interval=INTERVAL,
            overlap_size=OVERLAP,
            summarizer=LlmEventSummarizer(llm=summarizer),
        ),
    )
    runner = Runner(app=app, session_service=service)
    for sid in ("small", "big"):
        await service.create_session(app_name="bench_history", user_id="u", session_id=sid)
    for i in range(5):
        await _turn(runner, "small", f"note {i}")
    small = await service.get_session(app_name="bench_history", user_id="u", session_id="small")
    seeded = 0
    while True:
        session = await service.get_session(app_name="bench_history", user_id="u", session_id="big")
        assert session is not None
        if len(session.events) >= big_events:
            break
        for _ in range(200):
            await _turn(runner, "big", f"note {seeded}")
            seeded += 1
    stored = {"small": len(small.events) if small else 0, "big": len(session.events)}
    samples: dict[str, list[float]] = {"small": [], "big": []}
    sizes: dict[str, dict[str, int]] = {}
    for round_ in range(rounds):
        order = ("small", "big") if round_ % 2 == 0 else ("big", "small")
        for sid in order:
            samples[sid].append(await _turn(runner, sid, f"round {round_}"))
            sizes[sid] = _request_size(model)
    result: dict[str, Any] = {"stored_events_before": stored}
    for sid, times in samples.items():
        ordered = sorted(times)
        result[sid] = {
            "turn_median_us": round(statistics.median(times) * 1e6, 1),
            "turn_p90_us": round(ordered[int(len(ordered) * 0.9) - 1] * 1e6, 1),
            "last_request": sizes[sid],
        }
    result["ratio_big_over_small"] = round(
        result["big"]["turn_median_us"] / result["small"]["turn_median_us"], 3
    )
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--big-events", type=int, default=5000)
    parser.add_argument("--rounds", type=int, default=200)
    args = parser.parse_args()
    print(json.dumps(asyncio.run(bench(args.big_events, args.rounds))))


if __name__ == "__main__":
    main()
