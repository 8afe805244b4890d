"""OpenAI tool_choice for each ToolConfig mode, in both OpenAI APIs' spellings."""

from __future__ import annotations

from typing import Any

import pytest

from eventide import types
from eventide.models._openai_chat_format import chat_request
from eventide.models._openai_responses_format import responses_request
from eventide.models.llm_request import LlmRequest


def _request(mode: str | None, names: list[str] | None = None) -> LlmRequest:
    decl = [
        types.FunctionDeclaration(name=n, parameters_json_schema={"type": "object"})
        for n in ("a", "b")
    ]
    return LlmRequest(
        model="m",
        contents=[types.Content(role="user", parts=[types.Part(text="hi")])],
        config=types.GenerateContentConfig(
            tools=[types.Tool(function_declarations=decl)],
            tool_config=types.ToolConfig(mode=mode, allowed_function_names=names) if mode else None,  # type: ignore[arg-type]
        ),
    )


@pytest.mark.parametrize(
    "mode, names, chat, responses",
    [
        (None, None, None, None),
        ("NONE", None, "none", "none"),
        ("AUTO", None, "auto", "auto"),
        ("ANY", None, "required", "required"),
        (
            "ANY",
            ["a"],
            {"type": "function", "function": {"name": "a"}},
            {"type": "function", "name": "a"},
        ),
        (
            "ANY",
            ["a", "b"],
            {
                "type": "allowed_tools",
                "allowed_tools": {
                    "mode": "required",
                    "tools": [
                        {"type": "function", "function": {"name": "a"}},
                        {"type": "function", "function": {"name": "b"}},
                    ],
                },
            },
            {
                "type": "allowed_tools",
                "mode": "required",
                "tools": [{"type": "function", "name": "a"}, {"type": "function", "name": "b"}],
            },
        ),
    ],
)
def test_tool_choice_per_mode(
    mode: str | None, names: list[str] | None, chat: Any, responses: Any
) -> None:
    """Issue 6 request translation: ToolConfig maps to each API's tool_choice."""
    assert chat_request(_request(mode, names), model="m").get("tool_choice") == chat
    assert responses_request(_request(mode, names), model="m").get("tool_choice") == responses
