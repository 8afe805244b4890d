"""Human input and crashes (issue 31, step 3): a workflow paused by ``RequestInput`` goes on
from the user's answer in another process (a new Runner over the same SQLite file), and a
workflow killed (SIGKILL) in the middle of a node is resumed by ``Runner.resume_async``.
Finished nodes are replayed from the committed log (their outputs, not their side
effects); only the node in flight runs again."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from eventide import Event, InMemoryRunner, types
from eventide.workflow import RequestInput, Workflow, node
from tests.workflow.helpers import answer, outputs

REPO = Path(__file__).resolve().parents[2]
WHOLE_RUN = ["prep", "left", "right", "ask", "after"]


def _turn(tmp_path: Path, turn: str, *, resumable: bool, kill_at: str = "") -> dict[str, Any]:
    env = {
        **os.environ,
        "SIDE_EFFECTS": str(tmp_path / "effects"),
        "KILL_AT": kill_at,
        "PYTHONPATH": os.pathsep.join([str(REPO / "src"), str(REPO)]),
    }
    done = subprocess.run(
        [sys.executable, "-m", "tests.workflow.resume_app", str(tmp_path / "s.db"), turn]
        + ["1" if resumable else "0"],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
        cwd=REPO,
    )
    if kill_at:
        assert done.returncode == -9, done.stderr
        return {}
    assert done.returncode == 0, done.stderr
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def _effects(tmp_path: Path) -> list[str]:
    return (tmp_path / "effects").read_text().split()


@pytest.mark.parametrize("resumable", [False, True], ids=["plain", "resumable"])
def test_the_answer_continues_the_run_in_another_process(tmp_path: Path, resumable: bool) -> None:
    first = _turn(tmp_path, "start", resumable=resumable)
    assert first["outputs"][-1] == ["wf@1/join@1", {"left": "L", "right": "R"}]
    assert _effects(tmp_path) == ["prep", "left", "right", "ask"]
    second = _turn(tmp_path, "answer", resumable=resumable)
    assert second == {"outputs": [["wf@1/after@1", {"final": "yes"}]], "state": {"answer": "yes"}}
    # Nothing that had finished ran again.
    assert _effects(tmp_path) == WHOLE_RUN


@pytest.mark.parametrize("kill_at", ["prep", "right", "ask", "after"])
def test_a_killed_run_resumes_running_only_the_node_in_flight(tmp_path: Path, kill_at: str) -> None:
    if kill_at == "after":  # it runs once the user has answered
        _turn(tmp_path, "start", resumable=True)
        _turn(tmp_path, "answer", resumable=True, kill_at=kill_at)
        final = _turn(tmp_path, "resume", resumable=True)
    else:
        _turn(tmp_path, "start", resumable=True, kill_at=kill_at)
        _turn(tmp_path, "resume", resumable=True)
        final = _turn(tmp_path, "answer", resumable=True)
    assert final == {"outputs": [["wf@1/after@1", {"final": "yes"}]], "state": {"answer": "yes"}}
    effects = _effects(tmp_path)
    # Each node's side effect happened once, except the one killed in flight (twice) and a
    # fan-out sibling whose output was not committed yet when the process died.
    repeated = {name for name in set(effects) if effects.count(name) > 1}
    assert kill_at in repeated
    assert repeated <= {kill_at, "left", "right"}
    assert set(effects) == set(WHOLE_RUN)


async def test_a_rerun_node_gets_the_answers_in_resume_inputs() -> None:
    """rerun_on_resume=True: the asking node runs again and reads the answer from
    ``ctx.resume_inputs``; its output is whatever it makes of it."""

    @node(rerun_on_resume=True)
    async def ask_twice(ctx: Any) -> Any:
        if "q1" not in ctx.resume_inputs:
            yield RequestInput(interrupt_id="q1", message="first?")
            return
        yield f"got {ctx.resume_inputs['q1']}"

    workflow = Workflow(name="wf", edges=[("START", ask_twice)])
    runner = InMemoryRunner(workflow, app_name="app")
    session = await runner.session_service.create_session(app_name="app", user_id="u")
    first = [
        e async for e in runner.run_async(user_id="u", session_id=session.id, new_message="go")
    ]
    assert [c.id for e in first for c in e.get_function_calls()] == ["q1"]
    second: list[Event] = [
        e
        async for e in runner.run_async(
            user_id="u", session_id=session.id, new_message=answer("q1", "blue")
        )
    ]
    assert outputs(second) == [("wf@1/ask_twice@1", "got blue")]


async def test_a_new_message_instead_of_an_answer_starts_afresh() -> None:
    async def ask(node_input: Any) -> Any:
        yield RequestInput(interrupt_id="q", message="?")

    workflow = Workflow(name="wf", edges=[("START", ask)])
    runner = InMemoryRunner(workflow, app_name="app")
    session = await runner.session_service.create_session(app_name="app", user_id="u")
    for _ in range(2):
        events = [
            e
            async for e in runner.run_async(
                user_id="u",
                session_id=session.id,
                new_message=types.Content(role="user", parts=[types.Part(text="hi")]),
            )
        ]
        assert [c.name for e in events for c in e.get_function_calls()] == ["adk_request_input"]


async def test_a_tool_confirmation_inside_an_agent_node_pauses_the_workflow() -> None:
    """An LlmAgent node whose tool asks for confirmation pauses the workflow; the user's
    confirmation continues it: the tool runs, the agent answers, the next node runs."""
    from eventide import LlmAgent, ToolContext
    from eventide.testing import ScriptedModel, tool_call_response

    def delete_file(path: str, tool_context: ToolContext) -> str:
        """Delete a file."""
        if not tool_context.tool_confirmation:
            tool_context.request_confirmation(hint="Delete it?")
            return "waiting"
        return f"deleted {path}" if tool_context.tool_confirmation.confirmed else "kept"

    model = ScriptedModel(
        responses=[tool_call_response(("delete_file", {"path": "a.txt"})), "All done."]
    )
    janitor = LlmAgent(name="janitor", model=model, tools=[delete_file])
    after_calls: list[str] = []

    def after(node_input: str) -> str:
        after_calls.append(node_input)
        return f"after: {node_input}"

    workflow = Workflow(name="wf", edges=[("START", janitor, after)])
    runner = InMemoryRunner(workflow, app_name="app")
    session = await runner.session_service.create_session(app_name="app", user_id="u")
    first = [
        e async for e in runner.run_async(user_id="u", session_id=session.id, new_message="go")
    ]
    (request,) = [c for e in first if e.long_running_tool_ids for c in e.get_function_calls()]
    assert after_calls == []
    confirm = types.FunctionResponse(id=request.id, name=request.name, response={"confirmed": True})
    second = [
        e
        async for e in runner.run_async(
            user_id="u",
            session_id=session.id,
            new_message=types.Content(role="user", parts=[types.Part(function_response=confirm)]),
        )
    ]
    tool_results = [r.response for e in second for r in e.get_function_responses()]
    assert tool_results == [{"result": "deleted a.txt"}]
    assert outputs(second) == [
        ("wf@1/janitor@1", "All done."),
        ("wf@1/after@1", "after: All done."),
    ]
    assert after_calls == ["All done."]


async def test_a_dynamic_child_waiting_for_the_user_pauses_its_parent() -> None:
    """A child run with ``ctx.run_node`` asks the user: the parent stops with it; on the
    answer the parent runs again, the children that had finished are replayed (their side
    effects not repeated) and the asking child's output is the answer."""
    effects: list[str] = []

    def fetch(node_input: Any) -> str:
        effects.append("fetch")
        return "data"

    async def ask(node_input: Any) -> Any:
        effects.append("ask")
        yield RequestInput(interrupt_id="pick", message=f"Which part of {node_input}?")

    @node(rerun_on_resume=True)
    async def parent(ctx: Any) -> Any:
        data = await ctx.run_node(fetch)
        choice = await ctx.run_node(ask, data)
        return f"{data}:{choice}"

    workflow = Workflow(name="wf", edges=[("START", parent)])
    runner = InMemoryRunner(workflow, app_name="app")
    session = await runner.session_service.create_session(app_name="app", user_id="u")
    first = [
        e async for e in runner.run_async(user_id="u", session_id=session.id, new_message="go")
    ]
    assert [c.id for e in first for c in e.get_function_calls()] == ["pick"]
    second = [
        e
        async for e in runner.run_async(
            user_id="u", session_id=session.id, new_message=answer("pick", "tail")
        )
    ]
    assert outputs(second) == [("wf@1/parent@1", "data:tail")]
    assert effects == ["fetch", "ask"]


