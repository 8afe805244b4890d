"""``set_model_response``: how an agent with both tools and an ``output_schema`` answers.

Many models cannot call functions and emit schema-constrained JSON in the same request, so
such an agent gets this tool, whose parameters are the output schema; calling it is the
final answer. A pydantic model's fields are the parameters; any other schema (``list[Item]``,
``dict[str, int]``, ...) is one parameter, ``items`` for a list of models and ``response``
otherwise, as in google-adk.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import pydantic

from eventide import types
from eventide.output_schemas import is_model, is_model_list, json_schema, validate_answer
from eventide.protocol import SET_MODEL_RESPONSE
from eventide.tools.base_tool import BaseTool
from eventide.tools.function_tool import strip_titles

if TYPE_CHECKING:
    from eventide.contexts import ToolContext

__all__ = ["SET_MODEL_RESPONSE", "SetModelResponseTool"]

_DONE = "Response set successfully."
"""What ``func`` returns (google-adk's value): the answer itself is the call's arguments."""


class SetModelResponseTool(BaseTool):
    """Receives the final answer as arguments and validates it against the output schema.

    ``func`` is a function with the tool's parameters (keyword-only), for code that
    inspects the tool as google-adk's ``FunctionTool``-based one is inspected.
    """

    def __init__(self, output_schema: Any) -> None:
        super().__init__(
            name=SET_MODEL_RESPONSE,
            description="Set your final response using the required output schema: call this "
            "once you have everything needed, instead of answering in text; its arguments are "
            "the answer.",
        )
        self.output_schema = output_schema
        self._is_basemodel = is_model(output_schema)
        self._is_list_of_basemodel = is_model_list(output_schema)
        # The one parameter that carries an answer that is not a model's fields.
        self._key = (
            None if self._is_basemodel else ("items" if self._is_list_of_basemodel else "response")
        )
        self.func = self._signature_function()

    def _signature_function(self) -> Callable[..., str]:
        def set_model_response(**_: Any) -> str:
            return _DONE

        if self._key is None:
            fields = self.output_schema.model_fields
            parameters = [
                inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, annotation=f.annotation)
                for name, f in fields.items()
            ]
        else:
            parameters = [
                inspect.Parameter(
                    self._key, inspect.Parameter.KEYWORD_ONLY, annotation=self.output_schema
                )
            ]
        set_model_response.__signature__ = inspect.Signature(parameters)  # type: ignore[attr-defined]
        return set_model_response

    def get_declaration(self) -> types.FunctionDeclaration:
        schema = json_schema(self.output_schema)
        if self._key is not None:
            defs = schema.pop("$defs", None)
            schema = {"type": "object", "properties": {self._key: schema}, "required": [self._key]}
            if defs:
                schema["$defs"] = defs
        strip_titles(schema)
        return types.FunctionDeclaration(
            name=self.name, description=self.description, parameters_json_schema=schema
        )

    async def run_async(self, *, args: dict[str, Any], tool_context: ToolContext) -> Any:
        value = args if self._key is None else args.get(self._key)
        try:
            return validate_answer(self.output_schema, value)
        except pydantic.ValidationError as exc:
            # The model may try again (google-adk raises here and ends the turn instead).
            return {
                "error": f"The answer does not match the required schema: {exc.errors()}. "
                f"Call {SET_MODEL_RESPONSE} again with a valid answer."
            }
