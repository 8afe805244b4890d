"""A writer process for the many-writers and crash tests.

Usage: python -m tests.sessions.append_worker URL APP USER SESSION WORKER COUNT [GO_FILE]

Appends COUNT events (COUNT=0: forever) with ids ``<WORKER>-<i>`` and state deltas to one
session, printing ``ready`` once connected and then ``committed <i>`` after each append
returns. With GO_FILE it waits for that file to exist before the first append, so all
writers start together.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import os
import sys
import time

from eventide.events import Event, EventActions
from eventide.sessions.sql_session_service import SqlSessionService


def delta_for(worker: str, i: int) -> dict[str, object]:
    """The state delta of event i of a worker (the tests fold these to check the state)."""
    return {worker: i, "last": f"{worker}-{i}", f"user:{worker}": i, "app:last": worker}


def _wait_for_file(path: str) -> None:
    while not os.path.exists(path):
        time.sleep(0.001)


async def main(url: str, app: str, user: str, sid: str, worker: str, count: int, go: str) -> None:
    service = SqlSessionService(url)
    session = await service.get_session(app_name=app, user_id=user, session_id=sid)
    assert session is not None, "the test creates the session first"
    print("ready", flush=True)
    if go:
        await asyncio.to_thread(_wait_for_file, go)
    numbers = itertools.count() if count == 0 else range(count)
    for i in numbers:
        event = Event(
            id=f"{worker}-{i}",
            author=worker,
            invocation_id=f"{worker}-inv",
            actions=EventActions(state_delta=delta_for(worker, i)),
        )
        await service.append_event(session, event)
        print(f"committed {i}", flush=True)
    # What this writer's copy of the session saw, to check that folding kept it in log order.
    print(json.dumps({"seen": [e.id for e in session.events], "state": session.state}), flush=True)
    await service.close()


if __name__ == "__main__":
    url, app, user, sid, worker, count = sys.argv[1:7]
    asyncio.run(
        main(url, app, user, sid, worker, int(count), sys.argv[7] if len(sys.argv) > 7 else "")
    )
