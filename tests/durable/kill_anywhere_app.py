"""The pipeline the kill-anywhere test SIGKILLs at random moments, and its worker process.

``python -m tests.durable.kill_anywhere_app DB LEDGER TURNS`` brings session ``s`` of the
SQLite file DB to TURNS finished invocations: it resumes the latest invocation with
``Runner.resume_async`` when it did not finish, and sends the next message ("turn-N")
otherwise, until every turn finished. It prints ``ready`` once imported and set up (so the
test's random delay counts from there), and ``done`` at the end. The tree::

    pipeline (SequentialAgent)
      prep        LlmAgent: calls stamp(step="prep"), then answers
      fan         ParallelAgent: left and right each call stamp(step=...), then answer
      wrap        LlmAgent: calls stamp(step="wrap"), then answers

``stamp`` is the side effect outside the process: it appends ``start <call id> <step>`` to
the LEDGER file (fsynced), sleeps a little (an await, so the branches overlap), counts the
step in the session's state and appends ``end <call id>``.
"""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path
from typing import Any

from eventide import (
    App,
    LlmAgent,
    ParallelAgent,
    ResumabilityConfig,
    Runner,
    SequentialAgent,
    ToolContext,
)
from eventide.models.llm_request import LlmRequest
from eventide.models.llm_response import LlmResponse
from eventide.runtime.markers import FINISHED, invocation_status
from eventide.sessions import SqlSessionService
from eventide.sessions.session import Session
from eventide.testing import FunctionModel, text_response, tool_call_response

APP_NAME = "kill_anywhere"
SESSION_ID = "s"
# How long one side effect takes: most of an invocation's time is spent inside tools.
STAMP_SECONDS = 0.03


def build_app(ledger: Path) -> App:
    """The pipeline above, recording its side effects in ``ledger``."""

    def log(line: str) -> None:
        with ledger.open("a") as file:
            file.write(line + "\n")
            file.flush()
            os.fsync(file.fileno())

    async def stamp(step: str, tool_context: ToolContext) -> dict[str, Any]:
        """Stamp a step."""
        call_id = tool_context.function_call_id
        log(f"start {call_id} {step}")
        await asyncio.sleep(STAMP_SECONDS)
        tool_context.state[f"stamps_{step}"] = int(tool_context.state.get(f"stamps_{step}", 0)) + 1
        log(f"end {call_id}")
        return {"stamped": step}

    def model_for(step: str) -> FunctionModel:
        def answer(request: LlmRequest) -> LlmResponse:
            last = request.contents[-1].parts or [] if request.contents else []
            if any(p.function_response is not None for p in last):
                return text_response(f"{step} stamped")
            return tool_call_response(("stamp", {"step": step}))

        return FunctionModel(function=answer)

    def agent(step: str) -> LlmAgent:
        return LlmAgent(name=step, model=model_for(step), tools=[stamp])

    root = SequentialAgent(
        name="pipeline",
        sub_agents=[
            agent("prep"),
            ParallelAgent(name="fan", sub_agents=[agent("left"), agent("right")]),
            agent("wrap"),
        ],
    )
    return App(
        name=APP_NAME, root_agent=root, resumability_config=ResumabilityConfig(is_resumable=True)
    )


def invocations(session: Session) -> list[str]:
    """The session's invocation ids, in order."""
    seen: dict[str, None] = {}
    for event in session.events:
        if event.invocation_id:
            seen.setdefault(event.invocation_id)
    return list(seen)


def finished(session: Session, invocation_id: str) -> bool:
    events = [e for e in session.events if e.invocation_id == invocation_id]
    return invocation_status(events) == FINISHED


async def drive(db: str, ledger: Path, turns: int) -> None:
    """Bring the session to ``turns`` finished invocations (see the module docstring)."""
    service = SqlSessionService(f"sqlite:///{db}")
    runner = Runner(app=build_app(ledger), session_service=service)
    try:
        print("ready", flush=True)
        while True:
            session = await service.get_session(
                app_name=APP_NAME, user_id="u", session_id=SESSION_ID
            )
            if session is None:
                await service.create_session(app_name=APP_NAME, user_id="u", session_id=SESSION_ID)
                continue
            ids = invocations(session)
            if ids and not finished(session, ids[-1]):
                events = runner.resume_async(user_id="u", session_id=SESSION_ID)
            elif len(ids) < turns:
                message = f"turn-{len(ids)}"
                events = runner.run_async(user_id="u", session_id=SESSION_ID, new_message=message)
            else:
                break
            async for _ in events:
                pass
        print("done", flush=True)
    finally:
        await runner.close()
        await service.close()


if __name__ == "__main__":
    asyncio.run(drive(sys.argv[1], Path(sys.argv[2]), int(sys.argv[3])))
