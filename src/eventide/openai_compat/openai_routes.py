"""The OpenAI-compatible routes: ``POST /v1/chat/completions``, ``POST /v1/responses``,
``GET /v1/models`` and ``GET /v1/models/{model}``, where a model is an app.

Each request becomes one turn of the app's Runner (see :mod:`.openai_sessions` for the
session it runs in, :mod:`.conversation_items` for how messages become the turn's input),
streamed or not as asked. Bad input gets the OpenAI error shape with a 400 (or 404 for an
unknown model or response id); nothing about a turn is kept outside its session.
"""

from __future__ import annotations

import time
from enum import Enum
from typing import Any

from fastapi import FastAPI
from pydantic_core import from_json
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from eventide._ids import new_id
from eventide.errors import AppLoadError, AppNotFoundError, ProtocolInputError
from eventide.openai_compat.chat_completions import ChatChunks, chat_completion, include_usage
from eventide.openai_compat.conversation_items import (
    chat_messages_to_items,
    response_input_to_items,
    split_new_input,
)
from eventide.openai_compat.openai_errors import openai_error, openai_error_handler
from eventide.openai_compat.openai_sessions import (
    decode_response_id,
    encode_response_id,
    import_history,
    name_answers,
    request_user,
)
from eventide.openai_compat.request_fields import (
    as_list,
    as_object,
    client_tools,
    metadata_of,
    optional_str,
    tool_calls_shown,
)
from eventide.openai_compat.responses_api import (
    ResponseEvents,
    ResponseShape,
    failure_of,
    response_resource,
)
from eventide.openai_compat.turn_output import TurnOutput
from eventide.runner import Runner
from eventide.server.app_registry import AppRegistry
from eventide.server.protocol_fast_path import ProtocolHandler
from eventide.server.protocol_turns import (
    TurnInput,
    collect_turn,
    open_session,
    stream_turn,
    turn_events,
)
from eventide.server.run_routes import InflightTurns

__all__ = ["add_openai_routes"]

_SESSION_HEADER = "X-Eventide-Session-Id"


def add_openai_routes(
    api: FastAPI, registry: AppRegistry, inflight: InflightTurns
) -> dict[str, ProtocolHandler]:
    """Register the OpenAI-compatible routes on ``api``, serving ``registry``'s apps; the
    turn routes' handlers by path, for :class:`ProtocolFastPath`."""
    api.add_exception_handler(ProtocolInputError, openai_error_handler)
    routes = _OpenAIRoutes(registry, inflight)
    tags: list[str | Enum] = ["openai"]
    api.add_api_route(
        "/v1/chat/completions",
        routes.chat_completions,
        methods=["POST"],
        tags=tags,
        summary="Run a turn of the app named by `model` (OpenAI Chat Completions)",
        response_model=None,
    )
    api.add_api_route(
        "/v1/responses",
        routes.responses,
        methods=["POST"],
        tags=tags,
        summary="Run a turn of the app named by `model` (OpenAI Responses)",
        response_model=None,
    )
    api.add_api_route(
        "/v1/models", routes.models, methods=["GET"], tags=tags, summary="List the apps as models"
    )
    api.add_api_route(
        "/v1/models/{model}",
        routes.model,
        methods=["GET"],
        tags=tags,
        summary="One app as a model",
    )

    async def chat(request: Request, _: str) -> Response:
        return await routes.chat_completions(request)

    async def responses(request: Request, _: str) -> Response:
        return await routes.responses(request)

    return {"/v1/chat/completions": chat, "/v1/responses": responses}


