"""The process the kill tests run and SIGKILL: ``python -m tests.durable.worker MODE DB SESSION``.

MODE ``run`` starts the invocation of ``tests/durable/durable_app.py`` in SESSION (created if
missing) of the SQLite file DB; ``resume`` resumes the session's latest invocation. The
ledger path and the kill point come from ``DURABLE_LEDGER``, ``DURABLE_KILL_AT`` and
``DURABLE_SIGNAL``; ``DURABLE_APP=sibling_app`` runs ``tests/durable/sibling_app.py``'s app
instead.
"""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path

from eventide import Runner
from eventide.sessions import SqlSessionService
from tests.durable import sibling_app
from tests.durable.durable_app import Probe, build_app


async def main(mode: str, db: str, session_id: str) -> None:
    kill_at = os.environ.get("DURABLE_KILL_AT") or None
    signal = os.environ.get("DURABLE_SIGNAL")
    probe = Probe(
        Path(os.environ["DURABLE_LEDGER"]),
        kill_at=kill_at,
        signal=Path(signal) if signal else None,
    )
    service = SqlSessionService(f"sqlite:///{db}")
    siblings = os.environ.get("DURABLE_APP") == sibling_app.APP_NAME
    app = sibling_app.build_app(probe) if siblings else build_app(probe)
    runner = Runner(app=app, session_service=service)
    try:
        if mode == "run":
            session = await service.get_session(
                app_name=app.name, user_id="u", session_id=session_id
            )
            if session is None:
                await service.create_session(app_name=app.name, user_id="u", session_id=session_id)
            async for _ in runner.run_async(user_id="u", session_id=session_id, new_message="go"):
                pass
        else:
            async for _ in runner.resume_async(user_id="u", session_id=session_id):
                pass
    finally:
        await runner.close()
        await service.close()


if __name__ == "__main__":
    asyncio.run(main(*sys.argv[1:4]))
