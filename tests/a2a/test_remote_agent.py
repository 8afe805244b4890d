"""``RemoteA2aAgent`` against real A2A servers on local ports: as a sub-agent, through
``AgentTool``, pausing for input, saving the remote's files, and every kind of failure as an
error event."""

from __future__ import annotations

import asyncio
import socket
from typing import Any

import pytest
from a2a.types import a2a_pb2
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from eventide import (
    AgentTool,
    InMemoryRunner,
    LlmAgent,
    LongRunningFunctionTool,
    SequentialAgent,
    ToolContext,
    types,
)
from eventide.a2a import RemoteA2aAgent, to_a2a
from eventide.a2a.remote_conversation import INPUT_REQUIRED_FUNCTION
from eventide.events import Event
from eventide.testing import ScriptedModel, tool_call_response
from tests.a2a.a2a_harness import serving

CARD = "/.well-known/agent-card.json"


def ask_manager(amount: int) -> dict[str, Any]:
    """Ask a manager to approve a refund.

    Args:
        amount: euros.
    """
    return {"status": "pending"}


async def _run(runner: InMemoryRunner, session_id: str, message: Any) -> list[Event]:
    return [
        e async for e in runner.run_async(user_id="u", session_id=session_id, new_message=message)
    ]


async def _session(runner: InMemoryRunner) -> str:
    session = await runner.session_service.create_session(app_name=runner.app_name, user_id="u")
    return session.id


def _summary(events: list[Event]) -> list[tuple[str, bool, str]]:
    """(author, partial, what) for each event: text, call names, or the error code."""
    out = []
    for event in events:
        if event.error_code:
            what = f"error:{event.error_code}"
        elif event.get_function_calls():
            what = "calls:" + ",".join(c.name or "" for c in event.get_function_calls())
        else:
            what = event.text or ""
        out.append((event.author, bool(event.partial), what))
    return out


async def test_a_remote_pause_is_a_local_pause_that_the_users_answer_resumes() -> None:
    """The remote's chunks stream as partial events; its input-required task pauses the local
    invocation with the remote's own call; the user's function response resumes the task."""
    model = ScriptedModel(
        responses=[tool_call_response(("ask_manager", {"amount": 40})), "Asked.", "Approved!"],
        stream_chunk_size=4,
    )
    remote = LlmAgent(
        name="refunds",
        description="Handles refunds.",
        model=model,
        tools=[LongRunningFunctionTool(ask_manager)],
    )
    async with serving(to_a2a(remote)) as url:
        agent = RemoteA2aAgent(name="refund_desk", agent_card=url + CARD)
        runner = InMemoryRunner(agent, app_name="local")
        session = await _session(runner)
        first = await _run(runner, session, "Refund 40 euros")
        pause = first[-1]
        [call] = pause.get_function_calls()
        answer = types.Content(
            role="user",
            parts=[
                types.Part(
                    function_response=types.FunctionResponse(
                        id=call.id, name=call.name, response={"approved": True}
                    )
                )
            ],
        )
        second = await _run(runner, session, answer)
        await agent.close()
    assert agent.description == "Handles refunds."
    assert _summary(first) == [
        ("refund_desk", True, "Aske"),
        ("refund_desk", True, "d."),
        ("refund_desk", False, "Asked."),
        ("refund_desk", False, "calls:ask_manager"),
    ]
    assert call.args == {"amount": 40}
    assert pause.long_running_tool_ids == {call.id}
    assert _summary(second) == [
        ("refund_desk", True, "Appr"),
        ("refund_desk", True, "oved"),
        ("refund_desk", True, "!"),
        ("refund_desk", False, "Approved!"),
    ]
    sent = (model.requests[2].contents[-1].parts or [])[0].function_response
    assert sent is not None and sent.response == {"approved": True}
    # One remote task and context for the whole exchange.
    tasks = {(e.custom_metadata or {}).get("a2a:task_id") for e in first + second if not e.partial}
    assert len(tasks) == 1


