"""google-adk 2.x behaviours of issue 34 (phase 2): cancellation, the Task API and the
streaming contract. Written once against google-adk's names like ``scenarios.py``'s and
registered with them: they run on Eventide in ``test_scenarios.py`` and on google-adk with
``run_on_adk.py``, so each expectation is google-adk's own."""

from __future__ import annotations

import asyncio
import importlib
import inspect
from pathlib import Path
from typing import Any

import pydantic

from tests.adk_compat.frameworks import Framework, requests_of, scripted_model
from tests.adk_compat.scenarios import run_turn, scenario


def _summary(event: Any) -> tuple[Any, ...]:
    """(author, error_code, the kinds of its parts) of an event."""
    parts = event.content.parts if event.content and event.content.parts else []
    kinds = tuple(
        "call" if p.function_call else "response" if p.function_response else "text" for p in parts
    )
    return (event.author, event.error_code, kinds)


def _aborting_agent(fw: Framework, when: str, signal: asyncio.Event) -> Any:
    def lookup(city: str) -> dict[str, str]:
        """Looks a city up."""
        if when == "in_tool":
            signal.set()
        return {"city": city}

    def after_model(callback_context: Any, llm_response: Any) -> None:
        if when == "after_model" and llm_response.content and llm_response.content.parts:
            if llm_response.content.parts[0].function_call:
                signal.set()

    model = scripted_model(fw, [{"call": "lookup", "args": {"city": "Oslo"}}, "answer"])
    return fw.LlmAgent(name="helper", model=model, tools=[lookup], after_model_callback=after_model)


async def _run_aborting(fw: Framework, when: str) -> tuple[Any, list[Any], Any]:
    """One turn of an agent whose abort signal is set ``when``; the agent, the events
    yielded, and the session reloaded."""
    signal = asyncio.Event()
    agent = _aborting_agent(fw, when, signal)
    runner = fw.InMemoryRunner(agent=agent, app_name="app")
    session = await runner.session_service.create_session(app_name="app", user_id="u")
    message = fw.types.Content(role="user", parts=[fw.types.Part(text="go")])
    events = [
        e
        async for e in runner.run_async(
            user_id="u", session_id=session.id, new_message=message, abort_signal=signal
        )
    ]
    stored = await runner.session_service.get_session(
        app_name="app", user_id="u", session_id=session.id
    )
    return agent, events, stored


@scenario
async def abort_signal_in_a_tool_records_invocation_aborted(fw: Framework, tmp: Path) -> None:
    """Runner.run_async(abort_signal=...) set by a tool: the tool's response is committed,
    no further model call is made, and one content-less INVOCATION_ABORTED event by the root
    agent is committed and yielded."""
    agent, events, stored = await _run_aborting(fw, "in_tool")
    expected = [
        ("helper", None, ("call",)),
        ("helper", None, ("response",)),
        ("helper", "INVOCATION_ABORTED", ()),
    ]
    assert [_summary(e) for e in events] == expected, [_summary(e) for e in events]
    assert [_summary(e) for e in stored.events] == [("user", None, ("text",)), *expected]
    assert len(requests_of(agent.model)) == 1
    assert events[-1].error_message


@scenario
async def abort_before_a_tool_answers_its_pending_call(fw: Framework, tmp: Path) -> None:
    """An abort set after the model called a tool: the tool does not run; the pending call
    gets an error response authored by the calling agent, with INVOCATION_ABORTED."""
    agent, events, _ = await _run_aborting(fw, "after_model")
    assert [_summary(e) for e in events] == [
        ("helper", None, ("call",)),
        ("helper", "INVOCATION_ABORTED", ("response",)),
    ], [_summary(e) for e in events]
    call = events[0].content.parts[0].function_call
    response = events[1].content.parts[0].function_response
    assert (response.id, response.name) == (call.id, "lookup")
    assert set(response.response) == {"error"}
    assert events[1].content.role == "user"
    assert len(requests_of(agent.model)) == 1


def _decls(request: Any) -> list[str]:
    return sorted(d.name for t in request.config.tools or [] for d in t.function_declarations or [])


