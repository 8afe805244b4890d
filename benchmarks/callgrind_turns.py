"""Instructions per turn, under callgrind: repeatable on a loaded machine where wall time is not.

Runs ``N`` turns of scenario 2 (plain) or 3 (async tool), each in a fresh in-memory session,
after warm-up turns. Run it twice under ``valgrind --tool=callgrind`` with two values of ``N``
and divide the difference of the totals by the difference of ``N``: start-up and warm-up cancel
out, leaving the instructions one turn costs::

    .venv/bin/python -m benchmarks.callgrind_turns --scenario 2 --measure 50,250

``--measure`` runs both valgrind passes and prints the per-turn figure; ``--turns N`` runs the
turns once, without valgrind (what each pass runs).

``--scenario history`` is issue 18's long-session check (``bench_history.py``) in
instructions: one in-memory runner with compaction builds a session of ``--events`` stored
events and a small one (10 events), then runs the measured turns in one of them
(``--session big|small``); per-turn figures come from passes with 0 and ``N`` turns.

``--scenario state`` is scenario 5 in instructions per committed event: a custom agent
committing 1,000 one-key ``state_delta`` events per turn, each turn in a fresh session, on
``--backend memory`` or ``sqlite`` (a file in a temporary folder, as the scenario has it);
per-event figures come from passes with 1 and 3 measured turns after two 50-event warm-up
turns (``--measure 1,3``). Callgrind counts user-space instructions only: the SQLite
figure leaves out the kernel's share of its writes and file checks.

``--scenario openai`` is issue 15's per-call overhead without a server: an ``LlmAgent`` on
``OpenAILlm`` (a fresh session per turn) and, as the floor, the openai SDK's ``post`` with the
same body (what ``bench_local_llm.py`` calls ``sdk_post``), both over an ``httpx`` transport
that answers a canned chat completion; Eventide's overhead is the difference per call.
``--conversation T`` holds ``T`` turns in each session (the SDK's loop keeps the messages, as
``bench_local_llm.py``'s does), so the history grows to ``2T`` contents; the figures are per
call, averaged over the conversation's turns (``--measure`` counts conversations)::

    .venv/bin/python -m benchmarks.callgrind_turns --scenario openai --conversation 20 --measure 2,6

``--scenario workflow`` is ``bench_workflow.py``'s Eventide side in instructions per node:
``--workflow chain100|fan1000|pipeline3`` runs that workload (``workflow_worker.py``'s very
workflow, a fresh session per run); ``--measure`` counts runs after two warm-up runs (default
5,25)::

    .venv/bin/python -m benchmarks.callgrind_turns --scenario workflow --workflow chain100

``--scenario agents`` is the workflow agents' own cost in instructions per turn: ``--shape
sequential`` is a ``SequentialAgent`` of three custom agents (each commits one text event),
``--shape loop`` a ``LoopAgent`` of the same three run for three rounds, ``--shape parallel``
a ``ParallelAgent`` of the same three, a fresh in-memory session per turn; ``--resumable``
runs them in a resumable app (step markers, end markers)::

    .venv/bin/python -m benchmarks.callgrind_turns --scenario agents --shape sequential

``--scenario resume`` is ``bench_workflow.py``'s resume1000 in instructions: a 1,000-node
chain whose last node fails once (standing in for the crash), then ``Runner.resume_async``.
The passes run ``--measure`` (default 1,3) crashed runs, each resumed (``--resume``) or not;
the figure is the difference per run: the resume alone::

    .venv/bin/python -m benchmarks.callgrind_turns --scenario resume
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import subprocess
import sys
import tempfile
from typing import Any

from benchmarks.fake_model import get_weather_async
from benchmarks.frameworks import load_api
from benchmarks.scenarios import (
    APP,
    STATE_EVENTS,
    USER,
    _llm_agent,
    _message,
    _runner,
    _timed_turn,
)

WARMUP = 20
SHAPE_ROUNDS = 3
HISTORY_EVENTS = 5000


async def _turns(scenario: int, n: int) -> None:
    api = load_api("eventide")
    svc = api.InMemorySessionService()
    if scenario == 2:
        agent = _llm_agent(api, "bench-text")
        expected = 1
    else:
        agent = _llm_agent(api, "bench-tool", tools=[get_weather_async])
        expected = 3
    runner = _runner(api, agent, svc)
    for _ in range(WARMUP + n):
        session = await svc.create_session(app_name=APP, user_id=USER)
        message = _message(api, "What is the weather in Paris?")
        _, count = await _timed_turn(runner, session.id, message)
        if count != expected:
            raise RuntimeError(f"scenario {scenario}: {count} events, expected {expected}")


async def _state_turns(n: int, backend: str) -> None:
    from benchmarks.scenarios import WARMUP_STATE_EVENTS, _counter_agent, _sql_service

    api = load_api("eventide")

    async def turns(svc: Any) -> None:
        for events, count in ((WARMUP_STATE_EVENTS, 2), (STATE_EVENTS, n)):
            runner = _runner(api, _counter_agent(api, events), svc)
            for _ in range(count):
                session = await svc.create_session(app_name=APP, user_id=USER)
                _, got = await _timed_turn(runner, session.id, _message(api, "count"))
                if got != events:
                    raise RuntimeError(f"state: {got} events, expected {events}")

    if backend == "memory":
        await turns(api.InMemorySessionService())
        return
    async with _sql_service(api, backend) as (svc, reason):
        if svc is None:
            raise RuntimeError(reason)
        await turns(svc)


async def _history_turns(n: int, events: int, which: str) -> None:
    from benchmarks.bench_history import _reply, _summary, _turn
    from eventide import App, LlmAgent, Runner
    from eventide.history.compaction import EventsCompactionConfig, LlmEventSummarizer
    from eventide.sessions.in_memory_session_service import InMemorySessionService
    from eventide.testing import FunctionModel

    service = InMemorySessionService()
    config = EventsCompactionConfig(
        compaction_interval=10,
        overlap_size=2,
        summarizer=LlmEventSummarizer(llm=FunctionModel(function=_summary)),
    )
    app = App(
        name="history",
        root_agent=LlmAgent(name="notes", model=FunctionModel(function=_reply)),
        events_compaction_config=config,
    )
    runner = Runner(app=app, session_service=service)
    for sid in ("small", "big"):
        await service.create_session(app_name="history", user_id="u", session_id=sid)
    for i in range(5):
        await _turn(runner, "small", f"note {i}")
    stored = 0
    while stored < events:
        await _turn(runner, "big", f"note {stored}")
        session = await service.get_session(app_name="history", user_id="u", session_id="big")
        assert session is not None
        stored = len(session.events)
    for i in range(WARMUP):
        await _turn(runner, which, f"warm {i}")
    for i in range(n):
        await _turn(runner, which, f"round {i}")
    await runner.close()


_COMPLETION = {
    "id": "chatcmpl-1",
    "object": "chat.completion",
    "created": 1,
    "model": "smollm2",
    "choices": [
        {
            "index": 0,
            "message": {"role": "assistant", "content": "Hi! How can I help you today?"},
            "finish_reason": "stop",
        }
    ],
    "usage": {"prompt_tokens": 30, "completion_tokens": 9, "total_tokens": 39},
}


async def _openai_turns(n: int, stack: str, conversation: int = 1) -> None:
    import httpx
    import openai

    def answer(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, json=_COMPLETION)

    def client() -> openai.AsyncOpenAI:
        transport = httpx.MockTransport(answer)
        return openai.AsyncOpenAI(
            api_key="x",
            base_url="http://127.0.0.1:9/v1",
            max_retries=0,
            http_client=httpx.AsyncClient(transport=transport),
        )

    instruction = "You are a friendly assistant. Answer in one short sentence."
    if stack == "sdk_post":
        sdk = client()
        for _ in range(WARMUP + n):
            messages: list[dict[str, Any]] = [{"role": "system", "content": instruction}]
            for _ in range(conversation):
                messages.append({"role": "user", "content": "Say hi."})
                body = {
                    "model": "smollm2",
                    "messages": messages,
                    "max_tokens": 16,
                    "temperature": 0,
                }
                data: Any = await sdk.post("/chat/completions", cast_to=object, body=body)
                text = data["choices"][0]["message"]["content"]
                if not text:
                    raise RuntimeError("no answer")
                messages.append({"role": "assistant", "content": text})
        await sdk.close()
        return
    from eventide import LlmAgent, types
    from eventide.models import OpenAIProvider
    from eventide.models.openai_llm import OpenAILlm
    from eventide.runner import InMemoryRunner

    class MockProvider(OpenAIProvider):
        def _make_client(self) -> Any:
            return client()

    model = OpenAILlm(model="smollm2", provider=MockProvider.compatible("http://127.0.0.1:9/v1"))
    agent = LlmAgent(
        name="bench",
        model=model,
        instruction=instruction,
        generate_content_config=types.GenerateContentConfig(temperature=0, max_output_tokens=16),
    )
    runner = InMemoryRunner(agent, app_name="bench")
    for _ in range(WARMUP + n):
        session = await runner.session_service.create_session(app_name="bench", user_id="u")
        for _ in range(conversation):
            async for event in runner.run_async(
                user_id="u", session_id=session.id, new_message="Say hi."
            ):
                if event.error_code:
                    raise RuntimeError(event.error_message)
    await runner.close()
    await model.close()


async def _workflow_runs(n: int, workload: str) -> None:
    from benchmarks.workflow_worker import adk_like

    run = adk_like("eventide", workload)
    for _ in range(2 + n):  # two warm-up runs: imports, first-call caches
        await run()


def _shape_agent(shape: str) -> Any:
    """The ``--scenario agents`` workload: three custom agents in a sequence, a loop or a
    fan-out."""
    from collections.abc import AsyncGenerator

    from eventide import (
        BaseAgent,
        Event,
        InvocationContext,
        LoopAgent,
        ParallelAgent,
        SequentialAgent,
        types,
    )

    class Say(BaseAgent):
        """Commits one text event: its name."""

        async def _run_async_impl(self, ctx: InvocationContext) -> AsyncGenerator[Event, None]:
            text = types.Part(text=self.name)
            yield Event(author=self.name, content=types.Content(role="model", parts=[text]))

    steps: list[BaseAgent] = [Say(name=f"say_{n}") for n in range(3)]
    if shape == "loop":
        return LoopAgent(name="rounds", sub_agents=steps, max_iterations=SHAPE_ROUNDS)
    if shape == "parallel":
        return ParallelAgent(name="fan", sub_agents=steps)
    return SequentialAgent(name="steps", sub_agents=steps)


async def _shape_turns(n: int, shape: str, resumable: bool) -> None:
    from eventide import App, InMemorySessionService, ResumabilityConfig, Runner, types

    config = ResumabilityConfig(is_resumable=True) if resumable else None
    app = App(name=APP, root_agent=_shape_agent(shape), resumability_config=config)
    runner = Runner(app=app, session_service=InMemorySessionService())
    expected = 3 * (SHAPE_ROUNDS if shape == "loop" else 1)
    message = types.Content(role="user", parts=[types.Part(text="go")])
    for _ in range(WARMUP + n):
        session = await runner.session_service.create_session(app_name=APP, user_id=USER)
        texts = 0
        async for event in runner.run_async(
            user_id=USER, session_id=session.id, new_message=message
        ):
            texts += event.content is not None
        if texts != expected:
            raise RuntimeError(f"agents, {shape}: {texts} texts, expected {expected}")


async def _resume_runs(n: int, resume: bool) -> None:
    """``n`` crashed runs of a 1,000-node chain (after one crashed and resumed warm-up run),
    each resumed when ``resume``."""
    from benchmarks.workflow_worker import _start, _steps
    from eventide import App, InMemorySessionService, ResumabilityConfig, Runner, types
    from eventide.workflow import Workflow

    class Crash(Exception):
        """Stands in for the process dying while the last node runs."""

    crashed: set[str] = set()
    current = [""]

    def last(node_input: int) -> int:
        if current[0] not in crashed:
            crashed.add(current[0])
            raise Crash
        return node_input + 1

    workflow = Workflow(name="long", edges=[("START", _start, *_steps(998), last)])
    config = ResumabilityConfig(is_resumable=True)
    app = App(name=APP, root_agent=workflow, resumability_config=config)
    runner = Runner(app=app, session_service=InMemorySessionService())
    message = types.Content(role="user", parts=[types.Part(text="go")])
    for run in range(1 + n):
        session = await runner.session_service.create_session(app_name=APP, user_id=USER)
        current[0] = session.id
        invocation_id = None
        try:
            async for event in runner.run_async(
                user_id=USER, session_id=session.id, new_message=message
            ):
                invocation_id = event.invocation_id
        except Crash:
            pass
        if not resume and run > 0:
            continue
        output = None
        async for event in runner.resume_async(
            user_id=USER, session_id=session.id, invocation_id=invocation_id
        ):
            output = event.output if event.output is not None else output
        if output != 999:
            raise RuntimeError(f"resume: the resumed chain ended with {output!r}, expected 999")


def _instructions(scenario: str, n: int, extra: list[str] | None = None) -> int:
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "callgrind.out")
        subprocess.run(
            [
                "valgrind",
                "--tool=callgrind",
                f"--callgrind-out-file={out}",
                sys.executable,
                "-m",
                "benchmarks.callgrind_turns",
                "--scenario",
                str(scenario),
                "--turns",
                str(n),
                *(extra or []),
            ],
            check=True,
            capture_output=True,
        )
        with open(out) as f:
            match = re.search(r"^summary: (\d+)", f.read(), re.MULTILINE)
        if match is None:
            raise RuntimeError("no summary line in callgrind's output")
        return int(match.group(1))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--scenario",
        choices=("2", "3", "agents", "history", "openai", "resume", "state", "workflow"),
        default="2",
    )
    parser.add_argument(
        "--workflow", choices=("chain100", "fan1000", "pipeline3"), default="chain100"
    )
    parser.add_argument("--shape", choices=("sequential", "loop", "parallel"), default="sequential")
    parser.add_argument("--resumable", action="store_true", help="agents: a resumable app")
    parser.add_argument("--resume", action="store_true", help="resume: resume each crash")
    parser.add_argument("--backend", choices=("memory", "sqlite"), default="sqlite", help="state")
    parser.add_argument("--stack", choices=("eventide", "sdk_post"), default="eventide")
    parser.add_argument("--events", type=int, default=HISTORY_EVENTS, help="history: big size")
    parser.add_argument("--session", choices=("big", "small"), default="big", help="history")
    parser.add_argument(
        "--conversation", type=int, default=1, help="openai: turns per session (default 1)"
    )
    parser.add_argument("--turns", type=int, help="run N turns (no valgrind)")
    parser.add_argument(
        "--measure", help="N1,N2: instructions per turn (default 50,250; 1,3 for state)"
    )
    args = parser.parse_args()
    if args.turns is not None:
        if args.scenario == "history":
            asyncio.run(_history_turns(args.turns, args.events, args.session))
        elif args.scenario == "openai":
            asyncio.run(_openai_turns(args.turns, args.stack, args.conversation))
        elif args.scenario == "state":
            asyncio.run(_state_turns(args.turns, args.backend))
        elif args.scenario == "workflow":
            asyncio.run(_workflow_runs(args.turns, args.workflow))
        elif args.scenario == "agents":
            asyncio.run(_shape_turns(args.turns, args.shape, args.resumable))
        elif args.scenario == "resume":
            asyncio.run(_resume_runs(args.turns, args.resume))
        else:
            asyncio.run(_turns(int(args.scenario), args.turns))
        return
    default = {"state": "1,3", "workflow": "5,25", "resume": "1,3"}.get(args.scenario, "50,250")
    n1, n2 = (int(x) for x in (args.measure or default).split(","))
    if args.scenario == "workflow":
        from benchmarks.workflow_worker import NODES

        extra = ["--workflow", args.workflow]
        low, high = _instructions("workflow", n1, extra), _instructions("workflow", n2, extra)
        per_node = (high - low) / ((n2 - n1) * NODES[args.workflow])
        print(f"workflow {args.workflow}: {per_node / 1000:,.1f}k instructions per node")
        return
    if args.scenario == "resume":
        crashes = [_instructions("resume", n, []) for n in (n1, n2)]
        resumed = [_instructions("resume", n, ["--resume"]) for n in (n1, n2)]
        per_run = ((resumed[1] - crashes[1]) - (resumed[0] - crashes[0])) / (n2 - n1)
        print(f"resume of a crashed 1,000-node chain: {per_run / 1e6:,.1f}M instructions")
        return
    if args.scenario == "agents":
        extra = ["--shape", args.shape] + ["--resumable"] * args.resumable
        low, high = _instructions("agents", n1, extra), _instructions("agents", n2, extra)
        per_turn = (high - low) / (n2 - n1)
        kind = "resumable " if args.resumable else ""
        print(f"agents, {kind}{args.shape}: {per_turn / 1000:,.0f}k instructions per turn")
        return
    if args.scenario == "state":
        extra = ["--backend", args.backend]
        low, high = _instructions("state", n1, extra), _instructions("state", n2, extra)
        per_event = (high - low) / ((n2 - n1) * STATE_EVENTS)
        print(f"state, {args.backend}: {per_event / 1000:,.1f}k instructions per committed event")
        return
    if args.scenario == "openai":
        per_call: dict[str, float] = {}
        turns = args.conversation
        for stack in ("sdk_post", "eventide"):
            extra = ["--stack", stack, "--conversation", str(turns)]
            low = _instructions("openai", n1, extra)
            high = _instructions("openai", n2, extra)
            per_call[stack] = (high - low) / ((n2 - n1) * turns)
            print(f"openai, {stack}: {per_call[stack] / 1000:,.0f}k instructions per call")
        overhead = per_call["eventide"] - per_call["sdk_post"]
        print(f"openai: Eventide's overhead {overhead / 1000:,.0f}k instructions per call")
        return
    if args.scenario != "history":
        low, high = _instructions(args.scenario, n1), _instructions(args.scenario, n2)
        per_turn = (high - low) / (n2 - n1)
        print(f"scenario {args.scenario}: {per_turn / 1000:,.0f}k instructions per turn")
        return
    figures: dict[str, float] = {}
    for which in ("small", "big"):
        extra = ["--events", str(args.events), "--session", which]
        low = _instructions("history", n1, extra)
        high = _instructions("history", n2, extra)
        figures[which] = (high - low) / (n2 - n1)
        print(f"history, {which} session: {figures[which] / 1000:,.0f}k instructions per turn")
    print(f"history: big / small = {figures['big'] / figures['small']:.3f}")


if __name__ == "__main__":
    main()
