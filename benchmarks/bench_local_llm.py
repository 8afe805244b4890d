"""Per-turn runtime overhead and first-turn cost against a real local model server
(llama.cpp + SmolLM2-135M).

Usage: python benchmarks/bench_local_llm.py [--turns N] [--rounds R] [--json] [--no-adk]
                                           [--stacks S,...] [--canned IDLE_MS]

Needs the ``local-llm`` extra (``make install``). One llama.cpp server (the same the
connector tests start) answers every stack. Each stack runs in a fresh process per round
(the order alternates between rounds) and holds one conversation of N+1 turns: a system
instruction, then per turn the user's ``Say hi.`` and the model's answer, all sent again on
the next turn, with ``max_tokens=MAX_TOKENS`` and ``temperature=0`` (the same request in
every stack; the report shows what each sent, so this can be checked). Every stack's HTTP
transport is timed, so what a stack adds is measured directly: overhead = wall time of the
turn - time inside the HTTP exchange (request sent, whole response read).

- ``sdk``: ``openai.AsyncOpenAI().chat.completions.create`` called directly by a chat loop
  that keeps the messages itself (how the SDK is used);
- ``sdk_post``: the same loop through the SDK client's ``post`` with the body as JSON data
  and the answer read as JSON data (``cast_to=object``), which is what ``OpenAILlm`` does:
  the floor (``create`` walks the whole request to transform it and builds typed response
  objects, which costs more as the conversation grows);
- ``eventide``: a whole ``Runner.run_async`` turn of an ``LlmAgent`` on ``OpenAILlm``
  (session events appended and committed, request built, response parsed);
- ``eventide_prepared``: the same, with ``runner.prepare_models()`` (what ``eventide run``
  does in a background thread while the user types) waited for before the first turn;
- ``adk``: the same turn in google-adk 2.13 through its LiteLLM route (``LiteLlm``), run in
  /work/adk-venv (or ``$ADK_PYTHON``); LiteLLM's HTTP is timed through
  ``litellm.aclient_session``.

``--canned IDLE_MS`` runs the same stacks without a server (all but ``eventide_run``): each
request is answered in-process with a canned one-token completion after ``IDLE_MS`` ms of
waiting in the event loop. It separates the runtime's own cost from what the wait does to
it: on a virtual machine, code that runs right after a long idle wait runs on cold caches,
and ``--canned 90`` (the server's time per turn here) reproduces the real server's figures
(see benchmarks/PROFILE.md, last section), ``--canned 0`` gives the warm figures.

Reported per stack: the median overhead of turns 2..N+1 over all rounds, and the first turn's
overhead minus that median (the first-call cost: lazy imports and client set-up), median
over rounds.
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
from contextlib import AbstractContextManager, nullcontext
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT))

PROMPT = "Say hi."
INSTRUCTION = "Answer briefly."
MAX_TOKENS = 1
"""Each answer is one token: the server's time stays small, and every stack sets it."""

# The timed transport, shared by the workers (google-adk's runs in its own interpreter).
TIMED_TRANSPORT = r"""
import asyncio
import os
import time
import httpx

class CannedTransport(httpx.AsyncBaseTransport):
    '''No server: every request is answered in this process with the same one-token chat
    completion, after ``idle`` seconds of waiting in the event loop.'''

    def __init__(self, idle):
        self.idle = idle

    async def handle_async_request(self, request):
        await request.aread()
        if self.idle:
            await asyncio.sleep(self.idle)
        return httpx.Response(200, json={
            "id": "chatcmpl-canned", "object": "chat.completion", "created": 0,
            "model": "smollm2",
            "choices": [{"index": 0, "finish_reason": "length",
                         "message": {"role": "assistant", "content": "Hello"}}],
            "usage": {"prompt_tokens": 30, "completion_tokens": 1, "total_tokens": 31},
        })

class TimedTransport(httpx.AsyncBaseTransport):
    '''Adds the time of each whole HTTP exchange (body read) to ``spent``; keeps each
    request and response body to report what was sent.'''

    def __init__(self):
        idle_ms = os.environ.get("BENCH_CANNED_IDLE_MS")
        self.inner = (httpx.AsyncHTTPTransport() if idle_ms is None
                      else CannedTransport(float(idle_ms) / 1000))
        self.spent = 0.0
        self.exchanges = []

    async def handle_async_request(self, request):
        started = time.perf_counter()
        response = await self.inner.handle_async_request(request)
        body = await response.aread()
        self.spent += time.perf_counter() - started
        self.exchanges.append((request.content, body))
        return response

    async def aclose(self):
        await self.inner.aclose()

def describe(exchanges, turns):
    '''What the last request sent and how many requests a turn made.'''
    import json
    sent = json.loads(exchanges[-1][0])
    answers = [json.loads(body) for _, body in exchanges]
    return {
        "requests_per_turn": len(exchanges) / turns,
        "last_request": {
            "messages": len(sent["messages"]),
            "max_tokens": sent.get("max_tokens", sent.get("max_completion_tokens")),
            "temperature": sent.get("temperature"),
            "stream": sent.get("stream", False),
            "bytes": len(exchanges[-1][0]),
        },
        "completion_tokens_per_turn": sum(
            a.get("usage", {}).get("completion_tokens", 0) for a in answers) / turns,
    }
"""


