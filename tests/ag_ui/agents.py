"""The agent the AG-UI tests drive: a FunctionModel that acts on the user's words."""

from __future__ import annotations

from typing import Any

from eventide import LlmAgent, ToolContext, types
from eventide.apps import App
from eventide.models.llm_request import LlmRequest
from eventide.models.llm_response import LlmResponse
from eventide.testing import FunctionModel
from eventide.tools import FunctionTool, LongRunningFunctionTool
from tests.server.fixture_agents import FailingAgent, GatedAgent


def set_mood(mood: str, tool_context: ToolContext) -> dict[str, Any]:
    """Set the shared mood."""
    tool_context.state["mood"] = mood
    return {"mood": mood}


def delete_file(name: str) -> dict[str, Any]:
    """Delete a file (asks the user first)."""
    return {"deleted": name}


def ask_manager(question: str) -> None:
    """Ask the manager; the answer comes later."""
    return None


def _call(tool: str, **args: Any) -> LlmResponse:
    call = types.FunctionCall(name=tool, args=args)
    return LlmResponse(
        content=types.Content(role="model", parts=[types.Part(function_call=call)]),
        usage_metadata=types.UsageMetadata(prompt_token_count=5, candidates_token_count=2),
    )


def helper_reply(request: LlmRequest) -> LlmResponse | str:
    """mood X -> set_mood; color -> the client's pick_color; delete X -> delete_file (with
    confirmation); ask X -> ask_manager (long-running); theme? -> its instruction (which
    names the state's theme); after a tool: what it said; else the user's text."""
    last = request.contents[-1]
    for part in last.parts or ():
        if part.function_response is not None:
            answer = part.function_response
            return f"{answer.name} said {answer.response}"
    text = next((p.text for p in last.parts or () if p.text), "") or ""
    words = text.split()
    if words[:1] == ["mood"]:
        return _call("set_mood", mood=words[1])
    if words[:1] == ["color"] and "pick_color" in request.tools_dict:
        return _call("pick_color", hint="warm")
    if words[:1] == ["delete"]:
        return _call("delete_file", name=words[1])
    if words[:1] == ["ask"]:
        return _call("ask_manager", question=" ".join(words[1:]))
    if text == "theme?":
        return str(request.config.system_instruction)
    return f"you said: {text}"


def theme_instruction(context: Any) -> str:
    return f"The page's theme is {context.state.get('theme', 'unset')}."


def ag_ui_apps() -> dict[str, App]:
    helper = LlmAgent(
        name="helper",
        model=FunctionModel(function=helper_reply, stream_chunk_size=4),
        instruction=theme_instruction,
        tools=[
            set_mood,
            FunctionTool(delete_file, require_confirmation=True),
            LongRunningFunctionTool(ask_manager),
        ],
    )
    return {
        "helper": App(name="helper", root_agent=helper),
        "failing": App(name="failing", root_agent=FailingAgent(name="failing_agent")),
        "gated": App(name="gated", root_agent=GatedAgent(name="gated_agent")),
    }
