"""AgentTool and the built-in tools (load_artifacts, load_memory, preload_memory)."""

from __future__ import annotations

from collections.abc import AsyncGenerator
from typing import Any

from eventide import (
    AgentTool,
    App,
    BaseAgent,
    Event,
    InMemoryMemoryService,
    InMemorySessionService,
    InvocationContext,
    LlmAgent,
    Runner,
    ToolContext,
    load_artifacts,
    load_memory,
    preload_memory,
    types,
)
from eventide.testing import ScriptedModel, tool_call_response
from tests.agents.llm_helpers import start, turn
from tests.event_summary import summarize


async def test_agent_tool_runs_an_agent_in_a_child_session() -> None:
    """Issue 3 AgentTool: the agent runs with a copy of the caller's state; its state changes
    and artifacts come back through the tool's context; its final text is the result."""

    async def draft(topic: str, tool_context: ToolContext) -> str:
        """Draft a text."""
        await tool_context.save_artifact("draft.txt", types.Part(text=f"About {topic}"))
        tool_context.state["drafted"] = topic
        return "drafted"

    writer_model = ScriptedModel(
        responses=[tool_call_response(("draft", {"topic": "owls"})), "Owls are great."]
    )
    writer = LlmAgent(
        name="writer",
        description="Writes short texts.",
        model=writer_model,
        instruction="Audience: {audience}",
        tools=[draft],
    )
    boss_model = ScriptedModel(
        responses=[tool_call_response(("writer", {"request": "write about owls"})), "Here it is."]
    )
    boss = LlmAgent(name="boss", model=boss_model, tools=[AgentTool(writer)])
    runner, sid = await start(boss)
    events = await turn(runner, sid, state_delta={"audience": "kids"})
    assert summarize(events) == [
        ("boss", "call", (("writer", (("request", "write about owls"),)),)),
        ("boss", "response", (("writer", (("result", "Owls are great."),)),)),
        ("boss", "text", "Here it is."),
    ]
    assert events[1].actions.state_delta == {"drafted": "owls"}
    assert events[1].actions.artifact_delta == {"draft.txt": 0}
    assert writer_model.requests[0].config.system_instruction == "Audience: kids"
    assert writer_model.requests[0].contents[0].text == "write about owls"
    assert runner.artifact_service is not None
    saved = await runner.artifact_service.load_artifact(
        app_name="app", user_id="u", session_id=sid, filename="draft.txt"
    )
    assert saved == types.Part(text="About owls")


async def test_agent_tool_skip_summarization_makes_the_result_final() -> None:
    """Spec is_final_response rule 1 through AgentTool(skip_summarization=True)."""
    helper = LlmAgent(name="helper", model=ScriptedModel(responses=["raw answer"]))
    boss_model = ScriptedModel(responses=[tool_call_response(("helper", {"request": "x"}))])
    boss = LlmAgent(
        name="boss", model=boss_model, tools=[AgentTool(helper, skip_summarization=True)]
    )
    runner, sid = await start(boss)
    events = await turn(runner, sid)
    assert events[-1].get_function_responses()[0].response == {"result": "raw answer"}
    assert events[-1].is_final_response()
    assert boss_model.calls == 1


async def test_agent_tool_answer_includes_code_and_its_result_but_no_thought() -> None:
    """google-adk 2.13's AgentTool answers with the last answer's text, executable code and
    code-execution output (one part a line, the output's trailing newline dropped) and leaves
    thoughts out; before, an answer made of code parts came back as ''."""
    parts = [
        types.Part(text="let me compute", thought=True),
        types.Part(text="Here is the answer:"),
        types.Part(executable_code=types.ExecutableCode(language="PYTHON", code="print(2 ** 10)")),
        types.Part(
            code_execution_result=types.CodeExecutionResult(outcome="OUTCOME_OK", output="1024\n")
        ),
    ]

    class Coder(BaseAgent):
        async def _run_async_impl(self, ctx: InvocationContext) -> AsyncGenerator[Event, None]:
            yield Event(author=self.name, content=types.Content(role="model", parts=parts))

    coder = Coder(name="coder", description="Runs code.")
    boss_model = ScriptedModel(
        responses=[tool_call_response(("coder", {"request": "2**10?"})), "1024."]
    )
    boss = LlmAgent(name="boss", model=boss_model, tools=[AgentTool(coder)])
    runner, sid = await start(boss)
    events = await turn(runner, sid)
    assert events[1].get_function_responses()[0].response == {
        "result": "Here is the answer:\nprint(2 ** 10)\n1024"
    }


async def test_load_artifacts_lists_and_loads() -> None:
    """load_artifacts: available names go into the instructions; a call returns contents."""

    model = ScriptedModel(
        responses=[
            tool_call_response(("load_artifacts", {"artifact_names": ["notes.md", "nope"]})),
            "ok",
        ]
    )
    runner, sid = await start(LlmAgent(name="a", model=model, tools=[load_artifacts]))
    assert runner.artifact_service is not None
    await runner.artifact_service.save_artifact(
        app_name="app",
        user_id="u",
        session_id=sid,
        filename="notes.md",
        artifact=types.Part(text="# Notes"),
    )
    events = await turn(runner, sid)
    assert "`notes.md`" in (model.requests[0].config.system_instruction or "")
    result: Any = events[1].get_function_responses()[0].response
    assert result["artifacts"]["notes.md"] == {"text": "# Notes"}
    assert "No artifact named 'nope'" in result["artifacts"]["nope"]["error"]


async def _remembering_runner(agent: LlmAgent) -> tuple[Runner, str]:
    memory = InMemoryMemoryService()
    sessions = InMemorySessionService()
    old = await sessions.create_session(app_name="app", user_id="u")
    from eventide import Event

    await sessions.append_event(
        old,
        Event(
            author="user",
            content=types.Content(role="user", parts=[types.Part(text="My cat is called Miso")]),
        ),
    )
    await memory.add_session_to_memory(old)
    runner = Runner(
        app=App(name="app", root_agent=agent), session_service=sessions, memory_service=memory
    )
    session = await sessions.create_session(app_name="app", user_id="u")
    return runner, session.id


async def test_load_memory_searches_past_sessions() -> None:
    """load_memory: the model searches the user's memory with a query."""
    model = ScriptedModel(
        responses=[tool_call_response(("load_memory", {"query": "cat name"})), "Miso"]
    )
    runner, sid = await _remembering_runner(LlmAgent(name="a", model=model, tools=[load_memory]))
    events = await turn(runner, sid, "what is my cat called?")
    memories: Any = events[1].get_function_responses()[0].response
    assert [m["text"] for m in memories["memories"]] == ["My cat is called Miso"]


async def test_preload_memory_adds_relevant_memories_to_instructions() -> None:
    """preload_memory: memories matching the user's message are added before the call."""
    model = ScriptedModel(responses=["Miso"])
    runner, sid = await _remembering_runner(LlmAgent(name="a", model=model, tools=[preload_memory]))
    await turn(runner, sid, "what is my cat called?")
    instruction = model.requests[0].config.system_instruction or ""
    assert "My cat is called Miso" in instruction
    assert model.requests[0].config.tools is None, "preload_memory is not offered to the model"