async def _sdk_worker(url: str, turns: int, *, raw: bool) -> dict[str, Any]:
    started = time.perf_counter()
    import httpx
    import openai

    imported = time.perf_counter()
    scope: dict[str, Any] = {}
    exec(TIMED_TRANSPORT, scope)
    transport = scope["TimedTransport"]()
    client = openai.AsyncOpenAI(
        api_key="x",
        base_url=url,
        max_retries=0,
        http_client=httpx.AsyncClient(transport=transport),
    )
    messages: list[dict[str, Any]] = [{"role": "system", "content": INSTRUCTION}]
    rows: list[list[float]] = []
    set_up = time.perf_counter()
    for _ in range(turns + 1):
        started, transport.spent = time.perf_counter(), 0.0
        messages.append({"role": "user", "content": PROMPT})
        if raw:
            data: Any = await client.post(
                "/chat/completions",
                cast_to=object,
                body={
                    "model": "smollm2",
                    "messages": messages,
                    "max_tokens": MAX_TOKENS,
                    "temperature": 0,
                },
            )
            text = data["choices"][0]["message"]["content"]
        else:
            completion = await client.chat.completions.create(
                model="smollm2", messages=messages, max_tokens=MAX_TOKENS, temperature=0
            )
            text = completion.choices[0].message.content
        messages.append({"role": "assistant", "content": text})
        rows.append([time.perf_counter() - started - transport.spent, transport.spent])
    await client.close()
    return {
        "setup_ms": (set_up - imported) * 1000,
        "turns": rows,
        "sent": scope["describe"](transport.exchanges, turns + 1),
    }


async def _eventide_worker(url: str, turns: int, *, prepared: bool) -> dict[str, Any]:
    started = time.perf_counter()
    import httpx

    from eventide import LlmAgent, types
    from eventide.models import OpenAIProvider
    from eventide.models.openai_llm import OpenAILlm
    from eventide.runner import InMemoryRunner

    imported = time.perf_counter()
    scope: dict[str, Any] = {}
    exec(TIMED_TRANSPORT, scope)
    transport = scope["TimedTransport"]()

    class TimedProvider(OpenAIProvider):
        def _make_client(self) -> Any:
            import openai

            return openai.AsyncOpenAI(
                api_key="x",
                base_url=self.base_url,
                max_retries=0,
                http_client=httpx.AsyncClient(transport=transport),
            )

    model = OpenAILlm(model="smollm2", provider=TimedProvider.compatible(url))
    agent = LlmAgent(
        name="bench",
        model=model,
        instruction=INSTRUCTION,
        generate_content_config=types.GenerateContentConfig(
            temperature=0, max_output_tokens=MAX_TOKENS
        ),
    )
    runner = InMemoryRunner(agent, app_name="bench")
    session = await runner.session_service.create_session(app_name="bench", user_id="u")
    set_up = time.perf_counter()
    if prepared:
        runner.prepare_models().wait()
    prepared_at = time.perf_counter()
    rows: list[list[float]] = []
    for _ in range(turns + 1):
        started, transport.spent = time.perf_counter(), 0.0
        async for event in runner.run_async(user_id="u", session_id=session.id, new_message=PROMPT):
            assert not event.error_code, event.error_message
        rows.append([time.perf_counter() - started - transport.spent, transport.spent])
    await runner.close()
    await model.close()
    return {
        "setup_ms": (set_up - imported) * 1000,
        "prepare_ms": (prepared_at - set_up) * 1000,
        "turns": rows,
        "sent": scope["describe"](transport.exchanges, turns + 1),
    }


