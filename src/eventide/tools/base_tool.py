"""``BaseTool``: something a model can call."""

from __future__ import annotations

import copy
from abc import ABC
from typing import TYPE_CHECKING, Any, Self

from eventide import types

if TYPE_CHECKING:
    from eventide.contexts import ToolContext
    from eventide.models.llm_request import LlmRequest

__all__ = ["BaseTool"]


class BaseTool(ABC):  # noqa: B024 - abstract by intent, like google-adk's: no method is required
    """Base of tools.

    Attributes:
        name: the name the model calls the tool by (unique among an agent's tools).
        description: what the tool does, for the model.
        is_long_running: the tool starts work that finishes later; its call's id goes in
            the event's ``long_running_tool_ids`` and the invocation pauses until a later
            user message carries the function response.
    """

    def __init__(self, *, name: str, description: str = "", is_long_running: bool = False) -> None:
        self.name = name
        self.description = description
        self.is_long_running = is_long_running

    def with_name(self, name: str) -> Self:
        """A shallow copy of this tool that the model calls ``name``."""
        clone = copy.copy(self)
        clone.name = name
        return clone

    def get_declaration(self) -> types.FunctionDeclaration | None:
        """How the model sees the tool; None for tools that only change the request.

        By default, what :meth:`_get_declaration` returns (google-adk's name for this
        method, so ADK tool classes are declared unchanged), read into a
        ``types.FunctionDeclaration`` (google-genai's, with a ``Schema``, is accepted).
        """
        if type(self)._get_declaration is BaseTool._get_declaration:
            return None
        declaration = self._get_declaration()
        if declaration is None or isinstance(declaration, types.FunctionDeclaration):
            return declaration
        return types.FunctionDeclaration.model_validate(declaration)

    def _get_declaration(self) -> Any:
        """google-adk's declaration hook: override it or :meth:`get_declaration`.

        A tool that overrides :meth:`get_declaration` answers here with the same
        declaration, so code written against google-adk reads every tool's declaration.
        """
        if type(self).get_declaration is BaseTool.get_declaration:
            return None
        return self.get_declaration()

    async def run_async(self, *, args: dict[str, Any], tool_context: ToolContext) -> Any:
        """Run the tool with the model's arguments and return its result.

        Not abstract: a tool that only changes the request (``process_llm_request``), like
        the built-in Gemini tools, never runs here, as with google-adk.
        """
        raise NotImplementedError(
            f"{type(self).__name__} ({self.name!r}) does not implement run_async: a tool the "
            "model calls must override it"
        )

    async def process_llm_request(
        self, *, tool_context: ToolContext, llm_request: LlmRequest
    ) -> None:
        """Add this tool to a model request (override to also change instructions, etc.)."""
        llm_request.append_tools([self])

    def __repr__(self) -> str:
        return f"{type(self).__name__}(name={self.name!r})"
