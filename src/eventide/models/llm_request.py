"""``LlmRequest``: everything one model call needs, in one object."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field

from eventide import types
from eventide._fastpath import assign_fields

if TYPE_CHECKING:
    from eventide.tools.base_tool import BaseTool

__all__ = ["Conversation", "LlmRequest"]


class Conversation(list[types.Content]):
    """The contents of a request as the flow's conversation cache built them, carrying what
    connectors made of them (``translations``: a wire format's name -> a connector's record).

    The cache hands every request of one agent's conversation the same ``translations`` dict
    while the conversation only grows by appending (its earlier contents are the same
    objects, unchanged), and a new dict whenever it did not (see
    :class:`eventide.flows.contents.ContentsCache`). So a connector may keep its translation
    of the first ``n`` contents in the dict and translate only the rest next time, when the
    request's ``history_unchanged`` says nothing else changed them.
    """

    __slots__ = ("translations",)

    def __init__(self, contents: list[types.Content], translations: dict[str, Any]) -> None:
        super().__init__(contents)
        self.translations = translations


class LlmRequest(BaseModel):
    """A model request: the model name, the conversation, and the generation config.

    ``config.system_instruction`` holds the instructions; ``config.tools`` the function
    declarations; ``tools_dict`` maps each declared tool's name to the tool (not sent).
    A connector receives this one object, so a new field never breaks a connector's
    signature.
    """

    model_config = ConfigDict(arbitrary_types_allowed=True, defer_build=True)

    model: str | None = None
    contents: list[types.Content] = Field(default_factory=list)
    config: types.GenerateContentConfig = Field(default_factory=types.GenerateContentConfig)
    tools_dict: dict[str, Any] = Field(default_factory=dict, exclude=True)
    history_unchanged: bool = Field(default=False, exclude=True)
    """Set by the LLM flow when ``contents`` are the conversation as it built it, which no
    hook, planner, code executor or tool could change in place: the Content objects of the
    earlier turns are then the same objects, unchanged, from one model call to the next, and
    a connector may reuse what it made of them, kept in ``contents.translations`` (see
    :class:`Conversation`; not sent)."""

    def append_instructions(self, instructions: list[str]) -> None:
        """Add paragraphs to the system instruction."""
        text = "\n\n".join(i for i in instructions if i)
        if not text:
            return
        config = self.config
        current = config.system_instruction
        # A str for a str field: pydantic's __setattr__ would only store it (and note it set).
        assign_fields(config, {"system_instruction": f"{current}\n\n{text}" if current else text})

    def append_tools(self, tools: list[BaseTool]) -> None:
        """Declare tools to the model and remember them by name."""
        declarations: list[types.FunctionDeclaration] = []
        for tool in tools:
            declaration = tool.get_declaration()
            if declaration is not None:
                declarations.append(declaration)
            self.tools_dict[tool.name] = tool
        if not declarations:
            return
        config_tools = self.config.tools if self.config.tools is not None else []
        for tool_group in config_tools:
            if tool_group.function_declarations is not None:
                tool_group.function_declarations.extend(declarations)
                break
        else:
            if all(type(d) is types.FunctionDeclaration for d in declarations):
                # Already validated: skip Tool's validator (it runs on every request).
                group = types.Tool.model_construct(function_declarations=declarations)
            else:  # e.g. google.genai declarations from a custom tool: convert them
                group = types.Tool(function_declarations=declarations)
            config_tools.append(group)
        self.config.tools = config_tools

    def set_output_schema(self, schema: dict[str, Any]) -> None:
        """Ask for JSON output matching ``schema`` (a JSON Schema)."""
        self.config.response_mime_type = "application/json"
        self.config.response_json_schema = schema
