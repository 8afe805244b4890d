"""A writer process for the fault tests: appends until told to stop, retrying through faults.

Usage: python -m tests.sessions.fault_worker URL APP SESSION WORKER STOP_FILE PAD_BYTES

Appends events with ids ``<WORKER>-<i>`` to one session (user ``u``). Before each append it
prints ``attempt <id>``; after the append returns, ``committed <id>``. An append that raises
prints ``error <type>`` and is retried with the SAME event (ids make that safe) after a short
pause, so the worker rides through a deleted, read-only or full database, a terminated
connection or a restarting server, and recovers on its own. It stops when STOP_FILE exists.
PAD_BYTES of text in each event's content make events large (for the disk-full test).
"""

from __future__ import annotations

import asyncio
import itertools
import os
import sys

from eventide import types
from eventide.events import Event, EventActions
from eventide.sessions.sql_session_service import SqlSessionService


def delta_for(worker: str, i: int) -> dict[str, object]:
    """The state delta of event i of a worker (the tests fold these to check the state)."""
    return {worker: i, "last": f"{worker}-{i}", f"user:{worker}": i}


def _stopped(stop: str) -> bool:
    return os.path.exists(stop)


async def main(url: str, app: str, sid: str, worker: str, stop: str, pad: int) -> None:
    service = SqlSessionService(url, busy_timeout=2.0)
    session = None
    while session is None:
        try:
            session = await service.get_session(app_name=app, user_id="u", session_id=sid)
        except Exception as exc:  # the backend may be down right now: wait for it
            print(f"error {type(exc).__name__}", flush=True)
            await asyncio.sleep(0.05)
    print("ready", flush=True)
    text = "x" * pad
    for i in itertools.count():
        if _stopped(stop):
            break
        event_id = f"{worker}-{i}"
        print(f"attempt {event_id}", flush=True)
        while True:
            event = Event(
                id=event_id,
                author=worker,
                invocation_id=f"{worker}-inv",
                content=types.Content(role="model", parts=[types.Part(text=text)]) if pad else None,
                actions=EventActions(state_delta=delta_for(worker, i)),
            )
            try:
                await service.append_event(session, event)
            except Exception as exc:  # every failure is retried: that is the point
                print(f"error {type(exc).__name__}: {str(exc)[:400]}", flush=True)
                if _stopped(stop):
                    await service.close()
                    return
                await asyncio.sleep(0.02)
                continue
            print(f"committed {event_id}", flush=True)
            break
    await service.close()


if __name__ == "__main__":
    url, app, sid, worker, stop, pad = sys.argv[1:7]
    asyncio.run(main(url, app, sid, worker, stop, int(pad)))
