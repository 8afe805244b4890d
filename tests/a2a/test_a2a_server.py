"""The A2A server (``to_a2a``), driven by the official SDK's client over a real local port.

Each test names the A2A 1.0 rule it checks (specification section in parentheses).
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from a2a.types import a2a_pb2

from eventide import (
    App,
    LlmAgent,
    LongRunningFunctionTool,
    ResumabilityConfig,
    SqlSessionService,
    ToolContext,
    types,
)
from eventide.a2a import to_a2a
from eventide.a2a.task_ids import STATE_KEY, TASK_KEY
from eventide.testing import ScriptedModel, tool_call_response
from tests.a2a.a2a_harness import a2a_client, send, serving, state_name, texts, user_message


def get_weather(city: str) -> dict[str, str]:
    """Look up the weather.

    Args:
        city: the city.
    """
    return {"forecast": f"sunny in {city}"}


def ask_manager(amount: int) -> dict[str, Any]:
    """Ask a manager to approve a refund; the answer comes later.

    Args:
        amount: the refund in euros.
    """
    return {"status": "pending", "amount": amount}


def weather_agent(*answers: Any) -> LlmAgent:
    model = ScriptedModel(
        responses=list(answers)
        or [tool_call_response(("get_weather", {"city": "Paris"})), "Sunny in Paris."]
    )
    return LlmAgent(
        name="weather", description="Tells the weather.", model=model, tools=[get_weather]
    )


def sqlite_sessions(path: Path) -> SqlSessionService:
    return SqlSessionService(f"sqlite:///{path / 'sessions.db'}")


async def test_send_message_completes_a_task_whose_state_is_the_session_log(
    tmp_path: Path,
) -> None:
    """SendMessage returns the task (3.1.1); GetTask reads it back (3.1.3), from the log, in
    another server over the same database (a restart)."""
    sessions = sqlite_sessions(tmp_path)
    async with serving(to_a2a(weather_agent(), session_service=sessions)) as url:
        async with a2a_client(url) as (client, _):
            [response] = await send(client, user_message("Weather in Paris?", message_id="m-1"))
    task = response.task
    assert state_name(task.status.state) == "completed"
    assert texts(task) == ["Sunny in Paris."]
    assert [m.role for m in task.history] == [
        a2a_pb2.ROLE_USER,
        a2a_pb2.ROLE_AGENT,  # the call
        a2a_pb2.ROLE_AGENT,  # the tool's response
        a2a_pb2.ROLE_AGENT,  # the answer
    ]
    assert task.history[0].message_id == "m-1"
    call = task.history[1].parts[0]
    assert call.WhichOneof("content") == "data"
    assert dict(call.metadata)["adk_type"] == "function_call"

    # The log: every event of the task carries its id, and a marker ends it.
    session = await sessions.get_session(
        app_name="weather", user_id=f"A2A_USER_{task.context_id}", session_id=task.context_id
    )
    assert session is not None
    tagged = [e for e in session.events if (e.custom_metadata or {}).get(TASK_KEY) == task.id]
    assert len(tagged) == len(session.events) == 5
    assert (tagged[-1].custom_metadata or {})[STATE_KEY] == "completed"
    assert tagged[0].invocation_id == task.id  # the task is the invocation

    # A new server over the same database answers for the task.
    async with serving(to_a2a(weather_agent(), session_service=sqlite_sessions(tmp_path))) as url:
        async with a2a_client(url) as (client, _):
            again = await client.get_task(a2a_pb2.GetTaskRequest(id=task.id))
            limited = await client.get_task(a2a_pb2.GetTaskRequest(id=task.id, history_length=1))
    assert state_name(again.status.state) == "completed"
    assert texts(again) == texts(task)
    assert len(again.history) == 4
    assert [m.role for m in limited.history] == [a2a_pb2.ROLE_AGENT]  # historyLength (3.2.4)


async def test_message_stream_sends_the_task_then_updates_then_the_final_status() -> None:
    """SendStreamingMessage: the stream begins with the Task and closes when it ends (3.1.2);
    text chunks append to the answer's artifact, the complete answer replaces them."""
    model = ScriptedModel(responses=["Sunny all day in Paris."], stream_chunk_size=8)
    agent = LlmAgent(name="weather", model=model)
    async with serving(to_a2a(agent)) as url, a2a_client(url, streaming=True) as (client, _):
        responses = await send(client, user_message("Weather?"))
    kinds = [r.WhichOneof("payload") for r in responses]
    assert kinds[0] == "task"
    assert state_name(responses[0].task.status.state) == "submitted"
    assert state_name(responses[1].status_update.status.state) == "working"
    chunks = [r.artifact_update for r in responses if r.HasField("artifact_update")]
    assert [c.artifact.parts[0].text for c in chunks] == [
        "Sunny al",
        "l day in",
        " Paris.",
        "Sunny all day in Paris.",
    ]
    assert [c.append for c in chunks] == [False, True, True, False]
    assert [c.last_chunk for c in chunks] == [False, False, False, True]
    assert len({c.artifact.artifact_id for c in chunks}) == 1
    assert kinds[-1] == "status_update"
    assert state_name(responses[-1].status_update.status.state) == "completed"