ADK_WORKER = r"""
import asyncio, json, sys, time
import httpx, litellm
from google.adk.agents import LlmAgent
from google.adk.models.lite_llm import LiteLlm
from google.adk.runners import InMemoryRunner
from google.genai import types

url, turns, max_tokens, prompt, instruction = (
    sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4], sys.argv[5])
scope = {}
exec(sys.stdin.read(), scope)
transport = scope["TimedTransport"]()
litellm.aclient_session = httpx.AsyncClient(transport=transport)

async def main():
    # max_tokens goes to LiteLlm itself: google-adk's LiteLLM route does not send
    # generate_content_config.max_output_tokens.
    agent = LlmAgent(name="bench", model=LiteLlm(model="openai/smollm2", api_base=url,
                     api_key="x", max_tokens=max_tokens, temperature=0), instruction=instruction)
    runner = InMemoryRunner(agent=agent, app_name="bench")
    session = await runner.session_service.create_session(app_name="bench", user_id="u")
    rows = []
    for _ in range(turns + 1):
        started, transport.spent = time.perf_counter(), 0.0
        async for event in runner.run_async(user_id="u", session_id=session.id,
                new_message=types.Content(role="user", parts=[types.Part(text=prompt)])):
            # google-adk marks an answer cut at max_tokens with this code; it is the
            # answer asked for here, not a failure.
            assert event.error_code in (None, "MAX_TOKENS"), event.error_message
        rows.append([time.perf_counter() - started - transport.spent, transport.spent])
    print(json.dumps({"turns": rows, "sent": scope["describe"](transport.exchanges, turns + 1)}))

asyncio.run(main())
"""


RUN_APP = """
import atexit
import os
import time

import httpx

from eventide import LlmAgent, types
from eventide.models import OpenAIProvider
from eventide.models.openai_llm import OpenAILlm

exchanges = []
atexit.register(
    lambda: open(os.environ["BENCH_HTTP_LOG"], "w").write("\\n".join(map(str, exchanges)))
)


class TimedTransport(httpx.AsyncHTTPTransport):
    async def handle_async_request(self, request):
        started = time.perf_counter()
        response = await super().handle_async_request(request)
        await response.aread()
        exchanges.append(time.perf_counter() - started)
        return response


class TimedProvider(OpenAIProvider):
    def _make_client(self):
        import openai

        return openai.AsyncOpenAI(
            api_key="x",
            base_url=self.base_url,
            max_retries=0,
            http_client=httpx.AsyncClient(transport=TimedTransport()),
        )


root_agent = LlmAgent(
    name="bench",
    model=OpenAILlm(model="smollm2", provider=TimedProvider.compatible(os.environ["BENCH_URL"])),
    instruction=os.environ["BENCH_INSTRUCTION"],
    generate_content_config=types.GenerateContentConfig(
        temperature=0, max_output_tokens=int(os.environ["BENCH_MAX_TOKENS"])
    ),
)
"""
"""The app ``eventide run`` serves; its HTTP exchanges are timed (written at exit) so that
the server's time can be taken out of each turn's wall time."""

THINK_SECONDS = float(os.environ.get("BENCH_THINK_SECONDS", "1.0"))
"""How long the person at ``eventide run`` takes to type a message."""