async def test_a_credential_request_inside_an_agent_node_pauses_the_workflow() -> None:
    """A tool in an LlmAgent node asks for the user's API key: the workflow pauses; the
    client's answer (the credential, stored by the credential service and kept out of the
    log) continues it: the tool runs with the key and the next node runs."""
    from eventide import LlmAgent, ToolContext
    from eventide.auth import ApiKeyScheme, AuthConfig
    from eventide.testing import ScriptedModel, tool_call_response

    key_config = AuthConfig(auth_scheme=ApiKeyScheme(name="X-Key"))
    keys: list[str] = []

    async def get_weather(city: str, tool_context: ToolContext) -> dict[str, Any]:
        """The weather in a city."""
        credential = await tool_context.get_auth_response(key_config)
        if credential is None:
            tool_context.request_credential(key_config)
            return {"pending": "waiting for the key"}
        assert credential.api_key is not None
        keys.append(credential.api_key)
        return {"city": city, "temp_c": 18}

    model = ScriptedModel(
        responses=[tool_call_response(("get_weather", {"city": "Paris"})), "18 in Paris."]
    )
    forecaster = LlmAgent(name="forecaster", model=model, tools=[get_weather])

    def report(node_input: str) -> str:
        return f"report: {node_input}"

    workflow = Workflow(name="wf", edges=[("START", forecaster, report)])
    runner = InMemoryRunner(workflow, app_name="app")
    session = await runner.session_service.create_session(app_name="app", user_id="u")
    first = [
        e async for e in runner.run_async(user_id="u", session_id=session.id, new_message="go")
    ]
    (request,) = [c for e in first if e.long_running_tool_ids for c in e.get_function_calls()]
    assert outputs(first) == []
    config = dict((request.args or {})["auth_config"])
    config["exchanged_auth_credential"] = {"auth_type": "api_key", "api_key": "k-123"}
    reply = types.FunctionResponse(id=request.id, name=request.name, response=config)
    second = [
        e
        async for e in runner.run_async(
            user_id="u",
            session_id=session.id,
            new_message=types.Content(role="user", parts=[types.Part(function_response=reply)]),
        )
    ]
    assert keys == ["k-123"]
    assert outputs(second) == [
        ("wf@1/forecaster@1", "18 in Paris."),
        ("wf@1/report@1", "report: 18 in Paris."),
    ]