def _turns(request: Any) -> list[tuple[str, list[Any]]]:
    """A request's conversation: (role, [text or call name or response dict])."""
    return [
        (
            c.role,
            [
                p.text
                if p.text is not None
                else p.function_call.name
                if p.function_call
                else p.function_response.response
                for p in c.parts
            ],
        )
        for c in request.contents
    ]


def _calls_and_responses(events: list[Any]) -> list[tuple[str, str, Any]]:
    """(author, name, args or response) of every function call and response."""
    found = []
    for event in events:
        for part in event.content.parts if event.content and event.content.parts else []:
            if part.function_call:
                found.append((event.author, part.function_call.name, part.function_call.args))
            if part.function_response:
                found.append(
                    (event.author, part.function_response.name, part.function_response.response)
                )
    return found


@scenario
async def single_turn_sub_agent_is_offered_as_a_tool(fw: Framework, tmp: Path) -> None:
    """LlmAgent(mode="single_turn") under a chat agent: offered as a tool named after it
    (no transfer), it answers the model's request without the user, and its answer is the
    call's result."""
    sub_model = scripted_model(fw, ["sub answer"])
    sub = fw.LlmAgent(name="helper", description="helps", model=sub_model, mode="single_turn")
    root_model = scripted_model(
        fw, [{"call": "helper", "args": {"request": "do it"}}, "root final"]
    )
    root = fw.LlmAgent(name="root", model=root_model, sub_agents=[sub])
    runner = fw.InMemoryRunner(agent=root, app_name="app")
    events = await run_turn(fw, runner, "hello")
    assert [_decls(r) for r in requests_of(root_model)] == [["helper"], ["helper"]]
    assert _turns(requests_of(sub_model)[0]) == [("user", ["do it"])]
    assert _calls_and_responses(events) == [
        ("root", "helper", {"request": "do it"}),
        ("root", "helper", {"result": "sub answer"}),
    ]
    assert events[-1].content.parts[0].text == "root final"


@scenario
async def task_sub_agent_talks_with_the_user_then_finishes(fw: Framework, tmp: Path) -> None:
    """LlmAgent(mode="task") under a chat agent: the call delegates the task; the task
    agent sees only the request and the user's replies, its question ends the turn, the
    user's reply goes to it, and its finish_task output is the delegating call's result,
    after which the chat agent goes on."""
    sub_model = scripted_model(
        fw, ["what colour?", {"call": "finish_task", "args": {"result": "blue chosen"}}]
    )
    sub = fw.LlmAgent(name="picker", description="picks", model=sub_model, mode="task")
    root_model = scripted_model(
        fw, [{"call": "picker", "args": {"request": "pick a colour"}}, "root final"]
    )
    root = fw.LlmAgent(name="root", model=root_model, sub_agents=[sub])
    runner = fw.InMemoryRunner(agent=root, app_name="app")
    session = await runner.session_service.create_session(app_name="app", user_id="u")
    first = await run_turn(fw, runner, "hello", session_id=session.id)
    assert [e.content.parts[0].text for e in first if e.author == "picker"] == ["what colour?"]
    assert len(requests_of(root_model)) == 1
    second = await run_turn(fw, runner, "blue", session_id=session.id)
    assert _calls_and_responses(second) == [
        ("picker", "finish_task", {"result": "blue chosen"}),
        ("picker", "finish_task", {"result": "Task completed."}),
        ("user", "picker", {"result": "blue chosen"}),
    ]
    assert second[-1].author == "root" and second[-1].content.parts[0].text == "root final"
    sub_requests = requests_of(sub_model)
    assert [_turns(r) for r in sub_requests] == [
        [("user", ['{"request": "pick a colour"}'])],
        [
            ("user", ['{"request": "pick a colour"}']),
            ("model", ["what colour?"]),
            ("user", ["blue"]),
        ],
    ]
    assert "finish_task" in _decls(sub_requests[0])
    assert _turns(requests_of(root_model)[1]) == [
        ("user", ["hello"]),
        ("model", ["picker"]),
        ("user", [{"result": "blue chosen"}]),
    ]


