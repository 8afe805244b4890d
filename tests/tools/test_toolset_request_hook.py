"""``BaseToolset.process_llm_request`` (google-adk's hook): a toolset changes each model
request of an agent that has it, before its tools declare themselves. Before, Eventide's
toolsets had no such hook (an override was never called)."""

from __future__ import annotations

from eventide import BaseTool, FunctionTool, LlmAgent, ToolContext
from eventide.contexts import InvocationContext, ReadonlyContext
from eventide.models.llm_request import LlmRequest
from eventide.testing import ScriptedModel, tool_call_response
from eventide.tools.base_toolset import BaseToolset
from tests.agents.llm_helpers import start, turn


def lookup(term: str) -> str:
    """Look a term up."""
    return f"{term}: found"


class Glossary(BaseToolset):
    def __init__(self) -> None:
        super().__init__(tool_name_prefix="glossary")
        self.calls = 0

    async def get_tools(self, readonly_context: ReadonlyContext | None = None) -> list[BaseTool]:
        return [FunctionTool(lookup)]

    async def process_llm_request(
        self, *, tool_context: ToolContext, llm_request: LlmRequest
    ) -> None:
        self.calls += 1
        llm_request.append_instructions([f"Glossary toolset, call {self.calls}."])


class Plain(BaseToolset):
    async def get_tools(self, readonly_context: ReadonlyContext | None = None) -> list[BaseTool]:
        return []


async def test_a_toolset_changes_every_request_of_its_agent() -> None:
    glossary = Glossary()
    model = ScriptedModel(
        responses=[tool_call_response(("glossary_lookup", {"term": "owl"})), "An owl."]
    )
    agent = LlmAgent(name="a", model=model, instruction="Be brief.", tools=[glossary, Plain()])
    runner, sid = await start(agent)
    events = await turn(runner, sid)
    assert events[-1].text == "An owl."
    assert glossary.calls == 2
    instructions = [request.config.system_instruction for request in model.requests]
    assert instructions == [
        "Be brief.\n\nGlossary toolset, call 1.",
        "Be brief.\n\nGlossary toolset, call 2.",
    ]
    assert [t.name for t in model.requests[0].tools_dict.values()] == ["glossary_lookup"]


async def test_the_default_hook_leaves_the_request_as_it_is() -> None:
    request = LlmRequest(model="m")
    before = request.model_dump()
    runner, sid = await start(LlmAgent(name="a", model=ScriptedModel(responses=["ok"])))
    session = await runner.session_service.get_session(app_name="app", user_id="u", session_id=sid)
    assert session is not None
    ctx = InvocationContext(
        invocation_id="i",
        agent=runner.agent,
        session=session,
        session_service=runner.session_service,
    )
    await Plain().process_llm_request(tool_context=ToolContext(ctx), llm_request=request)
    assert request.model_dump() == before
