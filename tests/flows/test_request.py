"""Building a model call's request: the agent's settings are copied, never shared."""

from __future__ import annotations

from typing import Any

from eventide import InMemoryRunner, LlmAgent, types
from eventide.models.llm_request import LlmRequest
from eventide.testing import ScriptedModel


async def test_a_call_may_change_its_config_without_changing_the_agents() -> None:
    """Each call gets its own copy of the agent's ``generate_content_config``: a callback
    that changes the request's tools, tool config, extra fields and settings leaves the
    agent's config as it was, so the next call starts from it again."""

    def lookup(query: str) -> str:
        """Looks something up."""
        return query

    config = types.GenerateContentConfig(
        temperature=0.5,
        stop_sequences=["END"],
        tool_config=types.ToolConfig(mode="AUTO"),
        extra={"top_k": 4},
    )
    original = config.model_dump()
    seen: list[LlmRequest] = []

    def meddle(*, callback_context: Any, llm_request: LlmRequest) -> None:
        seen.append(llm_request)
        request_config = llm_request.config
        assert request_config.stop_sequences is not None and request_config.tool_config
        request_config.stop_sequences.append("STOP")
        request_config.tool_config.mode = "NONE"
        request_config.extra["seed"] = 1
        request_config.temperature = 1.0

    agent = LlmAgent(
        name="a",
        model=ScriptedModel(responses=["one", "two"]),
        tools=[lookup],
        generate_content_config=config,
        before_model_callback=meddle,
    )
    runner = InMemoryRunner(agent, app_name="app")
    await runner.session_service.create_session(app_name="app", user_id="u", session_id="s")
    for message in ("hi", "again"):
        async for _ in runner.run_async(user_id="u", session_id="s", new_message=message):
            pass
    assert config.model_dump() == original
    assert agent.generate_content_config is config
    assert [r.config.extra for r in seen] == [{"top_k": 4, "seed": 1}] * 2
    assert [r.config.stop_sequences for r in seen] == [["END", "STOP"]] * 2
    declarations = [
        [d.name for t in r.config.tools or () for d in t.function_declarations or ()] for r in seen
    ]
    assert declarations == [["lookup"]] * 2