async def test_a_question_in_words_becomes_an_input_required_call() -> None:
    """A remote that asks in words (a task input-required with a text status) pauses on
    ``eventide_a2a_input_required``; the user's answer goes to that task as text."""
    attempts: list[int] = []
    received: list[dict[str, Any]] = []

    def answer(n: int, body: dict[str, Any]) -> Response:
        received.append(body["params"]["message"])
        task: dict[str, Any]
        if n == 1:
            status: dict[str, Any] = {
                "state": "TASK_STATE_INPUT_REQUIRED",
                "message": {
                    "messageId": "q",
                    "role": "ROLE_AGENT",
                    "parts": [{"text": "Which size?"}],
                },
            }
            task = {"id": "t-1", "contextId": "c-1", "status": status}
        else:
            artifact = {"artifactId": "a-1", "parts": [{"text": "Ordered a large one."}]}
            task = {
                "id": "t-1",
                "contextId": "c-1",
                "status": {"state": "TASK_STATE_COMPLETED"},
                "artifacts": [artifact],
            }
        return JSONResponse({"jsonrpc": "2.0", "id": body["id"], "result": {"task": task}})

    async with serving(_fake_server(answer, attempts)) as url:
        agent = RemoteA2aAgent(name="shop", agent_card=url + CARD)
        runner = InMemoryRunner(agent, app_name="local")
        session = await _session(runner)
        first = await _run(runner, session, "A coffee please")
        [call] = first[-1].get_function_calls()
        reply = types.Content(
            role="user",
            parts=[
                types.Part(
                    function_response=types.FunctionResponse(
                        id=call.id, name=call.name, response={"result": "Large"}
                    )
                )
            ],
        )
        second = await _run(runner, session, reply)
        await runner.close()
    assert call.name == INPUT_REQUIRED_FUNCTION
    assert call.args == {"prompt": "Which size?"}
    assert first[-1].long_running_tool_ids == {call.id}
    assert received[1]["taskId"] == "t-1" and received[1]["contextId"] == "c-1"
    assert received[1]["parts"] == [{"text": "Large"}]
    assert _summary(second) == [("shop", False, "Ordered a large one.")]


async def test_as_a_sub_agent_and_as_a_tool() -> None:
    """A parent LlmAgent transfers to the remote agent; AgentTool calls it like a function."""
    remote = LlmAgent(
        name="facts", description="Knows capitals.", model=ScriptedModel(responses=["Paris."] * 3)
    )
    async with serving(to_a2a(remote)) as url:
        sub = RemoteA2aAgent(name="facts", agent_card=url + CARD, description="Knows capitals.")
        root_model = ScriptedModel(
            responses=[tool_call_response(("transfer_to_agent", {"agent_name": "facts"}))]
        )
        root = LlmAgent(name="concierge", model=root_model, sub_agents=[sub])
        runner = InMemoryRunner(root, app_name="local")
        events = await _run(runner, await _session(runner), "Capital of France?")
        assert _summary(events)[-1] == ("facts", False, "Paris.")

        tool_user_model = ScriptedModel(
            responses=[tool_call_response(("facts_tool", {"request": "Capital?"})), "It is Paris."]
        )
        as_tool = RemoteA2aAgent(name="facts_tool", agent_card=url + CARD)
        user = LlmAgent(name="writer", model=tool_user_model, tools=[AgentTool(as_tool)])
        runner = InMemoryRunner(user, app_name="local")
        events = await _run(runner, await _session(runner), "Write it")
        await sub.close()
        await as_tool.close()
    [response] = [r for e in events for r in e.get_function_responses()]
    assert response.response == {"result": "Paris."}
    assert events[-1].text == "It is Paris."


async def test_in_a_workflow_step() -> None:
    remote = LlmAgent(name="facts", model=ScriptedModel(responses=["Rome."]))
    async with serving(to_a2a(remote)) as url:
        step = RemoteA2aAgent(name="facts", agent_card=url + CARD)
        after = LlmAgent(name="after", model=ScriptedModel(responses=["Noted."]))
        flow = SequentialAgent(name="flow", sub_agents=[step, after])
        runner = InMemoryRunner(flow, app_name="local")
        events = await _run(runner, await _session(runner), "Capital of Italy?")
        await step.close()
    assert [s for s in _summary(events) if not s[1]] == [
        ("facts", False, "Rome."),
        ("after", False, "Noted."),
    ]


