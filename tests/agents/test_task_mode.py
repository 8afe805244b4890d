"""Issue 34, the Task API (``LlmAgent(mode=...)``) on Eventide's own terms.

google-adk's behaviour is checked side by side in ``tests/adk_compat/phase2_scenarios.py``;
these tests cover what is Eventide's: the task's scope of the session log, a task that goes
on after the process restarts (a real SQLite file), and the transfer targets.
"""

from __future__ import annotations

from pathlib import Path

from eventide import LlmAgent, Runner, SqliteSessionService
from eventide.flows.contents import build_contents
from eventide.flows.task_scope import task_branch, task_scope
from eventide.testing import ScriptedModel, tool_call_response


def _tree(sub_model: ScriptedModel, root_model: ScriptedModel) -> LlmAgent:
    picker = LlmAgent(name="picker", description="picks", model=sub_model, mode="task")
    return LlmAgent(name="root", model=root_model, sub_agents=[picker])


async def test_a_task_goes_on_after_a_restart_from_the_sqlite_file(tmp_path: Path) -> None:
    """The task's question ends the turn; a new Runner on the same SQLite file routes the
    user's reply to the task, whose output then reaches the delegating agent."""
    db = str(tmp_path / "sessions.db")
    first = Runner(
        app_name="app",
        agent=_tree(
            ScriptedModel(responses=["which colour?"]),
            ScriptedModel(responses=[tool_call_response(("picker", {"request": "pick"}))]),
        ),
        session_service=SqliteSessionService(db),
    )
    session = await first.session_service.create_session(app_name="app", user_id="u")
    asked = [e async for e in first.run_async(user_id="u", session_id=session.id, new_message="hi")]
    assert asked[-1].author == "picker" and asked[-1].text == "which colour?"

    # The second process's models answer what comes after the first one's answers.
    sub_model = ScriptedModel(responses=[tool_call_response(("finish_task", {"result": "blue"}))])
    root_model = ScriptedModel(responses=["Blue it is."])
    second = Runner(
        app_name="app", agent=_tree(sub_model, root_model), session_service=SqliteSessionService(db)
    )
    answered = [
        e async for e in second.run_async(user_id="u", session_id=session.id, new_message="blue")
    ]
    assert answered[-1].author == "root" and answered[-1].text == "Blue it is."
    responses = [r.response for e in answered for r in e.get_function_responses()]
    assert {"result": "blue"} in responses
    # The root's model saw the task's outcome, not the task's conversation.
    root_view = [c.parts[0].text or "" for c in root_model.requests[0].contents if c.parts]
    assert "which colour?" not in root_view and "blue" not in root_view
    reloaded = await SqliteSessionService(db).get_session(
        app_name="app", user_id="u", session_id=session.id
    )
    assert reloaded is not None
    reply = [e for e in reloaded.events if e.author == "user" and e.text == "blue"]
    assert reply and task_scope(reply[0].branch) == reply[0].branch


def test_task_scope_closes_both_ways() -> None:
    """A task's events are invisible outside its scope, and the rest of the log is
    invisible inside it (google-adk's isolation of a task)."""
    from eventide import Event, types

    branch = task_branch(None, "picker", "call-1")
    nested = task_branch(branch, "inner", "call-2")
    assert task_scope(branch) == branch
    assert task_scope(f"{nested}.par") == nested

    def said(text: str, on: str | None) -> Event:
        return Event(
            author="user",
            branch=on,
            content=types.Content(role="user", parts=[types.Part(text=text)]),
        )

    events = [said("outside", None), said("in task", branch), said("in inner", nested)]

    def seen(view: str | None) -> list[str]:
        contents = build_contents(events, agent_name="a", branch=view)
        return [c.parts[0].text or "" for c in contents if c.parts]

    assert seen(None) == ["outside"]
    assert seen(branch) == ["in task"]
    assert seen(nested) == ["in inner"]


def test_delegated_sub_agents_are_tools_not_transfer_targets() -> None:
    chat = LlmAgent(name="chat", model=ScriptedModel())
    task = LlmAgent(name="task", model=ScriptedModel(), mode="task")
    single = LlmAgent(name="single", model=ScriptedModel(), mode="single_turn")
    root = LlmAgent(name="root", model=ScriptedModel(), sub_agents=[chat, task, single])
    assert [a.name for a in root.transfer_targets()] == ["chat"]
    assert [a.name for a in chat.transfer_targets()] == ["root"]


