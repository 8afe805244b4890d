"""``set_model_response``: how an agent with both tools and an ``output_schema`` answers.

Many models cannot call functions and emit schema-constrained JSON in the same request, so
such an agent gets this tool, whose parameters are the output schema; calling it is the
final answer.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pydantic

from eventide import types
from eventide.protocol import SET_MODEL_RESPONSE
from eventide.tools.base_tool import BaseTool
from eventide.tools.function_tool import strip_titles

if TYPE_CHECKING:
    from eventide.contexts import ToolContext

__all__ = ["SET_MODEL_RESPONSE", "SetModelResponseTool"]


class SetModelResponseTool(BaseTool):
    """Receives the final answer as arguments and validates it against the output schema."""

    def __init__(self, output_schema: type[pydantic.BaseModel]) -> None:
        super().__init__(
            name=SET_MODEL_RESPONSE,
            description="Give your final answer. Call this once you have everything needed; "
            "its arguments are the answer.",
        )
        self.output_schema = output_schema

    def get_declaration(self) -> types.FunctionDeclaration:
        schema = self.output_schema.model_json_schema()
        strip_titles(schema)
        return types.FunctionDeclaration(
            name=self.name, description=self.description, parameters_json_schema=schema
        )

    async def run_async(self, *, args: dict[str, Any], tool_context: ToolContext) -> Any:
        try:
            value = self.output_schema.model_validate(args)
        except pydantic.ValidationError as exc:
            return {
                "error": f"The answer does not match the required schema: {exc.errors()}. "
                "Call set_model_response again with a valid answer."
            }
        return value.model_dump(mode="json", exclude_none=True)  # as google-adk answers