async def test_files_from_the_remote_become_session_artifacts() -> None:
    async def chart(tool_context: ToolContext) -> str:
        """Draw the chart."""
        png = types.Part(inline_data=types.Blob(data=b"\x89PNG..", mime_type="image/png"))
        await tool_context.save_artifact("chart.png", png)
        return "drawn"

    model = ScriptedModel(responses=[tool_call_response(("chart", {})), "Here."])
    remote = LlmAgent(name="charts", model=model, tools=[chart])
    async with serving(to_a2a(remote)) as url:
        agent = RemoteA2aAgent(name="charts", agent_card=url + CARD)
        runner = InMemoryRunner(agent, app_name="local")
        session = await _session(runner)
        events = [e for e in await _run(runner, session, "Chart please") if not e.partial]
        await agent.close()
    [saved] = [e for e in events if e.actions.artifact_delta]
    assert saved.actions.artifact_delta == {"chart.png": 0}
    assert runner.artifact_service is not None
    part = await runner.artifact_service.load_artifact(
        app_name="local", user_id="u", session_id=session, filename="chart.png"
    )
    assert part is not None and part.inline_data is not None
    assert part.inline_data.data == b"\x89PNG.."


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


async def _error_of(agent: RemoteA2aAgent, message: str = "hi") -> Event:
    runner = InMemoryRunner(agent, app_name="local")
    events = await _run(runner, await _session(runner), message)
    await agent.close()
    errors = [e for e in events if e.error_code]
    assert len(errors) == 1, _summary(events)
    return errors[0]


async def test_an_unreachable_card_is_an_error_event() -> None:
    url = f"http://127.0.0.1:{_free_port()}{CARD}"
    error = await _error_of(RemoteA2aAgent(name="gone", agent_card=url))
    assert error.error_code == "A2A_CARD_UNAVAILABLE"
    assert url in (error.error_message or "")


async def test_an_unreachable_agent_is_an_error_event() -> None:
    card = a2a_pb2.AgentCard(
        name="gone",
        supported_interfaces=[
            a2a_pb2.AgentInterface(
                url=f"http://127.0.0.1:{_free_port()}/",
                protocol_binding="JSONRPC",
                protocol_version="1.0",
            )
        ],
    )
    error = await _error_of(RemoteA2aAgent(name="gone", agent_card=card))
    assert error.error_code == "A2A_UNREACHABLE"
    assert "check that it is running" in (error.error_message or "")


async def test_a_refused_token_is_an_error_event() -> None:
    remote = LlmAgent(name="private", model=ScriptedModel(responses=["secret"]))
    async with serving(to_a2a(remote, auth_token="right")) as url:
        error = await _error_of(RemoteA2aAgent(name="private", agent_card=url + CARD))
    assert error.error_code == "A2A_UNAUTHORIZED"
    assert "HTTP 401" in (error.error_message or "")


async def test_a_slow_remote_times_out_as_an_error_event() -> None:
    class _Slow(ScriptedModel):
        async def generate_content_async(self, llm_request: Any, stream: bool = False) -> Any:
            await asyncio.sleep(30)
            yield types.Content()  # pragma: no cover

    remote = LlmAgent(name="slow", model=_Slow())
    async with serving(to_a2a(remote)) as url:
        error = await _error_of(RemoteA2aAgent(name="slow", agent_card=url + CARD, timeout=0.5))
    assert error.error_code == "A2A_TIMEOUT"


async def test_a_failed_remote_task_is_an_error_event() -> None:
    def broken() -> str:
        """Fails."""
        raise RuntimeError("disk full")

    model = ScriptedModel(responses=[tool_call_response(("broken", {}))])
    remote = LlmAgent(name="broken", model=model, tools=[broken])
    async with serving(to_a2a(remote)) as url:
        error = await _error_of(RemoteA2aAgent(name="broken", agent_card=url + CARD))
    assert error.error_code == "A2A_TASK_FAILED"
    assert "disk full" in (error.error_message or "")


def _fake_server(answer: Any, attempts: list[int]) -> Starlette:
    """A server whose card is fine and whose JSON-RPC endpoint answers ``answer(n)``."""

    async def card(request: Request) -> Response:
        base = str(request.base_url).rstrip("/")
        return JSONResponse(
            {
                "name": "fake",
                "description": "fake",
                "version": "1",
                "supportedInterfaces": [
                    {"url": base + "/rpc", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}
                ],
                "capabilities": {"streaming": False},
                "defaultInputModes": ["text/plain"],
                "defaultOutputModes": ["text/plain"],
                "skills": [],
            }
        )

    async def rpc(request: Request) -> Response:
        body = await request.json()
        attempts.append(1)
        result: Response = answer(len(attempts), body)
        return result

    return Starlette(routes=[Route(CARD, card), Route("/rpc", rpc, methods=["POST"])])


