"""google-adk behaviours, each written once against google-adk's public names.

Every scenario runs on Eventide in ``test_scenarios.py`` and on google-adk itself with
``run_on_adk.py`` (opt-in, in a virtualenv with google-adk), so each expectation here is
checked to be google-adk's own behaviour. A scenario's docstring names the behaviour.
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import logging
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from tests.adk_compat.frameworks import Framework, requests_of, scripted_model

Scenario = Callable[[Framework, Path], Awaitable[None]]
SCENARIOS: list[Scenario] = []


def scenario(fn: Scenario) -> Scenario:
    SCENARIOS.append(fn)
    return fn


async def run_turn(fw: Framework, runner: Any, text: str, **kwargs: Any) -> list[Any]:
    """Send ``text`` in a new session (or ``session_id=``) and collect the events."""
    session_id = kwargs.pop("session_id", None)
    if session_id is None:
        session = await runner.session_service.create_session(app_name=runner.app_name, user_id="u")
        session_id = session.id
    message = fw.types.Content(role="user", parts=[fw.types.Part(text=text)])
    return [
        event
        async for event in runner.run_async(
            user_id="u", session_id=session_id, new_message=message, **kwargs
        )
    ]


def tool_fields(request: Any, field: str) -> list[Any]:
    return [
        getattr(t, field) for t in request.config.tools or [] if getattr(t, field, None) is not None
    ]


@scenario
async def google_search_switches_on_the_builtin_tool(fw: Framework, tmp: Path) -> None:
    """google_search / GoogleSearchTool(): the request carries Tool(google_search=...) and
    no function declaration; the tool is named 'google_search'."""
    model = scripted_model(fw, ["ok"])
    assert fw.google_search.name == "google_search"
    assert isinstance(fw.google_search, fw.GoogleSearchTool)
    agent = fw.LlmAgent(name="searcher", model=model, tools=[fw.google_search])
    await run_turn(fw, fw.InMemoryRunner(agent=agent, app_name="app"), "news?")
    [request] = requests_of(model)
    assert len(tool_fields(request, "google_search")) == 1
    assert not tool_fields(request, "function_declarations")


@scenario
async def url_context_switches_on_the_builtin_tool(fw: Framework, tmp: Path) -> None:
    """url_context: the request carries Tool(url_context=...)."""
    model = scripted_model(fw, ["ok"])
    agent = fw.LlmAgent(name="reader", model=model, tools=[fw.url_context])
    await run_turn(fw, fw.InMemoryRunner(agent=agent, app_name="app"), "read https://x.invalid")
    [request] = requests_of(model)
    assert len(tool_fields(request, "url_context")) == 1


@scenario
async def builtin_code_executor_switches_on_code_execution(fw: Framework, tmp: Path) -> None:
    """LlmAgent(code_executor=BuiltInCodeExecutor()): the request carries
    Tool(code_execution=...)."""
    model = scripted_model(fw, ["ok"])
    agent = fw.LlmAgent(name="coder", model=model, code_executor=fw.BuiltInCodeExecutor())
    await run_turn(fw, fw.InMemoryRunner(agent=agent, app_name="app"), "6*7?")
    [request] = requests_of(model)
    assert len(tool_fields(request, "code_execution")) == 1


@scenario
async def builtin_planner_sets_the_thinking_budget(fw: Framework, tmp: Path) -> None:
    """LlmAgent(planner=BuiltInPlanner(thinking_config=ThinkingConfig(...))): every request
    carries the thinking budget."""
    model = scripted_model(fw, ["ok"])
    planner = fw.BuiltInPlanner(
        thinking_config=fw.types.ThinkingConfig(thinking_budget=256, include_thoughts=True)
    )
    agent = fw.LlmAgent(name="thinker", model=model, planner=planner)
    await run_turn(fw, fw.InMemoryRunner(agent=agent, app_name="app"), "hmm")
    [request] = requests_of(model)
    assert fw.thinking_budget(request) == 256


@scenario
async def plan_react_planner_hides_the_plan(fw: Framework, tmp: Path) -> None:
    """PlanReActPlanner: the instruction asks for /*PLANNING*/ ... /*FINAL_ANSWER*/; in the
    answer, the plan becomes a thought part and the final answer the visible text."""
    model = scripted_model(fw, ["/*PLANNING*/\n1. add\n/*FINAL_ANSWER*/\nThe answer is 42."])
    agent = fw.LlmAgent(name="planner", model=model, planner=fw.PlanReActPlanner())
    events = await run_turn(fw, fw.InMemoryRunner(agent=agent, app_name="app"), "6*7?")
    [request] = requests_of(model)
    assert "/*PLANNING*/" in str(request.config.system_instruction)
    parts = events[-1].content.parts
    assert [p.thought for p in parts] == [True, None]
    assert "1. add" in parts[0].text and "PLANNING" not in parts[0].text
    assert parts[1].text.strip() == "The answer is 42."


@scenario
async def grounding_metadata_is_typed(fw: Framework, tmp: Path) -> None:
    """LlmResponse.grounding_metadata reaches Event.grounding_metadata as a typed object:
    .web_search_queries, .grounding_chunks[i].web.uri."""
    types = fw.types
    grounded = fw.LlmResponse(
        content=types.Content(role="model", parts=[types.Part(text="Sunny.")]),
        grounding_metadata=types.GroundingMetadata(
            web_search_queries=["weather paris"],
            grounding_chunks=[
                types.GroundingChunk(
                    web=types.GroundingChunkWeb(uri="https://w.invalid", title="W")
                )
            ],
        ),
    )
    agent = fw.LlmAgent(name="a", model=scripted_model(fw, [grounded]))
    events = await run_turn(fw, fw.InMemoryRunner(agent=agent, app_name="app"), "weather?")
    metadata = events[-1].grounding_metadata
    assert metadata.web_search_queries == ["weather paris"]
    assert metadata.grounding_chunks[0].web.uri == "https://w.invalid"
    assert metadata.grounding_chunks[0].web.title == "W"


@scenario
async def runner_run_inside_a_running_loop(fw: Framework, tmp: Path) -> None:
    """Runner.run() called inside a running event loop (a notebook, an async test) runs
    the invocation (on a worker thread) and returns its events."""
    agent = fw.LlmAgent(name="a", model=scripted_model(fw, ["hello"]))
    runner = fw.InMemoryRunner(agent=agent, app_name="app")
    session = await runner.session_service.create_session(app_name="app", user_id="u")
    message = fw.types.Content(role="user", parts=[fw.types.Part(text="hi")])
    events = list(runner.run(user_id="u", session_id=session.id, new_message=message))
    assert [(e.author, e.content.parts[0].text) for e in events] == [("a", "hello")]
    await runner.close()


@scenario
async def run_debug_prints_and_returns_the_events(fw: Framework, tmp: Path) -> None:
    """Runner.run_debug(messages): one session 'debug_session_id' of user 'debug_user_id'
    (created when missing), prints 'author > text' per answer, returns the agents' events
    (not the user's); quiet=True prints nothing."""
    agent = fw.LlmAgent(name="helper", model=scripted_model(fw, ["first", "second", "third"]))
    runner = fw.InMemoryRunner(agent=agent, app_name="app")
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        events = await runner.run_debug(["hi", "again"])
    assert [e.author for e in events] == ["helper", "helper"]
    assert "helper > first" in out.getvalue() and "helper > second" in out.getvalue()
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        more = await runner.run_debug("once more", quiet=True)
    assert out.getvalue() == "" and [e.content.parts[0].text for e in more] == ["third"]
    session = await runner.session_service.get_session(
        app_name="app", user_id="debug_user_id", session_id="debug_session_id"
    )
    assert [e.author for e in session.events] == ["user", "helper"] * 3


@scenario
async def invocation_context_built_by_hand(fw: Framework, tmp: Path) -> None:
    """InvocationContext(invocation_id=, agent=, session=, session_service=) built by hand
    (as ADK-style unit tests of custom agents do) runs an agent: the rest defaults."""
    types = fw.types

    class Echo(fw.BaseAgent):  # type: ignore[misc, name-defined]
        async def _run_async_impl(self, ctx: Any) -> Any:
            text = ctx.user_content.parts[0].text if ctx.user_content else "nothing"
            yield fw.Event(
                author=self.name,
                invocation_id=ctx.invocation_id,
                content=types.Content(role="model", parts=[types.Part(text=f"echo {text}")]),
            )

    agent = Echo(name="echo")
    service = fw.InMemorySessionService()
    session = await service.create_session(app_name="app", user_id="u")
    ctx = fw.InvocationContext(
        invocation_id="inv-1",
        agent=agent,
        session=session,
        session_service=service,
        user_content=types.Content(role="user", parts=[types.Part(text="ping")]),
    )
    events = [event async for event in agent.run_async(ctx)]
    assert [e.content.parts[0].text for e in events if e.content] == ["echo ping"]


@scenario
async def file_artifact_service_root_dir(fw: Framework, tmp: Path) -> None:
    """FileArtifactService(root_dir=...) stores versions under that folder."""
    service = fw.FileArtifactService(root_dir=tmp / "artifacts")
    part = fw.types.Part(text="v1")
    version = await service.save_artifact(
        app_name="app", user_id="u", session_id="s", filename="notes.txt", artifact=part
    )
    assert version == 0
    loaded = await service.load_artifact(
        app_name="app", user_id="u", session_id="s", filename="notes.txt"
    )
    assert loaded is not None and loaded.text == "v1"
    assert any((tmp / "artifacts").rglob("*"))


@scenario
async def toolset_tool_name_prefix(fw: Framework, tmp: Path) -> None:
    """BaseToolset(tool_name_prefix='math'): get_tools() keeps the tools' names,
    get_tools_with_prefix() names them 'math_<name>', the model sees and calls those."""

    def add(a: int, b: int) -> int:
        """Add two numbers."""
        return a + b

    class Maths(fw.BaseToolset):  # type: ignore[misc, name-defined]
        async def get_tools(self, readonly_context: Any = None) -> list[Any]:
            return [fw.FunctionTool(add)]

    toolset = Maths(tool_name_prefix="math")
    assert [t.name for t in await toolset.get_tools()] == ["add"]
    assert [t.name for t in await toolset.get_tools_with_prefix()] == ["math_add"]
    model = scripted_model(fw, [{"call": "math_add", "args": {"a": 2, "b": 3}}, "5"])
    agent = fw.LlmAgent(name="calc", model=model, tools=[toolset])
    events = await run_turn(fw, fw.InMemoryRunner(agent=agent, app_name="app"), "2+3")
    [declaration] = requests_of(model)[0].config.tools[0].function_declarations
    assert declaration.name == "math_add"
    responses = [
        p.function_response for e in events for p in e.content.parts if p.function_response
    ]
    assert [(r.name, r.response) for r in responses] == [("math_add", {"result": 5})]


@scenario
async def plugin_manager_register_plugin_and_runner_close(fw: Framework, tmp: Path) -> None:
    """PluginManager.register_plugin adds a plugin whose hooks then run; Runner.close()
    closes the runner's plugins."""
    seen: list[str] = []

    class Counting(fw.BasePlugin):  # type: ignore[misc, name-defined]
        async def before_model_callback(self, *, callback_context: Any, llm_request: Any) -> None:
            seen.append("before_model")

        async def close(self) -> None:
            seen.append("closed")

    manager = fw.PluginManager()
    manager.register_plugin(Counting(name="counting"))
    assert manager.get_plugin("counting") is not None
    agent = fw.LlmAgent(name="a", model=scripted_model(fw, ["hi"]))
    runner = fw.Runner(
        app_name="app",
        agent=agent,
        session_service=fw.InMemorySessionService(),
        plugins=[Counting(name="counting")],
    )
    await run_turn(fw, runner, "x")
    assert seen == ["before_model"]
    await runner.close()
    assert seen == ["before_model", "closed"]


@scenario
async def base_agent_clone(fw: Framework, tmp: Path) -> None:
    """BaseAgent.clone(update=...): a copy with the changes, sub-agents cloned too (the
    copies' parent is the clone), no parent; parent_agent and unknown fields refused."""
    sub = fw.LlmAgent(name="sub", model="gemini-2.5-flash", instruction="be brief")
    root = fw.SequentialAgent(name="root", sub_agents=[sub])
    copy = root.clone()
    assert copy is not root and copy.name == "root"
    assert copy.sub_agents[0] is not sub and copy.sub_agents[0].parent_agent is copy
    assert sub.parent_agent is root
    renamed = sub.clone(update={"name": "sub2", "instruction": "be long"})
    assert (renamed.name, renamed.instruction, renamed.parent_agent) == ("sub2", "be long", None)
    for bad in ({"parent_agent": root}, {"no_such_field": 1}):
        try:
            root.clone(update=bad)
        except ValueError:
            continue
        raise AssertionError(f"clone(update={bad}) was accepted")


@scenario
async def llm_agent_default_model_and_static_instruction(fw: Framework, tmp: Path) -> None:
    """LlmAgent.DEFAULT_MODEL names a Gemini model; LlmAgent(static_instruction=...) is the
    system instruction, verbatim (no {placeholders} filled); the dynamic instruction then
    goes into the conversation, before the user's latest message."""
    assert fw.LlmAgent.DEFAULT_MODEL.startswith("gemini-")
    model = scripted_model(fw, ["first", "second"])
    agent = fw.LlmAgent(
        name="a",
        model=model,
        static_instruction="Rules: keep {braces}.",
        instruction="Greet {who?} warmly.",
    )
    runner = fw.InMemoryRunner(agent=agent, app_name="app")
    session = await runner.session_service.create_session(
        app_name="app", user_id="u", state={"who": "Ada"}
    )
    await run_turn(fw, runner, "x", session_id=session.id)
    await run_turn(fw, runner, "y", session_id=session.id)
    for request in requests_of(model):
        system = str(request.config.system_instruction)
        assert system.startswith("Rules: keep {braces}.") and "Greet" not in system
    # With a static instruction, the (filled) dynamic instruction travels in the
    # conversation, right before the user's latest message.
    contents = requests_of(model)[1].contents
    assert [c.role for c in contents] == ["user", "model", "user", "user"]
    assert contents[0].parts[0].text == "x" and contents[-1].parts[0].text == "y"
    assert "Greet Ada warmly." in contents[-2].parts[0].text


@scenario
async def context_memory_helpers_and_user_id(fw: Framework, tmp: Path) -> None:
    """ToolContext.add_session_to_memory() and search_memory(); ReadonlyContext.user_id in
    an instruction provider."""
    found: list[str] = []

    async def remember(tool_context: Any) -> dict[str, Any]:
        """Remember this conversation."""
        await tool_context.add_session_to_memory()
        result = await tool_context.search_memory("locker")
        found.extend(m.content.parts[0].text for m in result.memories if m.content.parts)
        return {"ok": True}

    def instruction(ctx: Any) -> str:
        return f"The user is {ctx.user_id}."

    model = scripted_model(fw, [{"call": "remember"}, "stored"])
    agent = fw.LlmAgent(name="a", model=model, tools=[remember], instruction=instruction)
    runner = fw.Runner(
        app_name="app",
        agent=agent,
        session_service=fw.InMemorySessionService(),
        memory_service=fw.InMemoryMemoryService(),
    )
    await run_turn(fw, runner, "my locker code is 4412")
    assert found == ["my locker code is 4412"]
    assert "The user is u." in str(requests_of(model)[0].config.system_instruction)


@scenario
async def run_config_custom_metadata_reaches_events(fw: Framework, tmp: Path) -> None:
    """RunConfig(custom_metadata=...) is added to every event of the invocation (the user's
    too), merged with the model's own custom_metadata."""
    types = fw.types
    reply = fw.LlmResponse(
        content=types.Content(role="model", parts=[types.Part(text="hi")]),
        custom_metadata={"from_model": 1},
    )
    runner = fw.InMemoryRunner(
        agent=fw.LlmAgent(name="a", model=scripted_model(fw, [reply])), app_name="app"
    )
    session = await runner.session_service.create_session(app_name="app", user_id="u")
    config = fw.RunConfig(custom_metadata={"trace": "t-1"})
    events = await run_turn(fw, runner, "x", session_id=session.id, run_config=config)
    assert [e.custom_metadata for e in events] == [{"trace": "t-1", "from_model": 1}]
    stored = await runner.session_service.get_session(
        app_name="app", user_id="u", session_id=session.id
    )
    assert [e.custom_metadata for e in stored.events] == [
        {"trace": "t-1"},
        {"trace": "t-1", "from_model": 1},
    ]


@scenario
async def app_resumability_config_is_accepted(fw: Framework, tmp: Path) -> None:
    """App(resumability_config=ResumabilityConfig(is_resumable=True)) builds, and the Runner
    made from the app exposes the setting."""
    agent = fw.LlmAgent(name="a", model=scripted_model(fw, ["ok"]))
    app = fw.App(
        name="resumable_app",
        root_agent=agent,
        resumability_config=fw.ResumabilityConfig(is_resumable=True),
    )
    runner = fw.Runner(app=app, session_service=fw.InMemorySessionService())
    assert runner.resumability_config is not None and runner.resumability_config.is_resumable
    await run_turn(fw, runner, "x")


def function_responses(events: list[Any]) -> list[tuple[str, Any]]:
    return [
        (p.function_response.name, p.function_response.response)
        for e in events
        if e.content
        for p in e.content.parts or []
        if p.function_response
    ]


@scenario
async def non_dict_tool_callback_results_are_wrapped(fw: Framework, tmp: Path) -> None:
    """A before_tool_callback / after_tool_callback / on_tool_error_callback returning a
    non-dict value (a string) is wrapped as {"result": value} and becomes the tool's
    response (customer-service's guard returns a string)."""

    def guarded(item: str) -> dict[str, Any]:
        """Guarded tool."""
        return {"item": item}

    def failing(item: str) -> dict[str, Any]:
        """Failing tool."""
        raise RuntimeError("boom")

    def plain(item: str) -> dict[str, Any]:
        """Plain tool."""
        return {"item": item}

    def before(tool: Any, args: dict[str, Any], tool_context: Any) -> Any:
        return "blocked by policy" if tool.name == "guarded" else None

    def after(tool: Any, args: dict[str, Any], tool_context: Any, tool_response: Any) -> Any:
        return 42 if tool.name == "plain" else None

    def on_error(tool: Any, args: dict[str, Any], tool_context: Any, error: Exception) -> Any:
        return f"recovered from {error}"

    model = scripted_model(
        fw,
        [
            [
                {"call": "guarded", "args": {"item": "a"}},
                {"call": "failing", "args": {"item": "b"}},
                {"call": "plain", "args": {"item": "c"}},
            ],
            "done",
        ],
    )
    agent = fw.LlmAgent(
        name="a",
        model=model,
        tools=[guarded, failing, plain],
        before_tool_callback=before,
        after_tool_callback=after,
        on_tool_error_callback=on_error,
    )
    events = await run_turn(fw, fw.InMemoryRunner(agent=agent, app_name="app"), "go")
    assert function_responses(events) == [
        ("guarded", {"result": "blocked by policy"}),
        ("failing", {"result": "recovered from boom"}),
        ("plain", {"result": 42}),
    ]
    assert events[-1].content.parts[0].text == "done"


@scenario
async def escalate_in_a_loop_lets_the_agent_finish_its_turn(fw: Framework, tmp: Path) -> None:
    """A tool that sets escalate inside a LoopAgent: the agent still gets its final answer
    from the model (and output_key is written), then the loop ends (no more iterations,
    later sub-agents of the loop do not run)."""

    def approve(tool_context: Any) -> dict[str, Any]:
        """Approve and stop the loop."""
        tool_context.actions.escalate = True
        return {"approved": True}

    model = scripted_model(fw, [{"call": "approve"}, "Final verdict: approved."])
    critic = fw.LlmAgent(name="critic", model=model, tools=[approve], output_key="verdict")
    after = fw.LlmAgent(name="after", model=scripted_model(fw, ["should not run"]))
    loop = fw.LoopAgent(name="loop", sub_agents=[critic, after], max_iterations=3)
    runner = fw.InMemoryRunner(agent=loop, app_name="app")
    session = await runner.session_service.create_session(app_name="app", user_id="u")
    events = await run_turn(fw, runner, "review", session_id=session.id)
    texts = [
        (e.author, e.content.parts[0].text) for e in events if e.content and e.content.parts[0].text
    ]
    assert texts == [("critic", "Final verdict: approved.")]
    stored = await runner.session_service.get_session(
        app_name="app", user_id="u", session_id=session.id
    )
    assert stored.state["verdict"] == "Final verdict: approved."
    assert len(requests_of(model)) == 2


@scenario
async def long_running_tool_initial_result_goes_to_the_model(fw: Framework, tmp: Path) -> None:
    """LongRunningFunctionTool: its initial result ({"status": "pending"}) is sent to the
    model, which answers in the same turn; the call event is a final response with the call
    in long_running_tool_ids; a later user message carrying the real result continues."""

    def ask_approval(amount: int) -> dict[str, Any]:
        """Ask a manager to approve a refund."""
        return {"status": "pending", "ticket": "t-1"}

    model = scripted_model(
        fw,
        [
            {"call": "ask_approval", "args": {"amount": 50}},
            "Your refund is waiting for approval.",
            "Your refund was approved.",
        ],
    )
    agent = fw.LlmAgent(
        name="refunds", model=model, tools=[fw.LongRunningFunctionTool(func=ask_approval)]
    )
    runner = fw.InMemoryRunner(agent=agent, app_name="app")
    session = await runner.session_service.create_session(app_name="app", user_id="u")
    events = await run_turn(fw, runner, "refund 50", session_id=session.id)
    call_event = events[0]
    [call] = [p.function_call for p in call_event.content.parts if p.function_call]
    assert call_event.long_running_tool_ids == {call.id}
    assert call_event.is_final_response()
    assert function_responses(events) == [("ask_approval", {"status": "pending", "ticket": "t-1"})]
    assert events[-1].content.parts[0].text == "Your refund is waiting for approval."
    sent = requests_of(model)[1].contents[-1].parts[0].function_response
    assert sent.response == {"status": "pending", "ticket": "t-1"}
    assert len(requests_of(model)) == 2

    types = fw.types
    answer = types.Content(
        role="user",
        parts=[
            types.Part(
                function_response=types.FunctionResponse(
                    id=call.id, name="ask_approval", response={"status": "approved"}
                )
            )
        ],
    )
    later = [
        e async for e in runner.run_async(user_id="u", session_id=session.id, new_message=answer)
    ]
    assert later[-1].content.parts[0].text == "Your refund was approved."
    # The model sees the call answered by the real result (the pending one is replaced).
    history = requests_of(model)[2].contents
    answers = [
        p.function_response.response for c in history for p in c.parts if p.function_response
    ]
    assert answers == [{"status": "approved"}]
    call_at = next(i for i, c in enumerate(history) if c.parts[0].function_call)
    assert history[call_at + 1].parts[0].function_response.response == {"status": "approved"}


@scenario
async def custom_tool_get_declaration_is_declared(fw: Framework, tmp: Path) -> None:
    """A BaseTool subclass that overrides _get_declaration() is declared to the model and
    called with the model's arguments."""
    types = fw.types

    class Lookup(fw.BaseTool):  # type: ignore[misc, name-defined]
        def __init__(self) -> None:
            super().__init__(name="lookup", description="Look a word up.")

        def _get_declaration(self) -> Any:
            return types.FunctionDeclaration(
                name=self.name,
                description=self.description,
                parameters=types.Schema(
                    type="OBJECT", properties={"word": types.Schema(type="STRING")}
                ),
            )

        async def run_async(self, *, args: dict[str, Any], tool_context: Any) -> Any:
            return {"meaning": f"meaning of {args['word']}"}

    model = scripted_model(fw, [{"call": "lookup", "args": {"word": "tide"}}, "ok"])
    agent = fw.LlmAgent(name="a", model=model, tools=[Lookup()])
    events = await run_turn(fw, fw.InMemoryRunner(agent=agent, app_name="app"), "tide?")
    declarations = [
        d.name
        for t in requests_of(model)[0].config.tools or []
        for d in t.function_declarations or []
    ]
    assert declarations == ["lookup"]
    assert function_responses(events) == [("lookup", {"meaning": "meaning of tide"})]


@scenario
async def tool_context_found_by_annotation(fw: Framework, tmp: Path) -> None:
    """A function tool's ToolContext parameter is recognised by its annotation whatever its
    name (ctx: ToolContext), and is not declared to the model."""
    seen: list[bool] = []

    def remember(fact: str, ctx: Any) -> dict[str, Any]:
        """Remember a fact."""
        ctx.state["fact"] = fact
        seen.append(isinstance(ctx, fw.ToolContext))
        return {"ok": True}

    # As if written `ctx: ToolContext` in a module that imports the framework's ToolContext.
    remember.__annotations__.update(fact=str, ctx=fw.ToolContext, **{"return": dict})

    model = scripted_model(fw, [{"call": "remember", "args": {"fact": "sky is blue"}}, "ok"])
    agent = fw.LlmAgent(name="a", model=model, tools=[remember])
    runner = fw.InMemoryRunner(agent=agent, app_name="app")
    session = await runner.session_service.create_session(app_name="app", user_id="u")
    await run_turn(fw, runner, "remember", session_id=session.id)
    [declaration] = requests_of(model)[0].config.tools[0].function_declarations
    schema = declaration.parameters_json_schema or declaration.parameters.model_dump(
        exclude_none=True
    )
    assert set(schema["properties"]) == {"fact"}
    assert seen == [True]
    stored = await runner.session_service.get_session(
        app_name="app", user_id="u", session_id=session.id
    )
    assert stored.state["fact"] == "sky is blue"


@scenario
async def invented_arguments_are_dropped(fw: Framework, tmp: Path) -> None:
    """Arguments the model invents that the function lacks are dropped (with a warning),
    and the tool runs with the rest."""

    def weather(city: str) -> dict[str, Any]:
        """Weather of a city."""
        return {"city": city, "temp": 21}

    model = scripted_model(fw, [{"call": "weather", "args": {"city": "Oslo", "units": "C"}}, "ok"])
    agent = fw.LlmAgent(name="a", model=model, tools=[weather])
    events = await run_turn(fw, fw.InMemoryRunner(agent=agent, app_name="app"), "weather")
    assert function_responses(events) == [("weather", {"city": "Oslo", "temp": 21})]


@contextlib.contextmanager
def captured_warnings() -> Iterator[list[str]]:
    """The messages of WARNING log records emitted inside the block, from any logger."""
    messages: list[str] = []

    class Keep(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            messages.append(record.getMessage())

    root = logging.getLogger()
    handler = Keep(level=logging.WARNING)
    old_level = root.level
    root.addHandler(handler)
    root.setLevel(logging.WARNING)
    try:
        yield messages
    finally:
        root.removeHandler(handler)
        root.setLevel(old_level)


@scenario
async def duplicate_agent_names_warn(fw: Framework, tmp: Path) -> None:
    """Two agents of one tree with the same name (siblings, or at different depths) are
    accepted with a logged warning naming the duplicate; the first in a depth-first walk is
    the one find_agent() returns, and the tree runs."""
    first = fw.LlmAgent(name="worker", model=scripted_model(fw, ["first worker"]))
    second = fw.LlmAgent(name="worker", model=scripted_model(fw, ["second worker"]))
    with captured_warnings() as messages:
        root = fw.SequentialAgent(name="root", sub_agents=[first, second])
    assert any("worker" in m and ("duplicate" in m.lower() or "several" in m) for m in messages)
    assert root.find_agent("worker") is first
    events = await run_turn(fw, fw.InMemoryRunner(agent=root, app_name="app"), "go")
    assert [e.content.parts[0].text for e in events] == ["first worker", "second worker"]
    with captured_warnings() as messages:
        fw.SequentialAgent(
            name="top",
            sub_agents=[
                fw.SequentialAgent(
                    name="mid", sub_agents=[fw.LlmAgent(name="top", model="gemini-2.5-flash")]
                )
            ],
        )
    assert any("top" in m for m in messages)


@scenario
async def app_and_agent_name_rules(fw: Framework, tmp: Path) -> None:
    """App names start with a letter and hold letters, digits, '_' and '-' ('my-app' is
    fine); 'user', '1app' and 'my app' are refused with a ValueError. Agent names must be
    identifiers and not 'user'. Runner(app=..., app_name=...) uses the given app_name."""
    agent = fw.LlmAgent(name="a", model=scripted_model(fw, ["ok"]))
    assert fw.App(name="my-app", root_agent=agent).name == "my-app"
    for bad in ("user", "1app", "my app"):
        try:
            fw.App(name=bad, root_agent=agent)
        except ValueError:
            continue
        raise AssertionError(f"App(name={bad!r}) was accepted")
    for bad in ("my-agent", "user"):
        try:
            fw.LlmAgent(name=bad, model="gemini-2.5-flash")
        except ValueError:
            continue
        raise AssertionError(f"LlmAgent(name={bad!r}) was accepted")
    app = fw.App(name="named_app", root_agent=agent)
    runner = fw.Runner(app=app, app_name="other_name", session_service=fw.InMemorySessionService())
    assert runner.app_name == "other_name"


@scenario
async def transfer_to_agent_response(fw: Framework, tmp: Path) -> None:
    """transfer_to_agent: the call's function response is {"result": None} (what the model
    sees in its history), the response event carries actions.transfer_to_agent, and the
    target agent answers in the same invocation."""
    billing = fw.LlmAgent(
        name="billing", description="Billing questions.", model=scripted_model(fw, ["billing here"])
    )
    root_model = scripted_model(
        fw, [{"call": "transfer_to_agent", "args": {"agent_name": "billing"}}]
    )
    root = fw.LlmAgent(name="root", model=root_model, sub_agents=[billing])
    events = await run_turn(fw, fw.InMemoryRunner(agent=root, app_name="app"), "my bill?")
    assert function_responses(events) == [("transfer_to_agent", {"result": None})]
    assert [e.actions.transfer_to_agent for e in events] == [None, "billing", None]
    assert (events[-1].author, events[-1].content.parts[0].text) == ("billing", "billing here")


class Score(BaseModel):
    score: int
    reason: str


@scenario
async def agent_tool_results(fw: Framework, tmp: Path) -> None:
    """AgentTool: declared with the agent's name and description and one string parameter
    'request'; an agent with output_schema answers with its validated JSON object as the
    function response; a plain agent's text comes back as {"result": text}."""
    scorer = fw.LlmAgent(
        name="scorer",
        description="Scores a text.",
        model=scripted_model(fw, ['{"score": 7, "reason": "clear"}']),
        output_schema=Score,
    )
    echo = fw.LlmAgent(
        name="echo", description="Echoes.", model=scripted_model(fw, ["echoed text"])
    )
    model = scripted_model(
        fw,
        [
            [
                {"call": "scorer", "args": {"request": "rate this"}},
                {"call": "echo", "args": {"request": "say it"}},
            ],
            "done",
        ],
    )
    top = fw.LlmAgent(
        name="top", model=model, tools=[fw.AgentTool(agent=scorer), fw.AgentTool(agent=echo)]
    )
    events = await run_turn(fw, fw.InMemoryRunner(agent=top, app_name="app"), "rate")
    assert function_responses(events) == [
        ("scorer", {"score": 7, "reason": "clear"}),
        ("echo", {"result": "echoed text"}),
    ]
    declarations = {
        d.name: d
        for t in requests_of(model)[0].config.tools or []
        for d in t.function_declarations or []
    }
    assert declarations["scorer"].description == "Scores a text."
    assert declarations["scorer"].parameters_json_schema == {
        "type": "object",
        "properties": {"request": {"type": "string"}},
        "required": ["request"],
    }


def run_all(fw: Framework, tmp: Path) -> list[tuple[str, str | None]]:
    """Run every scenario on ``fw``; (name, None) for a pass, (name, error) for a failure."""
    results: list[tuple[str, str | None]] = []
    for index, fn in enumerate(SCENARIOS):
        folder = tmp / f"s{index}"
        folder.mkdir(parents=True, exist_ok=True)
        try:
            asyncio.run(fn(fw, folder))
        except Exception as exc:  # noqa: BLE001 - reported per scenario
            results.append((fn.__name__, f"{type(exc).__name__}: {exc}"))
        else:
            results.append((fn.__name__, None))
    return results