@scenario
async def root_task_agent_ends_with_finish_task(fw: Framework, tmp: Path) -> None:
    """A root LlmAgent(mode="task") is offered finish_task; a call that does not match the
    output schema is answered with an error (the model retries); an accepted one ends the
    agent's turn with no further model call."""

    class Verdict(pydantic.BaseModel):
        score: int

    model = scripted_model(
        fw,
        [
            {"call": "finish_task", "args": {"score": "high"}},
            {"call": "finish_task", "args": {"score": 7}},
        ],
    )
    agent = fw.LlmAgent(name="judge", model=model, mode="task", output_schema=Verdict)
    runner = fw.InMemoryRunner(agent=agent, app_name="app")
    events = await run_turn(fw, runner, "judge this")
    found = _calls_and_responses(events)
    assert [(a, n) for a, n, _ in found] == [("judge", "finish_task")] * 4
    assert set(found[1][2]) == {"error"}
    assert found[3][2] == {"result": "Task completed."}
    assert len(requests_of(model)) == 2
    assert _decls(requests_of(model)[0]) == ["finish_task"]


class _Item(pydantic.BaseModel):
    id: int
    name: str


@scenario
async def output_schema_list_of_models(fw: Framework, tmp: Path) -> None:
    """LlmAgent(output_schema=list[Item]): the JSON list the model answers is checked and
    stored under output_key; with tools, set_model_response takes it as `items`."""
    model = scripted_model(fw, ['[{"id": 1, "name": "a"}, {"id": 2, "name": "b"}]'])
    agent = fw.LlmAgent(name="lister", model=model, output_schema=list[_Item], output_key="items")
    runner = fw.InMemoryRunner(agent=agent, app_name="app")
    session = await runner.session_service.create_session(app_name="app", user_id="u")
    await run_turn(fw, runner, "list", session_id=session.id)
    stored = await runner.session_service.get_session(
        app_name="app", user_id="u", session_id=session.id
    )
    assert stored.state["items"] == [{"id": 1, "name": "a"}, {"id": 2, "name": "b"}]

    tool = fw.SetModelResponseTool(list[_Item])
    declaration = tool._get_declaration()
    assert declaration.name == "set_model_response"
    assert list(inspect.signature(tool.func).parameters) == ["items"]
    assert tool.func() == "Response set successfully."
    context = fw.ToolContext(await _context(fw, agent))
    result = await tool.run_async(args={"items": [{"id": 3, "name": "c"}]}, tool_context=context)
    assert result == [{"id": 3, "name": "c"}]


async def _context(fw: Framework, agent: Any) -> Any:
    service = fw.InMemorySessionService()
    session = await service.create_session(app_name="app", user_id="u")
    return fw.InvocationContext(
        invocation_id="inv", agent=agent, session=session, session_service=service
    )


@scenario
async def plugin_manager_run_names(fw: Framework, tmp: Path) -> None:
    """PluginManager.run_<hook>: the first plugin's non-None result wins and stops the
    others; a plugin's exception is raised as a RuntimeError naming the plugin and the hook,
    the original chained."""
    calls: list[str] = []

    class Early(fw.BasePlugin):  # type: ignore[misc, name-defined]
        async def before_run_callback(self, *, invocation_context: Any) -> Any:
            calls.append(self.name)
            return fw.types.Content(role="model", parts=[fw.types.Part(text="early")])

    class Broken(fw.BasePlugin):  # type: ignore[misc, name-defined]
        async def before_run_callback(self, *, invocation_context: Any) -> Any:
            raise ValueError("plugin broke")

    manager = fw.PluginManager(plugins=[Early(name="first"), Early(name="second")])
    result = await manager.run_before_run_callback(invocation_context=object())
    assert result.parts[0].text == "early" and calls == ["first"]
    assert await manager.run_after_run_callback(invocation_context=object()) is None
    broken = fw.PluginManager(plugins=[Broken(name="broken")])
    try:
        await broken.run_before_run_callback(invocation_context=object())
    except RuntimeError as exc:
        assert "broken" in str(exc) and "before_run_callback" in str(exc)
        assert isinstance(exc.__cause__, ValueError)
    else:
        raise AssertionError("no RuntimeError")