async def test_a_paused_invocation_is_input_required_and_the_next_message_continues_it() -> None:
    """A long-running tool pauses the invocation: the task is input-required (4.1.3) with the
    pending call; a plain-text reply with the task id continues the same task (3.4.3)."""
    model = ScriptedModel(
        responses=[
            tool_call_response(("ask_manager", {"amount": 40})),
            "I asked the manager.",  # a long-running tool's first result goes to the model
            "The manager approved your refund.",
        ]
    )
    agent = LlmAgent(name="refunds", model=model, tools=[LongRunningFunctionTool(ask_manager)])
    async with serving(to_a2a(agent)) as url, a2a_client(url) as (client, _):
        [first] = await send(client, user_message("Refund 40 euros"))
        task = first.task
        assert state_name(task.status.state) == "input-required"
        [pending] = [p for p in task.status.message.parts if p.WhichOneof("content") == "data"]
        assert dict(pending.metadata) == {
            "adk_type": "function_call",
            "adk_is_long_running": True,
        }
        [second] = await send(client, user_message("approved", task_id=task.id))
    done = second.task
    assert done.id == task.id
    assert state_name(done.status.state) == "completed"
    assert texts(done) == ["I asked the manager.", "The manager approved your refund."]
    answer = (model.requests[2].contents[-1].parts or [])[0].function_response
    assert answer is not None
    assert answer.name == "ask_manager"
    assert answer.response == {"result": "approved"}


async def test_a_confirmation_is_answered_by_a_yes_in_a_resumable_app() -> None:
    """A tool confirmation is input-required; "yes" confirms it and the same invocation goes
    on (a resumable app answers in the paused invocation)."""
    done: list[int] = []

    def refund(amount: int) -> str:
        """Refund money.

        Args:
            amount: euros.
        """
        done.append(amount)
        return "refunded"

    from eventide import FunctionTool

    model = ScriptedModel(responses=[tool_call_response(("refund", {"amount": 5})), "Done."])
    agent = LlmAgent(
        name="desk", model=model, tools=[FunctionTool(refund, require_confirmation=True)]
    )
    app = App(
        name="desk",
        root_agent=agent,
        resumability_config=ResumabilityConfig(is_resumable=True),
    )
    async with serving(to_a2a(app)) as url, a2a_client(url) as (client, _):
        [first] = await send(client, user_message("Refund 5"))
        assert state_name(first.task.status.state) == "input-required"
        assert done == []
        [second] = await send(client, user_message("Yes", task_id=first.task.id))
    assert done == [5]
    assert state_name(second.task.status.state) == "completed"
    invocations = {m.message_id for m in second.task.history}
    assert invocations  # the whole conversation is one task
    assert texts(second.task) == ["Done."]


class _SlowModel(ScriptedModel):
    started: asyncio.Event | None = None

    async def generate_content_async(self, llm_request: Any, stream: bool = False) -> Any:
        if self.started is not None:
            self.started.set()
        await asyncio.sleep(60)
        async for response in super().generate_content_async(llm_request, stream):
            yield response


async def test_cancel_stops_the_invocation_and_every_server_reads_canceled(
    tmp_path: Path,
) -> None:
    """CancelTask cancels the invocation and returns the canceled task (3.1.5); the marker in
    the log makes another server answer canceled too; canceling again is refused."""
    model = _SlowModel(responses=["never"])
    model.started = asyncio.Event()
    agent = LlmAgent(name="slow", model=model)
    app = to_a2a(agent, session_service=sqlite_sessions(tmp_path), send_wait=0.05)
    async with serving(app) as url, a2a_client(url) as (client, _):
        [first] = await send(client, user_message("Take your time"))
        await model.started.wait()
        assert state_name(first.task.status.state) in ("submitted", "working")
        canceled = await client.cancel_task(a2a_pb2.CancelTaskRequest(id=first.task.id))
        assert state_name(canceled.status.state) == "canceled"
        with pytest.raises(Exception, match="already canceled"):
            await client.cancel_task(a2a_pb2.CancelTaskRequest(id=first.task.id))
        with pytest.raises(Exception, match="canceled and takes no more messages"):
            await send(client, user_message("more", task_id=first.task.id))
    other = to_a2a(
        LlmAgent(name="slow", model=ScriptedModel()), session_service=sqlite_sessions(tmp_path)
    )
    async with serving(other) as url, a2a_client(url) as (client, _):
        read = await client.get_task(a2a_pb2.GetTaskRequest(id=first.task.id))
    assert state_name(read.status.state) == "canceled"


