"""``POST /ag-ui/{app_name}`` and :func:`add_ag_ui_endpoint`: AG-UI runs over HTTP + SSE.

The body is AG-UI's ``RunAgentInput`` (JSON); the answer is a ``text/event-stream`` of AG-UI
events (see :mod:`.event_stream`). A body that is not a ``RunAgentInput`` is a 400 (and an
unknown app a 404) before any run starts; an input that breaks a rule of the protocol
(resume rules, a tool result for no call, a state that is not an object) is a stream with
the protocol's ``RUN_ERROR``. The adapter keeps nothing: the thread is a session.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, cast

import pydantic
from ag_ui.core import RunAgentInput
from fastapi import FastAPI, HTTPException
from pydantic_core import from_json
from starlette.requests import Request
from starlette.responses import Response

from eventide.ag_ui.event_stream import AgUiEvents
from eventide.ag_ui.frames import run_error_frame
from eventide.ag_ui.run_input import DEFAULT_USER, plan_turn
from eventide.agents.base_agent import BaseAgent
from eventide.apps.app import App
from eventide.artifacts.base_artifact_service import BaseArtifactService
from eventide.errors import AppLoadError, AppNotFoundError, ProtocolInputError
from eventide.events import Event, EventActions
from eventide.memory.base_memory_service import BaseMemoryService
from eventide.protocol import USER_AUTHOR
from eventide.runner import Runner
from eventide.server.app_registry import AppRegistry
from eventide.server.protocol_fast_path import ProtocolHandler
from eventide.server.protocol_turns import TurnInput, open_session, stream_turn, turn_events
from eventide.server.run_routes import InflightTurns
from eventide.server.sse_batching import EventStreamResponse
from eventide.sessions.base_session_service import BaseSessionService
from eventide.sessions.in_memory_session_service import InMemorySessionService

__all__ = ["add_ag_ui_endpoint", "add_ag_ui_routes", "run_ag_ui"]

UserIdOf = Callable[[Request, RunAgentInput], str]


def add_ag_ui_routes(
    api: FastAPI, registry: AppRegistry, inflight: InflightTurns
) -> dict[str, ProtocolHandler]:
    """Serve ``POST /ag-ui/{app_name}`` for every app of ``registry``; the handler by path
    prefix, for :class:`ProtocolFastPath`."""

    async def ag_ui(app_name: str, request: Request) -> Response:
        """Run the app named in the path with an AG-UI ``RunAgentInput``."""
        try:
            runner = await registry.runner(app_name)
        except AppNotFoundError as exc:
            raise HTTPException(404, detail=str(exc)) from exc
        except AppLoadError as exc:
            raise HTTPException(500, detail=str(exc)) from exc
        return await run_ag_ui(runner, request, inflight=inflight)

    api.add_api_route(
        "/ag-ui/{app_name}",
        ag_ui,
        methods=["POST"],
        tags=["ag-ui"],
        summary="Run the app with an AG-UI RunAgentInput; AG-UI events as server-sent events",
        response_model=None,
    )

    async def fast(request: Request, app_name: str) -> Response:
        return await ag_ui(app_name, request)

    return {"/ag-ui/": fast}


def add_ag_ui_endpoint(
    fastapi_app: FastAPI,
    agent_or_app: BaseAgent | App,
    path: str = "/",
    *,
    session_service: BaseSessionService | None = None,
    artifact_service: BaseArtifactService | None = None,
    memory_service: BaseMemoryService | None = None,
    user_id: UserIdOf | None = None,
) -> Runner:
    """Serve an agent (or app) over AG-UI at ``POST path`` of your own FastAPI app.

    Args:
        fastapi_app: the app to add the route to.
        agent_or_app: the root agent, or an ``App`` (its name scopes the sessions).
        path: the route's path.
        session_service: where threads are kept (in memory by default).
        artifact_service: the artifact service, if any.
        memory_service: the memory service, if any.
        user_id: the user of a request (default: the ``X-Eventide-User-Id`` header, then
            ``forwardedProps.userId``, then ``"ag-ui"``).

    Returns:
        The Runner the endpoint uses (close it when the app shuts down).
    """
    services = session_service if session_service is not None else InMemorySessionService()
    if isinstance(agent_or_app, App):
        runner = Runner(
            app=agent_or_app,
            session_service=services,
            artifact_service=artifact_service,
            memory_service=memory_service,
        )
    else:
        runner = Runner(
            app_name=agent_or_app.name,
            agent=agent_or_app,
            session_service=services,
            artifact_service=artifact_service,
            memory_service=memory_service,
        )

    async def ag_ui(request: Request) -> Response:
        """Run the agent with an AG-UI ``RunAgentInput``."""
        return await run_ag_ui(runner, request, user_id=user_id)

    fastapi_app.add_api_route(path, ag_ui, methods=["POST"], tags=["ag-ui"], response_model=None)
    return runner


async def run_ag_ui(
    runner: Runner,
    request: Request,
    *,
    inflight: InflightTurns | None = None,
    user_id: UserIdOf | None = None,
) -> Response:
    """Answer one AG-UI request with ``runner`` (see the module docstring)."""
    run, earlier = await _run_input(request)
    user = user_id(request, run) if user_id is not None else _default_user(request, run)
    session, _ = await open_session(runner, user, run.thread_id)
    try:
        plan = plan_turn(run, session)
    except ProtocolInputError as exc:
        return _run_error(exc.code or "INVALID_INPUT", str(exc))
    writer = AgUiEvents(
        thread_id=run.thread_id,
        run_id=run.run_id,
        state={**session.state, **plan.state_delta},
        messages=run.messages,
        earlier_messages=earlier,
        client_tools={tool.name for tool in plan.client_tools},
    )
    if not plan.runs_agent:
        if plan.state_delta:
            change = Event(
                author=USER_AUTHOR,
                invocation_id=f"ag-ui-{run.run_id}",
                actions=EventActions(state_delta=plan.state_delta),
            )
            await runner.session_service.append_event(session, change)
        return EventStreamResponse(_nothing_to_run(writer))
    turn = TurnInput(
        user_id=user,
        session=session,
        new_message=plan.new_message,
        state_delta=plan.state_delta,
        client_tools=plan.client_tools,
        streaming=True,
    )
    events = turn_events(runner, turn)
    label = f"AG-UI run of app {runner.app_name!r}"
    return stream_turn(events, writer, inflight=inflight, label=label)


async def _run_input(request: Request) -> tuple[RunAgentInput, list[object]]:
    """The request's ``RunAgentInput``, and the messages before its last assistant message,
    as JSON.

    Clients resend the whole conversation every run; the messages before the last assistant
    message are what the thread's session already holds, so only the rest is validated here
    (validating all of them made a run's cost grow with the conversation). The earlier ones
    are validated only if a ``MESSAGES_SNAPSHOT`` needs them.
    """
    raw = await request.body()
    try:
        # pydantic-core's parser: the body grows with the conversation, and json.loads
        # took half again as long on it.
        body: Any = from_json(raw)
    except ValueError as exc:
        raise HTTPException(
            400, detail=f"The body is not JSON ({exc}): send an AG-UI RunAgentInput."
        ) from exc
    earlier: list[object] = []
    if isinstance(body, dict):
        data = cast("dict[str, Any]", body)
        messages: object = data.get("messages")
        if isinstance(messages, list):
            listed = cast("list[object]", messages)
            last = max(len(listed) - 1, 0)  # found from the end: the new messages are few
            while last > 0 and _role(listed[last]) != "assistant":
                last -= 1
            earlier = listed[:last]
            body = {**data, "messages": listed[last:]}
    try:
        return RunAgentInput.model_validate(body), earlier
    except pydantic.ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in error['loc']) or 'body'}: {error['msg']}"
            for error in exc.errors(include_url=False)[:5]
        )
        raise HTTPException(
            400,
            detail=f"The body is not an AG-UI RunAgentInput ({problems}). Send the JSON the "
            "AG-UI clients send: threadId, runId, messages (and tools, state, resume).",
        ) from exc


def _role(message: object) -> object:
    return cast("dict[str, Any]", message).get("role") if isinstance(message, dict) else None


def _default_user(request: Request, run: RunAgentInput) -> str:
    header = request.headers.get("x-eventide-user-id")
    if header:
        return header
    props = run.forwarded_props
    if isinstance(props, dict):
        named = cast("dict[str, Any]", props)
        for key in ("userId", "user_id"):
            value = named.get(key)
            if isinstance(value, str) and value:
                return value
    return DEFAULT_USER


def _nothing_to_run(writer: AgUiEvents) -> Callable[[Callable[[bytes], None]], Any]:
    async def produce(emit: Callable[[bytes], None]) -> None:
        writer.start(emit)
        writer.end(None, emit)

    return produce


def _run_error(code: str, message: str) -> Response:
    async def produce(emit: Callable[[bytes], None]) -> None:
        emit(run_error_frame(message, code))

    return EventStreamResponse(produce)
