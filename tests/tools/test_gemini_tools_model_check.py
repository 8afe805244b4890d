"""Gemini's built-in tools refuse a request for a model that is not Gemini when they add
themselves to it, as google-adk 2.13's do (``ValueError`` starting with google-adk's text),
besides Eventide's check when the agent is built; ``ADK_DISABLE_GEMINI_MODEL_ID_CHECK``
turns the request-time check off, as on google-adk."""

from __future__ import annotations

import pytest

from eventide import InMemorySessionService, LlmAgent, LlmRequest, ToolContext, types
from eventide.contexts import InvocationContext
from eventide.tools.gemini_tools import GoogleSearchTool, UrlContextTool


async def _tool_context() -> ToolContext:
    service = InMemorySessionService()
    session = await service.create_session(app_name="app", user_id="u")
    ictx = InvocationContext(
        invocation_id="i", agent=LlmAgent(name="a"), session=session, session_service=service
    )
    return ToolContext(ictx)


@pytest.mark.parametrize(
    ("tool", "label"), [(GoogleSearchTool(), "Google search"), (UrlContextTool(), "Url context")]
)
@pytest.mark.parametrize(
    "model",
    [
        "claude-3-sonnet",
        "my-gemini-1.5-model",
        "projects/p/locations/us-central1/publishers/gemini/models/claude-3-sonnet",
        "",
        None,
    ],
)
async def test_a_model_that_is_not_gemini_is_refused(
    tool: GoogleSearchTool | UrlContextTool, label: str, model: str | None
) -> None:
    request = LlmRequest(model=model, config=types.GenerateContentConfig())
    with pytest.raises(ValueError, match=f"{label} tool is not supported for model {model}"):
        await tool.process_llm_request(tool_context=await _tool_context(), llm_request=request)
    assert not request.config.tools


@pytest.mark.parametrize(
    "model",
    ["gemini-2.5-flash", "models/gemini-2.0-pro", "projects/p/locations/l/models/gemini-2.5-pro"],
)
async def test_a_gemini_model_gets_the_tool(model: str) -> None:
    request = LlmRequest(model=model, config=types.GenerateContentConfig())
    await GoogleSearchTool().process_llm_request(
        tool_context=await _tool_context(), llm_request=request
    )
    assert request.config.tools == [types.Tool(google_search={})]


async def test_the_check_can_be_turned_off(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ADK_DISABLE_GEMINI_MODEL_ID_CHECK", "true")
    request = LlmRequest(model="claude-3-sonnet", config=types.GenerateContentConfig())
    await UrlContextTool().process_llm_request(
        tool_context=await _tool_context(), llm_request=request
    )
    assert request.config.tools == [types.Tool(url_context={})]
