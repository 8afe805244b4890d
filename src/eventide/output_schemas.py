"""What ``LlmAgent(output_schema=...)`` accepts: a pydantic model, as before, or any type
pydantic can check (``list[Item]``, ``dict[str, int]``, ``list[str]``), as google-adk 2.x
accepts. One place turns a schema into its JSON Schema and checks an answer against it, so
the flow, ``set_model_response`` and ``AgentTool`` agree.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any, get_args, get_origin

import pydantic

__all__ = [
    "is_model",
    "is_model_list",
    "json_schema",
    "parse_answer",
    "schema_name",
    "validate_answer",
]


def is_model(schema: Any) -> bool:
    """Whether ``schema`` is a pydantic model class."""
    return isinstance(schema, type) and issubclass(schema, pydantic.BaseModel)


def is_model_list(schema: Any) -> bool:
    """Whether ``schema`` is ``list[SomeModel]``."""
    args = get_args(schema)
    return get_origin(schema) is list and len(args) == 1 and is_model(args[0])


def schema_name(schema: Any) -> str:
    """A readable name of ``schema`` for messages."""
    return schema.__name__ if is_model(schema) else repr(schema)


@lru_cache(maxsize=256)
def _adapter(schema: Any) -> pydantic.TypeAdapter[Any]:
    return pydantic.TypeAdapter(schema)


def json_schema(schema: Any) -> dict[str, Any]:
    """The JSON Schema of ``schema``."""
    if is_model(schema):
        return schema.model_json_schema()  # type: ignore[no-any-return]
    return _adapter(schema).json_schema()


def validate_answer(schema: Any, value: Any) -> Any:
    """``value`` checked against ``schema``, as JSON data with None fields left out (as
    google-adk stores answers).

    Raises:
        pydantic.ValidationError: the value does not match.
    """
    adapter = _adapter(schema)
    return adapter.dump_python(adapter.validate_python(value), mode="json", exclude_none=True)


def parse_answer(schema: Any, text: str) -> Any:
    """A JSON answer's text checked against ``schema`` (see :func:`validate_answer`).

    Raises:
        pydantic.ValidationError: the text is not JSON matching ``schema``.
    """
    adapter = _adapter(schema)
    return adapter.dump_python(adapter.validate_json(text), mode="json", exclude_none=True)
