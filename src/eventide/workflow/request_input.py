"""``RequestInput``: a workflow node asks the user for input and the invocation pauses.

The request travels as a long-running function call named ``adk_request_input`` (google-adk's
name, so its web UI and clients answer it); the user answers with a function response of
the same id, and the workflow goes on from its log (see :mod:`eventide.workflow.replay`).
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field
from pydantic.alias_generators import to_camel

from eventide import types
from eventide._ids import new_id
from eventide.events import Event

__all__ = [
    "REQUEST_INPUT_FUNCTION",
    "RequestInput",
    "answer_value",
    "create_request_input_response",
    "get_request_input_interrupt_ids",
    "has_request_input_function_call",
    "request_input_event",
]

REQUEST_INPUT_FUNCTION = "adk_request_input"


class RequestInput(BaseModel):
    """What a node yields to ask the user for input.

    Attributes:
        interrupt_id: the id of the request (the function call's id); the answer carries it.
        payload: data for the client to show or act on.
        message: the question shown to the user.
        response_schema: the shape of the expected answer (a Python type, e.g. a pydantic
            model, or a JSON Schema dict). The answer is checked against it, and coerced
            (``"42"`` for an integer), when the workflow continues; one that does not fit
            raises ``WorkflowDataError`` and the user answers again.
    """

    # google-adk's spellings too: ``interruptId``, ``responseSchema``.
    model_config = ConfigDict(
        arbitrary_types_allowed=True, alias_generator=to_camel, populate_by_name=True
    )

    interrupt_id: str = Field(default_factory=new_id)
    payload: Any | None = None
    message: str | None = None
    response_schema: Any | None = None


def request_input_event(request: RequestInput) -> Event:
    """The event that carries ``request`` to the client: a long-running function call."""
    schema = request.response_schema
    if schema is not None and not isinstance(schema, dict):
        from pydantic import TypeAdapter

        schema = TypeAdapter(schema).json_schema()
    args: dict[str, Any] = {
        "interruptId": request.interrupt_id,
        "payload": request.payload,
        "message": request.message,
        "response_schema": schema,
    }
    call = types.FunctionCall(id=request.interrupt_id, name=REQUEST_INPUT_FUNCTION, args=args)
    return Event(
        content=types.Content(role="model", parts=[types.Part(function_call=call)]),
        long_running_tool_ids={request.interrupt_id},
    )


def answer_value(response: Any) -> Any:
    """The user's answer in a function response: ``{"result": x}`` gives ``x``."""
    if isinstance(response, dict) and len(response) == 1 and "result" in response:  # pyright: ignore[reportUnknownArgumentType]
        return response["result"]  # pyright: ignore[reportUnknownVariableType]
    return response  # pyright: ignore[reportUnknownVariableType]


def get_request_input_interrupt_ids(event: Event) -> list[str]:
    """The interrupt ids of the requests for input ``event`` carries."""
    return [
        call.id
        for call in event.get_function_calls()
        if call.name == REQUEST_INPUT_FUNCTION and call.id is not None
    ]


def has_request_input_function_call(event: Event) -> bool:
    """Whether ``event`` asks the user for input."""
    return bool(get_request_input_interrupt_ids(event))


def create_request_input_response(interrupt_id: str, response: dict[str, Any]) -> types.Part:
    """The part of a user message that answers the request ``interrupt_id``."""
    answer = types.FunctionResponse(
        id=interrupt_id, name=REQUEST_INPUT_FUNCTION, response=dict(response)
    )
    return types.Part(function_response=answer)
