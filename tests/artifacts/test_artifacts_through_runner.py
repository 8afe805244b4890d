"""Artifacts saved during an invocation: versions recorded in ``artifact_delta`` and committed
by the Runner, with the in-memory and the file artifact services."""

from __future__ import annotations

from collections.abc import AsyncGenerator
from pathlib import Path

import pytest

from eventide import types
from eventide.agents.base_agent import BaseAgent
from eventide.agents.llm_agent import LlmAgent
from eventide.artifacts import InMemoryArtifactService
from eventide.artifacts.base_artifact_service import BaseArtifactService
from eventide.artifacts.file_artifact_service import FileArtifactService
from eventide.contexts import CallbackContext, InvocationContext, ToolContext
from eventide.events import Event
from eventide.runner import Runner
from eventide.sessions.in_memory_session_service import InMemorySessionService
from eventide.testing import ScriptedModel, text_response, tool_call_response
from eventide.tools.function_tool import FunctionTool

APP, USER, SESSION = "reports", "alice", "s1"


class ReportAgent(BaseAgent):
    """Saves artifacts through a CallbackContext and through a ToolContext, one event each."""

    async def _run_async_impl(self, ctx: InvocationContext) -> AsyncGenerator[Event, None]:
        callback_context = CallbackContext(ctx)
        await callback_context.save_artifact("report.md", types.Part(text="# draft"))
        await callback_context.save_artifact("report.md", types.Part(text="# final"))
        await callback_context.save_artifact(
            "user:logo.png", types.Part.from_bytes(data=b"\x89PNG", mime_type="image/png")
        )
        yield Event(
            invocation_id=ctx.invocation_id,
            author=self.name,
            content=types.Content(role="model", parts=[types.Part(text="report written")]),
            actions=callback_context.actions,
        )
        tool_context = ToolContext(ctx, function_call_id="call-1")
        version = await tool_context.save_artifact("chart.svg", types.Part(text="<svg/>"))
        listed = await tool_context.list_artifacts()
        yield Event(
            invocation_id=ctx.invocation_id,
            author=self.name,
            content=types.Content(
                role="user",
                parts=[
                    types.Part.from_function_response(
                        name="draw_chart", response={"version": version, "artifacts": listed}
                    )
                ],
            ),
            actions=tool_context.actions,
        )


def compact(events: list[Event]) -> list[tuple[str, str | None, dict[str, int]]]:
    return [(e.author, e.text, dict(e.actions.artifact_delta)) for e in events]


@pytest.fixture(params=["in_memory", "file"])
def artifact_service(request: pytest.FixtureRequest, tmp_path: Path) -> BaseArtifactService:
    if request.param == "file":
        return FileArtifactService(tmp_path)
    return InMemoryArtifactService()


async def run(runner: Runner, message: str) -> list[Event]:
    return [
        event
        async for event in runner.run_async(user_id=USER, session_id=SESSION, new_message=message)
    ]