async def test_a_paused_workflow_ends_its_invocation_and_the_answer_continues_it() -> None:
    """A resumable app: a workflow that pauses for the user ends its invocation (``ended``,
    so a ``SequentialAgent`` around it stops there too), and the answer is committed in that
    invocation and continues it (the agents' resume model; google-adk 2.13 also keeps the
    answer in the paused invocation): the workflow's last node, then the next step, run."""
    from collections.abc import AsyncGenerator

    from eventide import (
        App,
        BaseAgent,
        InvocationContext,
        ResumabilityConfig,
        Runner,
        SequentialAgent,
    )
    from eventide.runtime.markers import ANSWERED, ENDED, FINISHED, invocation_mark

    class Closer(BaseAgent):
        async def _run_async_impl(self, ctx: InvocationContext) -> AsyncGenerator[Event, None]:
            yield Event(author=self.name, content=types.Content(parts=[types.Part(text="closed")]))

    async def ask(node_input: Any) -> Any:
        yield RequestInput(interrupt_id="q", message="?")

    def after(node_input: Any) -> dict[str, Any]:
        return {"got": node_input}

    workflow = Workflow(name="wf", edges=[("START", ask, after)])
    root = SequentialAgent(name="seq", sub_agents=[workflow, Closer(name="closer")])
    app = App(
        name="app", root_agent=root, resumability_config=ResumabilityConfig(is_resumable=True)
    )
    runner = Runner(app=app, session_service=InMemoryRunner(root).session_service)
    session = await runner.session_service.create_session(app_name="app", user_id="u")
    first = [
        e async for e in runner.run_async(user_id="u", session_id=session.id, new_message="go")
    ]
    assert not [e for e in first if e.text == "closed"]
    assert [invocation_mark(e) for e in first if invocation_mark(e)] == [ENDED]
    second = [
        e
        async for e in runner.run_async(
            user_id="u", session_id=session.id, new_message=answer("q", "yes")
        )
    ]
    assert {e.invocation_id for e in second} == {first[0].invocation_id}
    assert outputs(second) == [("wf@1/after@1", {"got": "yes"})]
    assert [e.text for e in second if e.text] == ["closed"]
    stored = await runner.session_service.get_session(
        app_name="app", user_id="u", session_id=session.id
    )
    assert stored is not None
    assert {e.invocation_id for e in stored.events} == {first[0].invocation_id}
    marks = [invocation_mark(e) for e in stored.events if invocation_mark(e)]
    assert marks == ["started", ENDED, ANSWERED, FINISHED]


async def test_a_run_stopped_after_its_output_was_committed_is_not_run_again() -> None:
    """A resumable invocation stopped after the workflow's output (its terminal node's) was
    committed and before the invocation's ``finished`` marker: resuming it runs no node
    again (before, the log read as a finished run and the workflow started a new one from
    the same message) and commits the marker."""
    from eventide import App, ResumabilityConfig, Runner
    from eventide.runtime.markers import FINISHED, invocation_mark

    runs: list[str] = []

    def first(node_input: Any) -> str:
        runs.append("first")
        return "one"

    def last(node_input: Any) -> str:
        runs.append("last")
        return f"{node_input} two"

    workflow = Workflow(name="wf", edges=[("START", first, last)])
    app = App(
        name="app", root_agent=workflow, resumability_config=ResumabilityConfig(is_resumable=True)
    )
    runner = Runner(app=app, session_service=InMemoryRunner(workflow).session_service)
    session = await runner.session_service.create_session(app_name="app", user_id="u")
    events = runner.run_async(user_id="u", session_id=session.id, new_message="go")
    async for event in events:
        if event.node_info.output_for and "wf@1" in event.node_info.output_for:
            break  # the process stops right after the workflow's output was committed
    await events.aclose()
    assert runs == ["first", "last"]
    resumed = [e async for e in runner.resume_async(user_id="u", session_id=session.id)]
    assert runs == ["first", "last"]
    assert [invocation_mark(e) for e in resumed] == [FINISHED]
    stored = await runner.session_service.get_session(
        app_name="app", user_id="u", session_id=session.id
    )
    assert stored is not None
    assert [e.output for e in stored.events if e.output is not None] == ["one", "one two"]