@scenario
async def ensure_part_accepts_parts_and_part_dicts(fw: Framework, tmp: Path) -> None:
    """base_artifact_service.ensure_part: a Part as it is, a part's dict in camelCase or
    snake_case as a Part."""
    module = importlib.import_module(
        "eventide.artifacts.base_artifact_service"
        if fw.name == "eventide"
        else "google.adk.artifacts.base_artifact_service"
    )
    part = fw.types.Part(text="as is")
    assert module.ensure_part(part) is part
    camel = module.ensure_part({"inlineData": {"mimeType": "image/png", "data": "dGVzdA=="}})
    assert (camel.inline_data.mime_type, camel.inline_data.data) == ("image/png", b"test")
    snake = module.ensure_part({"inline_data": {"mime_type": "text/plain", "data": "aGk="}})
    assert snake.inline_data.data == b"hi"
    assert module.ensure_part({"text": "hello"}).text == "hello"


@scenario
async def static_instruction_takes_a_list(fw: Framework, tmp: Path) -> None:
    """LlmAgent(static_instruction=[...]) keeps the list (strings or parts) and sends every
    piece to the model."""
    pieces = [fw.types.Part(text="Answer in French."), fw.types.Part(text="Be brief.")]
    model = scripted_model(fw, ["Oui."])
    agent = fw.LlmAgent(name="brief", model=model, static_instruction=pieces)
    assert agent.static_instruction == pieces
    assert fw.LlmAgent(name="s", static_instruction=["a", "b"]).static_instruction == ["a", "b"]
    runner = fw.InMemoryRunner(agent=agent, app_name="app")
    await run_turn(fw, runner, "hello")
    sent = str(requests_of(model)[0].config.system_instruction)
    assert "Answer in French." in sent and "Be brief." in sent


@scenario
async def agent_tool_include_plugins(fw: Framework, tmp: Path) -> None:
    """AgentTool(include_plugins=False) runs the wrapped agent without the caller's plugins;
    by default they run on it too."""

    class Tracking(fw.BasePlugin):  # type: ignore[misc, name-defined]
        seen: list[str]

        async def before_model_callback(self, *, callback_context: Any, llm_request: Any) -> Any:
            self.seen.append(callback_context.agent_name)

    for include, expected in ((True, ["root", "inner", "root"]), (False, ["root", "root"])):
        plugin = Tracking(name="t")
        plugin.seen = []
        inner = fw.LlmAgent(name="inner", model=scripted_model(fw, ["inner answer"]))
        root_model = scripted_model(fw, [{"call": "inner", "args": {"request": "x"}}, "done"])
        tool = fw.AgentTool(agent=inner, include_plugins=include)
        root = fw.LlmAgent(name="root", model=root_model, tools=[tool])
        runner = fw.InMemoryRunner(agent=root, app_name="app", plugins=[plugin])
        await run_turn(fw, runner, "go")
        assert plugin.seen == expected, (include, plugin.seen)


@scenario
async def plugin_manager_close_failures(fw: Framework, tmp: Path) -> None:
    """PluginManager.close(): a plugin that fails to close, or outlasts close_timeout, is
    reported as a RuntimeError naming it and the error's class, after every plugin was
    closed."""
    closed: list[str] = []

    class Failing(fw.BasePlugin):  # type: ignore[misc, name-defined]
        async def close(self) -> None:
            raise ValueError("cannot close")

    class Slow(fw.BasePlugin):  # type: ignore[misc, name-defined]
        async def close(self) -> None:
            await asyncio.sleep(1)

    class Fine(fw.BasePlugin):  # type: ignore[misc, name-defined]
        async def close(self) -> None:
            closed.append(self.name)

    manager = fw.PluginManager(
        plugins=[Failing(name="failing"), Slow(name="slow"), Fine(name="fine")],
        close_timeout=0.05,
    )
    try:
        await manager.close()
    except RuntimeError as exc:
        message = str(exc)
    else:
        raise AssertionError("no RuntimeError")
    assert message.startswith("Failed to close plugins: ")
    assert "'failing': ValueError" in message and "'slow': TimeoutError" in message
    assert closed == ["fine"]