async def test_a_malformed_answer_is_an_error_event() -> None:
    attempts: list[int] = []
    app = _fake_server(
        lambda n, body: JSONResponse(
            {"jsonrpc": "2.0", "id": body["id"], "result": {"task": {"status": "???"}}}
        ),
        attempts,
    )
    async with serving(app) as url:
        error = await _error_of(RemoteA2aAgent(name="fake", agent_card=url + CARD))
    assert error.error_code == "A2A_BAD_RESPONSE"
    assert attempts == [1]  # never retried


async def test_only_what_can_succeed_is_retried() -> None:
    """A 503 is sent again (the remote started nothing); the answer then arrives."""
    attempts: list[int] = []

    def answer(n: int, body: dict[str, Any]) -> Response:
        if n == 1:
            return Response("busy", status_code=503)
        message = {"messageId": "r", "role": "ROLE_AGENT", "parts": [{"text": "Fine."}]}
        return JSONResponse({"jsonrpc": "2.0", "id": body["id"], "result": {"message": message}})

    async with serving(_fake_server(answer, attempts)) as url:
        agent = RemoteA2aAgent(name="fake", agent_card=url + CARD)
        runner = InMemoryRunner(agent, app_name="local")
        events = await _run(runner, await _session(runner), "hi")
        await agent.close()
    assert attempts == [1, 1]
    assert _summary(events) == [("fake", False, "Fine.")]


async def test_a_json_rpc_error_is_an_error_event_with_the_remotes_words() -> None:
    attempts: list[int] = []
    error_body = {"code": -32602, "message": "parts must not be empty"}
    app = _fake_server(
        lambda n, body: JSONResponse({"jsonrpc": "2.0", "id": body["id"], "error": error_body}),
        attempts,
    )
    async with serving(app) as url:
        error = await _error_of(RemoteA2aAgent(name="fake", agent_card=url + CARD))
    assert error.error_code == "A2A_REMOTE_ERROR"
    assert "parts must not be empty" in (error.error_message or "")


def test_an_empty_card_source_is_refused() -> None:
    with pytest.raises(ValueError, match="agent_card is empty"):
        RemoteA2aAgent(name="x", agent_card=" ")


def test_the_input_required_call_name_is_stable() -> None:
    assert INPUT_REQUIRED_FUNCTION == "eventide_a2a_input_required"


@pytest.mark.parametrize("resumable", [False, True])
async def test_a_remote_pause_under_a_parent_is_resumed_in_either_kind_of_app(
    resumable: bool,
) -> None:
    """Under a parent that transferred to it, the user's answer reaches the remote agent:
    by routing (a new invocation), or by resuming the paused invocation (a resumable app,
    where the agent reads the task to continue from its own events)."""
    from eventide import App, InMemorySessionService, ResumabilityConfig, Runner

    model = ScriptedModel(
        responses=[tool_call_response(("ask_manager", {"amount": 9})), "Asked.", "Approved!"]
    )
    remote = LlmAgent(name="refunds", model=model, tools=[LongRunningFunctionTool(ask_manager)])
    async with serving(to_a2a(remote)) as url:
        desk = RemoteA2aAgent(name="refund_desk", agent_card=url + CARD)
        transfer = tool_call_response(("transfer_to_agent", {"agent_name": "refund_desk"}))
        root = LlmAgent(name="root", model=ScriptedModel(responses=[transfer]), sub_agents=[desk])
        config = ResumabilityConfig(is_resumable=True) if resumable else None
        app = App(name="local", root_agent=root, resumability_config=config)
        runner = Runner(app=app, session_service=InMemorySessionService())
        session = await runner.session_service.create_session(app_name="local", user_id="u")
        first = [
            e
            async for e in runner.run_async(
                user_id="u", session_id=session.id, new_message="Refund 9"
            )
        ]
        [pause] = [e for e in first if e.long_running_tool_ids]
        [call] = pause.get_function_calls()
        answer = types.Content(
            role="user",
            parts=[
                types.Part(
                    function_response=types.FunctionResponse(
                        id=call.id, name=call.name, response={"approved": True}
                    )
                )
            ],
        )
        second = [
            e
            async for e in runner.run_async(user_id="u", session_id=session.id, new_message=answer)
        ]
        await runner.close()
    answers = [e.text for e in second if e.author == "refund_desk" and e.text]
    assert answers == ["Approved!"]
    assert not [e for e in second if e.error_message]
    if resumable:  # the answer went on in the paused invocation
        assert {e.invocation_id for e in second} == {pause.invocation_id}
