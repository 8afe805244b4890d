"""The process the paused-invocation kill tests run and SIGKILL:
``python -m tests.durable.paused_worker STEP DB SESSION``.

STEP ``go``, ``approve`` or ``confirm`` sends that message of ``tests/durable/paused_app.py``'s
turn to SESSION (created if missing) of the SQLite file DB, then reaches the kill point of the
pause it ends in (an idle process, waiting for the user); ``resume`` resumes the session's
latest invocation. The ledger path and the kill point come from ``DURABLE_LEDGER``,
``DURABLE_KILL_AT`` and ``DURABLE_SIGNAL``.
"""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path

from eventide import Runner, types
from eventide.sessions import SqlSessionService
from tests.durable.durable_app import Probe
from tests.durable.paused_app import IDLE_AFTER, answer_for, build_app


async def main(step: str, db: str, session_id: str) -> None:
    signal = os.environ.get("DURABLE_SIGNAL")
    probe = Probe(
        Path(os.environ["DURABLE_LEDGER"]),
        kill_at=os.environ.get("DURABLE_KILL_AT") or None,
        signal=Path(signal) if signal else None,
    )
    service = SqlSessionService(f"sqlite:///{db}")
    runner = Runner(app=build_app(probe), session_service=service)
    try:
        session = await service.get_session(
            app_name="paused_app", user_id="u", session_id=session_id
        )
        if session is None:
            session = await service.create_session(
                app_name="paused_app", user_id="u", session_id=session_id
            )
        if step == "resume":
            async for _ in runner.resume_async(user_id="u", session_id=session_id):
                pass
            return
        message: types.Content | str = "go" if step == "go" else answer_for(step, session.events)
        async for _ in runner.run_async(user_id="u", session_id=session_id, new_message=message):
            pass
        if step in IDLE_AFTER:
            probe.point(IDLE_AFTER[step])  # paused: the process waits for the user
    finally:
        await runner.close()
        await service.close()


if __name__ == "__main__":
    asyncio.run(main(*sys.argv[1:4]))