async def test_saved_versions_are_recorded_in_artifact_delta_and_committed(
    artifact_service: BaseArtifactService,
) -> None:
    """Spec (Events, artifact_delta): an event's ``actions.artifact_delta`` maps each file
    name saved while producing it to the version saved; the Runner commits the event (with
    its delta) before the agent resumes, and the versions load from the artifact service."""
    sessions = InMemorySessionService()
    await sessions.create_session(app_name=APP, user_id=USER, session_id=SESSION)
    runner = Runner(
        app_name=APP,
        agent=ReportAgent(name="reporter"),
        session_service=sessions,
        artifact_service=artifact_service,
    )
    events = await run(runner, "write the report")
    assert compact(events) == [
        ("reporter", "report written", {"report.md": 1, "user:logo.png": 0}),
        ("reporter", None, {"chart.svg": 0}),
    ]
    listed = events[1].get_function_responses()[0].response
    assert listed == {"version": 0, "artifacts": ["chart.svg", "report.md", "user:logo.png"]}

    stored = await sessions.get_session(app_name=APP, user_id=USER, session_id=SESSION)
    assert stored is not None
    assert compact(stored.events) == [("user", "write the report", {}), *compact(events)]
    where = {"app_name": APP, "user_id": USER, "session_id": SESSION}
    for name, version in {
        **events[0].actions.artifact_delta,
        **events[1].actions.artifact_delta,
    }.items():
        assert await artifact_service.load_artifact(**where, filename=name, version=version)
    assert await artifact_service.load_artifact(**where, filename="report.md", version=0) == (
        types.Part(text="# draft")
    )

    # A second invocation in another session sees the user's file, not the session's.
    await sessions.create_session(app_name=APP, user_id=USER, session_id="s2")
    await artifact_service.save_artifact(
        app_name=APP,
        user_id=USER,
        session_id="s2",
        filename="notes.txt",
        artifact=types.Part(text="n"),
    )
    keys = await artifact_service.list_artifact_keys(app_name=APP, user_id=USER, session_id="s2")
    assert keys == ["notes.txt", "user:logo.png"]


async def test_before_agent_callback_saves_an_artifact(
    artifact_service: BaseArtifactService,
) -> None:
    """Spec (Events, artifact_delta): an artifact saved in a callback is confirmed by the event
    the callback produces, committed like any other."""

    async def snapshot(callback_context: CallbackContext) -> None:
        await callback_context.save_artifact("user:snapshot.json", types.Part(text="{}"))

    class Quiet(BaseAgent):
        async def _run_async_impl(self, ctx: InvocationContext) -> AsyncGenerator[Event, None]:
            yield Event(
                author=self.name, content=types.Content(role="model", parts=[types.Part(text="ok")])
            )

    sessions = InMemorySessionService()
    await sessions.create_session(app_name=APP, user_id=USER, session_id=SESSION)
    runner = Runner(
        app_name=APP,
        agent=Quiet(name="quiet", before_agent_callback=snapshot),
        session_service=sessions,
        artifact_service=artifact_service,
    )
    events = await run(runner, "hi")
    assert compact(events) == [("quiet", None, {"user:snapshot.json": 0}), ("quiet", "ok", {})]
    stored = await sessions.get_session(app_name=APP, user_id=USER, session_id=SESSION)
    assert stored is not None and stored.events[1].actions.artifact_delta == {
        "user:snapshot.json": 0
    }


async def test_function_tool_saves_an_artifact_through_its_tool_context(
    artifact_service: BaseArtifactService,
) -> None:
    """Spec (Runtime, tool call trace): a tool that saves an artifact has its version in the
    function-response event's ``artifact_delta``, committed before the model is called again."""

    async def draw_chart(title: str, tool_context: ToolContext) -> dict[str, int]:
        """Draw a chart and save it as an artifact."""
        version = await tool_context.save_artifact(
            "chart.svg", types.Part(text=f"<svg>{title}</svg>")
        )
        return {"version": version}

    model = ScriptedModel(
        responses=[
            tool_call_response(("draw_chart", {"title": "Q3"})),
            text_response("Here it is."),
        ]
    )
    agent = LlmAgent(name="charts", model=model, tools=[FunctionTool(draw_chart)])
    sessions = InMemorySessionService()
    await sessions.create_session(app_name=APP, user_id=USER, session_id=SESSION)
    runner = Runner(
        app_name=APP, agent=agent, session_service=sessions, artifact_service=artifact_service
    )
    events = await run(runner, "chart please")
    deltas = [dict(e.actions.artifact_delta) for e in events]
    assert deltas == [{}, {"chart.svg": 0}, {}]
    assert events[1].get_function_responses()[0].response == {"version": 0}
    loaded = await artifact_service.load_artifact(
        app_name=APP, user_id=USER, session_id=SESSION, filename="chart.svg"
    )
    assert loaded == types.Part(text="<svg>Q3</svg>")