async def test_resubscribe_follows_a_running_task_to_its_end() -> None:
    """SubscribeToTask: the task now first, then its updates until it ends (3.1.6)."""
    release = asyncio.Event()

    class _Gated(ScriptedModel):
        async def generate_content_async(self, llm_request: Any, stream: bool = False) -> Any:
            await release.wait()
            async for response in super().generate_content_async(llm_request, stream):
                yield response

    agent = LlmAgent(name="gated", model=_Gated(responses=["Finally."]))
    async with serving(to_a2a(agent, send_wait=0.05)) as url:
        async with a2a_client(url) as (client, _), a2a_client(url, streaming=True) as (sub, _):
            [first] = await send(client, user_message("Go"))
            updates: list[a2a_pb2.StreamResponse] = []
            subscribed = asyncio.Event()

            async def follow() -> None:
                request = a2a_pb2.SubscribeToTaskRequest(id=first.task.id)
                async for update in sub.subscribe(request):
                    updates.append(update)
                    subscribed.set()

            following = asyncio.create_task(follow())
            await asyncio.wait_for(subscribed.wait(), 10)
            release.set()
            await asyncio.wait_for(following, 10)
    assert updates[0].WhichOneof("payload") == "task"
    assert state_name(updates[0].task.status.state) == "working"
    assert updates[-1].status_update.status.state == a2a_pb2.TASK_STATE_COMPLETED
    answers = [
        u.artifact_update.artifact.parts[0].text for u in updates if u.HasField("artifact_update")
    ]
    assert answers == ["Finally."]


async def test_a_failing_tool_fails_the_task_with_the_reason() -> None:
    """A run that raises ends the task failed, its status message saying why (4.1.3)."""

    def broken() -> str:
        """Always fails."""
        raise RuntimeError("the ledger is offline")

    model = ScriptedModel(responses=[tool_call_response(("broken", {}))])
    agent = LlmAgent(name="ledger", model=model, tools=[broken])
    async with serving(to_a2a(agent)) as url, a2a_client(url) as (client, _):
        [response] = await send(client, user_message("Balance?"))
    task = response.task
    assert state_name(task.status.state) == "failed"
    assert "the ledger is offline" in task.status.message.parts[0].text


async def test_files_the_agent_saves_become_artifacts() -> None:
    """Artifacts the agent saves are the task's artifacts, with their bytes (4.1.7)."""

    async def make_report(tool_context: ToolContext) -> str:
        """Write the report."""
        part = types.Part(inline_data=types.Blob(data=b"a,b\n1,2\n", mime_type="text/csv"))
        await tool_context.save_artifact("report.csv", part)
        return "saved"

    model = ScriptedModel(responses=[tool_call_response(("make_report", {})), "Here it is."])
    agent = LlmAgent(name="reports", model=model, tools=[make_report])
    async with serving(to_a2a(agent)) as url, a2a_client(url, streaming=True) as (client, _):
        responses = await send(client, user_message("Report please"))
        task_id = responses[0].task.id
        async with a2a_client(url) as (plain, _):
            task = await plain.get_task(a2a_pb2.GetTaskRequest(id=task_id))
    streamed = [r.artifact_update.artifact for r in responses if r.HasField("artifact_update")]
    files = [a for a in task.artifacts if a.name == "report.csv"]
    assert len(files) == 1
    assert files[0].parts[0].raw == b"a,b\n1,2\n"
    assert files[0].parts[0].media_type == "text/csv"
    assert [a.artifact_id for a in streamed] == [a.artifact_id for a in task.artifacts]


async def test_list_tasks_pages_the_most_recent_first() -> None:
    """ListTasks: sorted by last update, newest first, with cursor pagination (3.1.4)."""
    agent = LlmAgent(name="echo", model=ScriptedModel(responses=["a", "b", "c"]))
    async with serving(to_a2a(agent)) as url, a2a_client(url) as (client, _):
        ids = []
        for text in ("one", "two", "three"):
            [response] = await send(client, user_message(text))
            ids.append(response.task.id)
        first = await client.list_tasks(a2a_pb2.ListTasksRequest(page_size=2))
        second = await client.list_tasks(
            a2a_pb2.ListTasksRequest(page_size=2, page_token=first.next_page_token)
        )
        one_context = await client.list_tasks(
            a2a_pb2.ListTasksRequest(context_id=first.tasks[0].context_id)
        )
    assert [t.id for t in first.tasks] == [ids[2], ids[1]]
    assert [t.id for t in second.tasks] == [ids[0]]
    assert second.next_page_token == ""
    assert first.total_size == 3
    assert [t.id for t in one_context.tasks] == [ids[2]]
    assert not first.tasks[0].artifacts  # includeArtifacts defaults to false