class _OpenAIRoutes:
    def __init__(self, registry: AppRegistry, inflight: InflightTurns) -> None:
        self.registry = registry
        self.inflight = inflight
        self.started = int(time.time())

    async def models(self) -> dict[str, Any]:
        """The apps served, as OpenAI models."""
        return {"object": "list", "data": [self._model(name) for name in self.registry.names()]}

    async def model(self, model: str) -> dict[str, Any]:
        """One app, as an OpenAI model."""
        try:
            self.registry.check_known(model)
        except AppNotFoundError as exc:
            raise _unknown_model(model, exc) from exc
        return self._model(model)

    def _model(self, name: str) -> dict[str, Any]:
        return {"id": name, "object": "model", "created": self.started, "owned_by": "eventide"}

    async def chat_completions(self, request: Request) -> Response:
        """A Chat Completions turn."""
        body = await _json_body(request)
        runner = await self._runner(body)
        metadata = metadata_of(body)
        messages = as_list(body.get("messages"))
        if not messages:
            raise openai_error(400, "messages must be a non-empty list.", param="messages")
        items = chat_messages_to_items(messages)
        history, message = split_new_input(items)
        if message is None:
            raise openai_error(
                400,
                "The messages end with an assistant message: there is nothing new to answer. "
                "End them with a user message or the tool results the assistant asked for.",
                param="messages",
            )
        user_id = request_user(request.headers, metadata, body.get("user"))
        named = request.headers.get("x-eventide-session-id") or metadata.get("session_id")
        session_id = named if isinstance(named, str) and named else None
        session, new = await open_session(runner, user_id, session_id)
        if new:
            await import_history(runner, session, history)
        name_answers(message, history, session)
        tools = client_tools(body.get("tools"), nested=True)
        output = TurnOutput(
            show_tool_calls=tool_calls_shown(request.headers, metadata),
            client_tools={tool.name for tool in tools},
        )
        stream = bool(body.get("stream"))
        turn = TurnInput(
            user_id=user_id,
            session=session,
            new_message=message,
            client_tools=tools,
            streaming=stream,
        )
        completion_id = f"chatcmpl-{new_id().replace('-', '')}"
        model = runner.app_name
        headers = {_SESSION_HEADER: session.id}
        events = turn_events(runner, turn)
        label = f"OpenAI chat turn of app {model!r}"
        if stream:
            chunks = ChatChunks(
                output, completion_id=completion_id, model=model, usage=include_usage(body)
            )
            return stream_turn(events, chunks, inflight=self.inflight, label=label, headers=headers)
        collected, error = await collect_turn(events, inflight=self.inflight, label=label)
        for event in collected:
            output.read(event)
        if error is not None or output.error is not None:
            code, text = failure_of_chat(output, error)
            raise openai_error(500, text, code=code, kind="server_error")
        return JSONResponse(
            chat_completion(output, completion_id=completion_id, model=model), headers=headers
        )

    async def responses(self, request: Request) -> Response:
        """A Responses turn."""
        body = await _json_body(request)
        runner = await self._runner(body)
        metadata = metadata_of(body)
        if "input" not in body:
            raise openai_error(400, "input is required.", param="input")
        items = response_input_to_items(body["input"])
        previous = optional_str(body, "previous_response_id")
        conversation = _conversation_id(body.get("conversation"))
        if previous is not None and conversation is not None:
            raise openai_error(
                400,
                "Give previous_response_id or conversation, not both.",
                param="conversation",
            )
        if previous is not None:
            named = decode_response_id(previous)
            if named is None:
                raise _unknown_response(previous)
            user_id, session_id = named
            found = await runner.session_service.get_session(
                app_name=runner.app_name, user_id=user_id, session_id=session_id
            )
            if found is None:
                raise _unknown_response(previous)
            session, new = found, False
        else:
            user_id = request_user(
                request.headers, metadata, body.get("user") or body.get("safety_identifier")
            )
            session, new = await open_session(runner, user_id, conversation)
        history, message = split_new_input(items)
        if message is None:
            raise openai_error(
                400,
                "The input ends with an assistant item: there is nothing new to answer. End "
                "it with a user message or the function_call_output items asked for.",
                param="input",
            )
        if new or history:
            # A new session gets the conversation so far; an existing one gets the items the
            # client added before its new input (the Responses API appends every item).
            await import_history(runner, session, history)
        name_answers(message, history, session)
        tools = client_tools(body.get("tools"), nested=False)
        output = TurnOutput(
            show_tool_calls=tool_calls_shown(request.headers, metadata),
            client_tools={tool.name for tool in tools},
        )
        stream = bool(body.get("stream"))
        turn = TurnInput(
            user_id=user_id,
            session=session,
            new_message=message,
            client_tools=tools,
            streaming=stream,
        )
        shape = ResponseShape(
            response_id=encode_response_id(user_id, session.id),
            model=runner.app_name,
            body=body,
            conversation=conversation,
        )
        events = turn_events(runner, turn)
        label = f"OpenAI responses turn of app {runner.app_name!r}"
        headers = {_SESSION_HEADER: session.id}
        if stream:
            writer = ResponseEvents(shape, output)
            return stream_turn(events, writer, inflight=self.inflight, label=label, headers=headers)
        collected, error = await collect_turn(events, inflight=self.inflight, label=label)
        for event in collected:
            output.read(event)
        failure = failure_of(output, error)
        status = "failed" if failure is not None else "completed"
        resource = response_resource(shape, output, status=status, error=failure)
        return JSONResponse(resource, headers=headers)

    async def _runner(self, body: dict[str, Any]) -> Runner:
        model = body.get("model")
        if not isinstance(model, str) or not model:
            raise openai_error(
                400,
                "model is required: give the name of an app this server serves (GET /v1/models "
                "lists them).",
                param="model",
            )
        try:
            return await self.registry.runner(model)
        except AppNotFoundError as exc:
            raise _unknown_model(model, exc) from exc
        except AppLoadError as exc:
            raise openai_error(500, str(exc), kind="server_error", code="app_load_error") from exc


def failure_of_chat(output: TurnOutput, error: BaseException | None) -> tuple[str, str]:
    """The code and message of a failed Chat Completions turn."""
    failure = failure_of(output, error)
    assert failure is not None
    return failure


async def _json_body(request: Request) -> dict[str, Any]:
    raw = await request.body()
    try:
        body = from_json(raw)  # a third faster than json.loads on a long conversation
    except ValueError as exc:
        raise openai_error(
            400, f"The request body is not valid JSON: {exc}. Send a JSON object."
        ) from exc
    found = as_object(body)
    if found is None:
        raise openai_error(400, "The request body must be a JSON object.")
    return found


def _conversation_id(value: Any) -> str | None:
    if value is None:
        return None
    named = as_object(value)
    if named is not None:
        value = named.get("id")
    if not isinstance(value, str) or not value:
        raise openai_error(
            400, 'conversation must be a conversation id or {"id": ...}.', param="conversation"
        )
    return value


def _unknown_model(model: str, exc: AppNotFoundError) -> ProtocolInputError:
    return openai_error(
        404,
        f"The model {model!r} does not exist: a model is an app this server serves. {exc}",
        param="model",
        code="model_not_found",
    )


def _unknown_response(response_id: str) -> ProtocolInputError:
    return openai_error(
        404,
        f"Previous response with id {response_id!r} not found: give the id of a response "
        "this server returned (its session must still exist).",
        param="previous_response_id",
        code="previous_response_not_found",
    )
