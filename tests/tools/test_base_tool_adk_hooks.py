"""google-adk's tool hooks on Eventide's tools: ``_get_declaration()`` answers for every tool
that has a declaration, and ``run_async`` is optional (google-adk 2.13's ``BaseTool`` leaves it
unimplemented rather than abstract, for tools that only change the request)."""

from __future__ import annotations

from typing import Any

import pydantic
import pytest

from eventide import LlmRequest, LongRunningFunctionTool, types
from eventide.tools.base_tool import BaseTool
from eventide.tools.function_tool import FunctionTool
from eventide.tools.set_model_response_tool import SetModelResponseTool


def book_room(room: str, nights: int) -> dict[str, Any]:
    """Books a room."""
    return {"room": room, "nights": nights}


class Answer(pydantic.BaseModel):
    city: str
    population: int


def test_function_tools_answer_the_adk_hook_with_their_declaration() -> None:
    for tool in (FunctionTool(book_room), LongRunningFunctionTool(book_room)):
        declaration = tool._get_declaration()
        assert declaration == tool.get_declaration()
        assert declaration is not None and declaration.name == "book_room"


def test_long_running_tool_hook_carries_the_long_running_note() -> None:
    declaration = LongRunningFunctionTool(book_room)._get_declaration()
    assert declaration is not None and declaration.description is not None
    assert declaration.description.startswith("Books a room.")
    assert "long-running operation" in declaration.description


def test_set_model_response_hook_declares_the_output_schema() -> None:
    declaration = SetModelResponseTool(Answer)._get_declaration()
    assert declaration is not None
    assert declaration.name == "set_model_response"
    schema = declaration.parameters_json_schema
    assert isinstance(schema, dict) and set(schema["properties"]) == {"city", "population"}


class RequestOnlyTool(BaseTool):
    """A tool that only changes the request, as google-adk's built-in Gemini tools do."""

    def __init__(self) -> None:
        super().__init__(name="request_only", description="adds an instruction")

    async def process_llm_request(self, *, tool_context: Any, llm_request: LlmRequest) -> None:
        llm_request.append_instructions(["Answer briefly."])


async def test_a_tool_without_run_async_can_be_made_and_says_so_when_run() -> None:
    tool = RequestOnlyTool()  # abstract before: TypeError at construction
    assert tool.get_declaration() is None and tool._get_declaration() is None
    with pytest.raises(NotImplementedError, match="RequestOnlyTool"):
        await tool.run_async(args={}, tool_context=None)  # type: ignore[arg-type]


class AdkStyleTool(BaseTool):
    """A tool written against google-adk: declares through ``_get_declaration``."""

    def __init__(self) -> None:
        super().__init__(name="adk_style", description="d")

    def _get_declaration(self) -> types.FunctionDeclaration:
        return types.FunctionDeclaration(name="adk_style", description="d")


def test_an_adk_style_hook_is_what_get_declaration_answers() -> None:
    tool = AdkStyleTool()
    assert tool.get_declaration() == types.FunctionDeclaration(name="adk_style", description="d")