def _eventide_run_turns(url: str, turns: int) -> dict[str, Any] | str:
    """``eventide run APP`` as a person uses it: wait for the prompt, type for a second,
    send; each turn's wall time from the message sent to the next prompt (model call
    included)."""
    import selectors
    import tempfile

    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch) / "bench_app"
        folder.mkdir()
        (folder / "agent.py").write_text(RUN_APP, encoding="utf-8")
        env = {
            **os.environ,
            "BENCH_URL": url,
            "BENCH_INSTRUCTION": INSTRUCTION,
            "BENCH_MAX_TOKENS": str(MAX_TOKENS),
            "BENCH_HTTP_LOG": str(Path(scratch) / "http.log"),
            "PYTHONUNBUFFERED": "1",
            "NO_COLOR": "1",
        }
        eventide = Path(sys.executable).with_name("eventide")
        process = subprocess.Popen(
            [str(eventide), "run", str(folder), "--session-db", "memory:"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=env,
            cwd=scratch,
        )
        assert process.stdin is not None and process.stdout is not None
        selector = selectors.DefaultSelector()
        selector.register(process.stdout, selectors.EVENT_READ)
        seen = b""

        def wait_for_prompt() -> None:
            nonlocal seen
            deadline = time.monotonic() + 120
            while b"you \xe2\x80\xba " not in seen:
                if time.monotonic() > deadline or process.poll() is not None:
                    raise RuntimeError(f"no prompt from eventide run: {seen[-500:]!r}")
                if selector.select(timeout=1):
                    seen += os.read(process.stdout.fileno(), 65536)
            seen = b""

        walls: list[float] = []
        try:
            wait_for_prompt()
            for _ in range(turns + 1):
                time.sleep(THINK_SECONDS)
                started = time.perf_counter()
                process.stdin.write(f"{PROMPT}\n".encode())
                process.stdin.flush()
                wait_for_prompt()
                walls.append(time.perf_counter() - started)
            process.stdin.close()
            process.wait(timeout=60)
        except RuntimeError as exc:
            return str(exc)
        finally:
            if process.poll() is None:
                process.kill()
                process.wait()
        logged = (Path(scratch) / "http.log").read_text(encoding="utf-8").split()
        http = [float(seconds) for seconds in logged]
        if len(http) != len(walls):
            return f"eventide run made {len(http)} requests in {len(walls)} turns"
    return {"walls": walls, "http": http}


def _run_worker(stack: str, url: str, turns: int) -> dict[str, Any] | str:
    if stack == "eventide_run":
        return _eventide_run_turns(url, turns)
    if stack == "adk":
        python = os.environ.get("ADK_PYTHON", "/work/adk-venv/bin/python")
        if not Path(python).exists():
            return f"no google-adk interpreter at {python}"
        command = [python, "-c", ADK_WORKER, url, str(turns), str(MAX_TOKENS), PROMPT]
        command.append(INSTRUCTION)
        env = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    else:
        command = [sys.executable, __file__, "--worker", stack, url, str(turns)]
        env = dict(os.environ)
    done = subprocess.run(
        command,
        input=TIMED_TRANSPORT if stack == "adk" else None,
        capture_output=True,
        text=True,
        timeout=600,
        env=env,
    )
    if done.returncode != 0:
        return f"{stack} worker failed: {done.stderr[-800:]}"
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    if not any(spent for _, spent in result["turns"]):
        return f"{stack}: the HTTP exchange could not be timed"
    return result


def _run_summary(runs: list[dict[str, Any]]) -> dict[str, Any]:
    later = [wall for run in runs for wall in run["walls"][1:]]
    first_extra = [run["walls"][0] - statistics.median(run["walls"][1:]) for run in runs]
    # What eventide run adds: each turn's wall time (message sent to next prompt) minus its
    # HTTP exchange; the first turn's minus the later turns' median, per process.
    added = [[wall - http for wall, http in zip(r["walls"], r["http"], strict=True)] for r in runs]
    return {
        "turn_wall_median_ms": round(statistics.median(later) * 1000, 1),
        "first_turn_wall_extra_ms": round(statistics.median(first_extra) * 1000, 1),
        "median_ms": round(statistics.median(a for run in added for a in run[1:]) * 1000, 3),
        "first_turn_extra_ms": round(
            statistics.median(run[0] - statistics.median(run[1:]) for run in added) * 1000, 1
        ),
        "think_seconds": THINK_SECONDS,
    }


def _summary(runs: list[dict[str, Any]]) -> dict[str, Any]:
    later = [row[0] for run in runs for row in run["turns"][1:]]
    median = statistics.median(later)
    first_extra = [
        run["turns"][0][0] - statistics.median(r[0] for r in run["turns"][1:]) for run in runs
    ]
    # The server's share of a first turn (a new conversation's prompt to evaluate), which
    # eventide_run's wall times include.
    first_http = [
        run["turns"][0][1] - statistics.median(r[1] for r in run["turns"][1:]) for run in runs
    ]
    quartiles = statistics.quantiles(later, n=4)
    summary: dict[str, Any] = {
        "median_ms": round(median * 1000, 3),
        "p25_ms": round(quartiles[0] * 1000, 3),
        "p75_ms": round(quartiles[2] * 1000, 3),
        "http_median_ms": round(
            statistics.median(row[1] for run in runs for row in run["turns"][1:]) * 1000, 3
        ),
        "first_turn_extra_ms": round(statistics.median(first_extra) * 1000, 1),
        "first_http_extra_ms": round(statistics.median(first_http) * 1000, 1),
        "sent": runs[-1]["sent"],
    }
    if "prepare_ms" in runs[-1]:
        summary["prepare_ms"] = round(statistics.median(run["prepare_ms"] for run in runs), 1)
    return summary


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--turns", type=int, default=20)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--no-adk", action="store_true")
    parser.add_argument("--stacks", help="comma-separated stacks to run (default: all)")
    parser.add_argument(
        "--canned",
        type=float,
        metavar="IDLE_MS",
        help="no server: answer every request in-process after IDLE_MS ms of idle waiting",
    )
    parser.add_argument("--worker", nargs=3, metavar=("STACK", "URL", "TURNS"))
    args = parser.parse_args()
    if args.worker:
        stack, url, turns = args.worker[0], args.worker[1], int(args.worker[2])
        if stack in ("sdk", "sdk_post"):
            result = asyncio.run(_sdk_worker(url, turns, raw=stack == "sdk_post"))
        else:
            result = asyncio.run(
                _eventide_worker(url, turns, prepared=stack == "eventide_prepared")
            )
        print(json.dumps(result))
        return 0
    stacks = ["sdk", "sdk_post", "eventide", "eventide_prepared", "eventide_run"]
    stacks += [] if args.no_adk else ["adk"]
    if args.stacks:
        stacks = [stack for stack in stacks if stack in args.stacks.split(",")]
    runs: dict[str, list[dict[str, Any]]] = {stack: [] for stack in stacks}
    skipped: dict[str, str] = {}
    if args.canned is not None:
        # The workers read it (see TIMED_TRANSPORT); eventide run's app has no canned answer.
        os.environ["BENCH_CANNED_IDLE_MS"] = str(args.canned)
        if "eventide_run" in stacks:
            skipped["eventide_run"] = "not run with --canned"
        server: AbstractContextManager[str] = nullcontext("http://127.0.0.1:9/v1")
    else:
        from tests.models.llama_cpp_server import gguf_path, llama_server

        model = gguf_path()
        if model is None:
            print("The local-llm extra is not installed (make install).", file=sys.stderr)
            return 2
        server = llama_server(model)
    with server as url:
        for round_number in range(args.rounds):
            order = stacks if round_number % 2 == 0 else stacks[::-1]
            for stack in order:
                if stack in skipped:
                    continue
                result = _run_worker(stack, url, args.turns)
                if isinstance(result, str):
                    skipped[stack] = result
                else:
                    runs[stack].append(result)
    results: dict[str, Any] = {
        "turns": args.turns,
        "rounds": args.rounds,
        "max_tokens": MAX_TOKENS,
    }
    for stack in stacks:
        if stack in skipped:
            results[stack] = {"skipped": skipped[stack]}
        else:
            summarize = _run_summary if stack == "eventide_run" else _summary
            results[stack] = summarize(runs[stack])
    for floor in ("sdk", "sdk_post"):
        if "median_ms" in results.get("eventide", {}) and "median_ms" in results.get(floor, {}):
            results[f"eventide_minus_{floor}_ms"] = round(
                results["eventide"]["median_ms"] - results[floor]["median_ms"], 3
            )
    if "median_ms" in results.get("adk", {}) and "median_ms" in results.get("eventide", {}):
        results["adk_over_eventide"] = round(
            results["adk"]["median_ms"] / results["eventide"]["median_ms"], 1
        )
    if args.json:
        print(json.dumps(results))
    else:
        for name, row in results.items():
            print(f"{name:>22}: {row}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
