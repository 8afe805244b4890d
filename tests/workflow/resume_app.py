"""A workflow for the resume tests, run as its own process: ``python -m
tests.workflow.resume_app DB TURN RESUMABLE``.

Its nodes record their side effects in the file ``$SIDE_EFFECTS`` (outside the process, so
a SIGKILL loses none); ``$KILL_AT=<node>`` kills the process (SIGKILL) the first time that
node runs. TURN is ``start`` (a new message), ``resume`` (``Runner.resume_async``) or
``answer`` (the user's answer to the request). It prints the outputs it saw and the state.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sys
from typing import Any

from eventide import App, ResumabilityConfig, Runner, types
from eventide.sessions.sql_session_service import SqliteSessionService
from eventide.workflow import JoinNode, RequestInput, Workflow

REQUEST_ID = "approve-1"


def _effect(name: str) -> None:
    log = os.environ["SIDE_EFFECTS"]
    with open(log, "a") as file:
        file.write(name + "\n")
    if os.environ.get("KILL_AT") == name and not os.path.exists(log + ".killed"):
        open(log + ".killed", "w").close()
        os.kill(os.getpid(), signal.SIGKILL)


def prep(node_input: str) -> str:
    _effect("prep")
    return node_input


async def left(node_input: Any) -> str:
    _effect("left")
    return "L"


async def right(node_input: Any) -> str:
    _effect("right")
    return "R"


async def ask(node_input: Any) -> Any:
    _effect("ask")
    yield RequestInput(interrupt_id=REQUEST_ID, message="Approve?", payload=node_input)


def after(node_input: Any, ctx: Any) -> dict[str, Any]:
    _effect("after")
    ctx.state["answer"] = node_input
    return {"final": node_input}


workflow = Workflow(
    name="wf",
    edges=[("START", prep, (left, right), JoinNode(name="join"), ask, after)],
)


async def main(db: str, turn: str, resumable: bool) -> None:
    app = App(
        name="app",
        root_agent=workflow,
        resumability_config=ResumabilityConfig(is_resumable=resumable),
    )
    runner = Runner(app=app, session_service=SqliteSessionService(db))
    service = runner.session_service
    if await service.get_session(app_name="app", user_id="u", session_id="s") is None:
        await service.create_session(app_name="app", user_id="u", session_id="s")
    if turn == "resume":
        events = runner.resume_async(user_id="u", session_id="s")
    else:
        if turn == "start":
            part = types.Part(text="go")
        else:
            response = types.FunctionResponse(
                id=REQUEST_ID, name="adk_request_input", response={"result": "yes"}
            )
            part = types.Part(function_response=response)
        message = types.Content(role="user", parts=[part])
        events = runner.run_async(user_id="u", session_id="s", new_message=message)
    seen = [[e.node_info.path, e.output] async for e in events if e.output is not None]
    session = await service.get_session(app_name="app", user_id="u", session_id="s")
    assert session is not None
    print(json.dumps({"outputs": seen, "state": dict(session.state)}))
    await runner.close()


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2], sys.argv[3] == "1"))