async def test_a_finished_task_is_not_run_again_when_the_caller_failed_after_it() -> None:
    """The task finished but the delegating agent's next model call failed: the next turn
    goes to the delegating agent, which does not run the finished task again."""
    from eventide import InMemoryRunner

    sub_model = ScriptedModel(responses=[tool_call_response(("finish_task", {"result": "ok"}))])
    root_model = ScriptedModel(
        responses=[
            tool_call_response(("picker", {"request": "pick"})),
            RuntimeError("the model is down"),
            "Back: the pick was ok.",
        ]
    )
    runner = InMemoryRunner(_tree(sub_model, root_model), app_name="app")
    session = await runner.session_service.create_session(app_name="app", user_id="u")
    try:
        async for _ in runner.run_async(user_id="u", session_id=session.id, new_message="hi"):
            pass
    except Exception as exc:
        assert "the model is down" in str(exc)
    again = [
        e async for e in runner.run_async(user_id="u", session_id=session.id, new_message="and?")
    ]
    assert [(e.author, e.text) for e in again] == [("root", "Back: the pick was ok.")]
    assert sub_model.calls == 1
    assert again[0].branch is None


async def test_the_event_that_finishes_a_task_carries_its_output() -> None:
    """As google-adk 2.13 does (checked side by side): the event answering an accepted
    ``finish_task`` call has ``output`` = the call's arguments, for a root task agent and
    for a delegated one; a refused call (arguments that fail the schema) sets none."""
    from pydantic import BaseModel

    from eventide import InMemoryRunner

    class Pick(BaseModel):
        colour: str

    root_task = LlmAgent(
        name="t",
        mode="task",
        output_schema=Pick,
        model=ScriptedModel(
            responses=[
                tool_call_response(("finish_task", {"hue": "red"})),  # refused: no colour
                tool_call_response(("finish_task", {"colour": "red"})),
            ]
        ),
    )
    runner = InMemoryRunner(root_task, app_name="app")
    session = await runner.session_service.create_session(app_name="app", user_id="u")
    events = [
        e async for e in runner.run_async(user_id="u", session_id=session.id, new_message="hi")
    ]
    finishing = [e for e in events if e.get_function_responses()]
    assert [e.output for e in finishing] == [None, {"colour": "red"}]

    sub_model = ScriptedModel(responses=[tool_call_response(("finish_task", {"result": "blue"}))])
    root_model = ScriptedModel(
        responses=[tool_call_response(("picker", {"request": "pick"})), "Blue."]
    )
    runner = InMemoryRunner(_tree(sub_model, root_model), app_name="app")
    session = await runner.session_service.create_session(app_name="app", user_id="u")
    events = [
        e async for e in runner.run_async(user_id="u", session_id=session.id, new_message="hi")
    ]
    outputs = [(e.author, e.output) for e in events if e.output is not None]
    assert outputs == [("picker", {"result": "blue"})]


async def test_a_delegation_whose_task_never_started_is_dispatched_before_the_next_model_call() -> (
    None
):
    """As google-adk 2.13 does (its test_chat_coordinator_resumes_unresolved_task_fc): the
    session holds the delegating agent's call from a turn that stopped before the task ran;
    the next message runs the task first (its request committed then), and the delegating
    agent's model sees its output."""
    from eventide import Event, InMemoryRunner, types

    child_model = ScriptedModel(
        responses=[tool_call_response(("finish_task", {"result": "finished after resume"}))]
    )
    root_model = ScriptedModel(responses=["Resumed and done."])
    child = LlmAgent(name="child", model=child_model, mode="task")
    runner = InMemoryRunner(LlmAgent(name="root", model=root_model, sub_agents=[child]))
    service = runner.session_service
    session = await service.create_session(app_name=runner.app_name, user_id="u")
    call = types.FunctionCall(id="fc-pending", name="child", args={"request": "leftover work"})
    await service.append_event(
        session,
        Event(
            invocation_id="prior",
            author="root",
            content=types.Content(role="model", parts=[types.Part(function_call=call)]),
        ),
    )
    events = [
        e async for e in runner.run_async(user_id="u", session_id=session.id, new_message="go on")
    ]
    assert child_model.calls == 1
    assert [e.output for e in events if e.output is not None] == [
        {"result": "finished after resume"}
    ]
    assert events[-1].author == "root" and events[-1].text == "Resumed and done."
    request = [e for e in events if e.author == "user" and e.branch]
    assert [e.text for e in request] == ['{"request": "leftover work"}']
