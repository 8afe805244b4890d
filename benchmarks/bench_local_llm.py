"""Per-turn runtime overhead against a real local model server (llama.cpp + SmolLM2-135M).

Usage: python benchmarks/bench_local_llm.py [--turns N] [--json] [--no-adk]

Needs the ``local-llm`` extra (``make install``). One llama.cpp server (the same the
connector tests start) answers every stack; each turn asks for one token, so the server's
time stays small, and every stack's HTTP transport is timed, so what a framework adds is
measured directly: overhead = wall time of the turn - time inside the HTTP exchange.

- ``sdk``: ``openai.AsyncOpenAI().chat.completions.create`` called directly: the floor;
- ``eventide``: a whole ``Runner.run_async`` turn of an ``LlmAgent`` on ``OpenAILlm``
  (session events appended and committed, request built, response parsed);
- ``adk``: the same turn in google-adk 2.13 through its LiteLLM route (``LiteLlm``), run in
  /work/adk-venv (or ``$ADK_PYTHON``); LiteLLM's HTTP is timed through
  ``litellm.aclient_session``.

Reports medians over N turns (default 20) after the first, and the first turn of the
process separately (lazy imports and client set-up land there).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT))

PROMPT = "Say hi."


def _timed_transport() -> Any:
    import httpx

    class TimedTransport(httpx.AsyncBaseTransport):
        """Adds the time of each whole HTTP exchange (body read) to ``spent``."""

        def __init__(self) -> None:
            self.inner = httpx.AsyncHTTPTransport()
            self.spent = 0.0

        async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
            started = time.perf_counter()
            response = await self.inner.handle_async_request(request)
            await response.aread()
            self.spent += time.perf_counter() - started
            return response

        async def aclose(self) -> None:
            await self.inner.aclose()

    return TimedTransport()


async def _sdk_turns(url: str, turns: int) -> list[float]:
    started = time.perf_counter()
    import httpx
    import openai

    transport = _timed_transport()
    client = openai.AsyncOpenAI(
        api_key="x", base_url=url, http_client=httpx.AsyncClient(transport=transport)
    )
    overheads = []
    for _ in range(turns + 1):
        transport.spent = 0.0
        await client.chat.completions.create(
            model="smollm2",
            messages=[{"role": "user", "content": PROMPT}],
            max_tokens=1,
            temperature=0,
        )
        overheads.append(time.perf_counter() - started - transport.spent)
        started = time.perf_counter()
    await client.close()
    return overheads


async def _eventide_turns(url: str, turns: int) -> list[float]:
    started = time.perf_counter()
    import httpx

    from eventide import LlmAgent, types
    from eventide.models import OpenAIProvider
    from eventide.models.openai_llm import OpenAILlm
    from eventide.runner import InMemoryRunner

    transport = _timed_transport()

    class TimedProvider(OpenAIProvider):
        def _make_client(self) -> Any:
            import openai

            return openai.AsyncOpenAI(
                api_key="x",
                base_url=self.base_url,
                max_retries=0,
                http_client=httpx.AsyncClient(transport=transport),
            )

    agent = LlmAgent(
        name="bench",
        model=OpenAILlm(model="smollm2", provider=TimedProvider.compatible(url)),
        instruction="Answer briefly.",
        generate_content_config=types.GenerateContentConfig(temperature=0, max_output_tokens=1),
    )
    runner = InMemoryRunner(agent, app_name="bench")
    session = await runner.session_service.create_session(app_name="bench", user_id="u")
    overheads = []
    for _ in range(turns + 1):
        transport.spent = 0.0
        async for event in runner.run_async(user_id="u", session_id=session.id, new_message=PROMPT):
            assert not event.error_code, event.error_message
        overheads.append(time.perf_counter() - started - transport.spent)
        started = time.perf_counter()
    await runner.close()
    assert isinstance(agent.model, OpenAILlm)
    await agent.model.close()
    return overheads


ADK_WORKER = r"""
import asyncio, json, sys, time
started = time.perf_counter()
import httpx, litellm
from google.adk.agents import LlmAgent
from google.adk.models.lite_llm import LiteLlm
from google.adk.runners import InMemoryRunner
from google.genai import types

url, turns = sys.argv[1], int(sys.argv[2])

class Timed(httpx.AsyncBaseTransport):
    def __init__(self):
        self.inner = httpx.AsyncHTTPTransport(); self.spent = 0.0
    async def handle_async_request(self, request):
        t = time.perf_counter(); r = await self.inner.handle_async_request(request)
        await r.aread(); self.spent += time.perf_counter() - t; return r

transport = Timed()
litellm.aclient_session = httpx.AsyncClient(transport=transport)

async def main():
    global started
    agent = LlmAgent(name="bench", model=LiteLlm(model="openai/smollm2", api_base=url,
                     api_key="x", max_tokens=1, temperature=0), instruction="Answer briefly.")
    runner = InMemoryRunner(agent=agent, app_name="bench")
    session = await runner.session_service.create_session(app_name="bench", user_id="u")
    out = []
    for _ in range(turns + 1):
        transport.spent = 0.0
        async for event in runner.run_async(user_id="u", session_id=session.id,
                new_message=types.Content(role="user", parts=[types.Part(text="Say hi.")])):
            assert not event.error_code, event.error_message
        out.append([time.perf_counter() - started - transport.spent, transport.spent])
        started = time.perf_counter()
    print(json.dumps(out))

asyncio.run(main())
"""


def _adk_turns(url: str, turns: int) -> list[float] | str:
    python = os.environ.get("ADK_PYTHON", "/work/adk-venv/bin/python")
    if not Path(python).exists():
        return f"no google-adk interpreter at {python}"
    env = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    done = subprocess.run(
        [python, "-c", ADK_WORKER, url, str(turns)],
        capture_output=True,
        text=True,
        timeout=600,
        env=env,
    )
    if done.returncode != 0:
        return f"google-adk worker failed: {done.stderr[-500:]}"
    rows = json.loads(done.stdout.strip().splitlines()[-1])
    if not any(spent for _, spent in rows):
        return "LiteLLM's HTTP could not be timed (aclient_session unused)"
    return [overhead for overhead, _ in rows]


def _summary(overheads: list[float]) -> dict[str, float]:
    later = overheads[1:]
    return {
        "first_turn_ms": round(overheads[0] * 1000, 3),
        "median_ms": round(statistics.median(later) * 1000, 3),
        "p25_ms": round(statistics.quantiles(later, n=4)[0] * 1000, 3),
        "p75_ms": round(statistics.quantiles(later, n=4)[2] * 1000, 3),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=20)
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--no-adk", action="store_true")
    args = parser.parse_args()
    from tests.models.llama_cpp_server import gguf_path, llama_server

    model = gguf_path()
    if model is None:
        print("The local-llm extra is not installed (make install).", file=sys.stderr)
        return 2
    results: dict[str, Any] = {}
    with llama_server(model) as url:
        results["sdk"] = _summary(asyncio.run(_sdk_turns(url, args.turns)))
        results["eventide"] = _summary(asyncio.run(_eventide_turns(url, args.turns)))
        if not args.no_adk:
            adk = _adk_turns(url, args.turns)
            results["adk"] = _summary(adk) if isinstance(adk, list) else {"skipped": adk}
    results["eventide_minus_sdk_ms"] = round(
        results["eventide"]["median_ms"] - results["sdk"]["median_ms"], 3
    )
    if args.json:
        print(json.dumps(results, indent=2))
    else:
        for name, row in results.items():
            print(f"{name:>22}: {row}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