async def test_context_ids_are_sessions_shared_by_tasks() -> None:
    """A message with only a contextId starts a new task in the same session (3.4.3): the
    agent sees the earlier turns."""
    model = ScriptedModel(responses=["Nice to meet you.", "You are Ada."])
    agent = LlmAgent(name="memory", model=model)
    async with serving(to_a2a(agent)) as url, a2a_client(url) as (client, _):
        [first] = await send(client, user_message("I am Ada", context_id="conversation-1"))
        [second] = await send(client, user_message("Who am I?", context_id="conversation-1"))
    assert first.task.context_id == second.task.context_id == "conversation-1"
    assert first.task.id != second.task.id
    seen = [p.text for c in model.requests[1].contents for p in c.parts or [] if p.text]
    assert seen == ["I am Ada", "Nice to meet you.", "Who am I?"]


async def test_a2a_0_3_clients_are_served_on_the_same_endpoint() -> None:
    """A request without ``A2A-Version`` is A2A 0.3 (3.6.2): its method names and shapes
    (``message/send``, ``kind`` discriminators, lower-case states) are served too."""
    import httpx

    agent = LlmAgent(name="echo", model=ScriptedModel(responses=["Hi there."]))
    async with serving(to_a2a(agent)) as url, httpx.AsyncClient() as http:
        part = {"kind": "text", "text": "hi"}
        message = {"kind": "message", "messageId": "m1", "role": "user", "parts": [part]}
        body = {"jsonrpc": "2.0", "id": 1, "method": "message/send", "params": {"message": message}}
        sent = (await http.post(url + "/", json=body)).json()["result"]
        body = {"jsonrpc": "2.0", "id": 2, "method": "tasks/get", "params": {"id": sent["id"]}}
        read = (await http.post(url + "/", json=body)).json()["result"]
    assert sent["kind"] == "task"
    assert sent["status"]["state"] == read["status"]["state"] == "completed"
    assert sent["artifacts"][0]["parts"] == [{"kind": "text", "text": "Hi there."}]


async def test_a_paused_task_is_canceled_by_its_marker() -> None:
    """CancelTask on an input-required task (no invocation runs it) commits the canceled
    marker; a reply to it is then refused (3.1.1: terminal tasks take no messages)."""
    model = ScriptedModel(responses=[tool_call_response(("ask_manager", {"amount": 1})), "Asked."])
    agent = LlmAgent(name="refunds", model=model, tools=[LongRunningFunctionTool(ask_manager)])
    async with serving(to_a2a(agent)) as url, a2a_client(url) as (client, _):
        [first] = await send(client, user_message("Refund 1"))
        assert state_name(first.task.status.state) == "input-required"
        canceled = await client.cancel_task(a2a_pb2.CancelTaskRequest(id=first.task.id))
        with pytest.raises(Exception, match="canceled and takes no more messages"):
            await send(client, user_message("approved", task_id=first.task.id))
    assert state_name(canceled.status.state) == "canceled"
    assert model.calls == 2  # the reply never reached the agent


async def test_a_cancel_from_another_server_is_read_by_every_server(tmp_path: Path) -> None:
    """Two servers on one database: the task runs on the first, the second cancels it
    (the marker), and both then answer canceled."""
    model = _SlowModel(responses=["never"])
    model.started = asyncio.Event()
    running = to_a2a(
        LlmAgent(name="slow", model=model),
        session_service=sqlite_sessions(tmp_path),
        send_wait=0.05,
    )
    other = to_a2a(
        LlmAgent(name="slow", model=ScriptedModel()), session_service=sqlite_sessions(tmp_path)
    )
    async with serving(running) as first_url, serving(other) as second_url:
        async with a2a_client(first_url) as (first, _), a2a_client(second_url) as (second, _):
            [sent] = await send(first, user_message("Take your time"))
            await model.started.wait()
            canceled = await second.cancel_task(a2a_pb2.CancelTaskRequest(id=sent.task.id))
            seen_by_first = await first.get_task(a2a_pb2.GetTaskRequest(id=sent.task.id))
    assert state_name(canceled.status.state) == "canceled"
    assert state_name(seen_by_first.status.state) == "canceled"
