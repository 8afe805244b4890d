"""``python -m examples.support_desk``: play the support desk's conversation and print it.

Offline by default: each agent answers from a script (``ScriptedModel``), everything else is
real. Sessions go to SQLite (``.eventide/support_desk.db``; set ``EVENTIDE_SESSION_DB`` to
another database URL, or to ``memory:``), or stay in memory when the SQL session service is
not available. ``--live`` sends the same user messages to ``root_agent`` and a real model
(``EVENTIDE_MODEL`` plus the provider's key, e.g. ``GOOGLE_API_KEY`` or ``OPENAI_API_KEY``).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import uuid
from pathlib import Path
from typing import Any

from eventide import BaseAgent, Event, InMemorySessionService, Runner
from eventide.sessions.base_session_service import BaseSessionService
from examples.support_desk.agent import configured_model, has_provider_key, root_agent
from examples.support_desk.scripted import (
    APP_NAME,
    USER_MESSAGES,
    build_scripted_desk,
    run_conversation,
)

DEFAULT_DB = "sqlite+aiosqlite:///.eventide/support_desk.db"


def open_session_service() -> tuple[BaseSessionService, str]:
    """The session service to use, and a description for the printout."""
    url = os.environ.get("EVENTIDE_SESSION_DB", DEFAULT_DB)
    if url == "memory:":
        return InMemorySessionService(), "in memory"
    try:
        from eventide.sessions.sql_session_service import SqlSessionService
    except ImportError:  # the SQL store is optional; the demo still runs without it
        return InMemorySessionService(), "in memory (SQL session service unavailable)"
    if url == DEFAULT_DB:
        Path(".eventide").mkdir(exist_ok=True)
    return SqlSessionService(url), url


def _short(value: Any, limit: int = 90) -> str:
    text = value if isinstance(value, str) else json.dumps(value, default=str)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def describe(event: Event) -> list[str]:
    """Readable lines for one event."""
    who = f"[{event.author}]"
    lines: list[str] = []
    for call in event.get_function_calls():
        args = ", ".join(f"{k}={v!r}" for k, v in (call.args or {}).items())
        lines.append(f"{who} calls {call.name}({args})")
    for response in event.get_function_responses():
        if event.actions.transfer_to_agent:
            lines.append(f"{who} -> hands the conversation to {event.actions.transfer_to_agent}")
        elif event.actions.escalate:
            lines.append(f"{who} <- {response.name}: the review loop ends")
        else:
            lines.append(f"{who} <- {response.name}: {_short(response.response)}")
    if not lines and event.text:
        lines.append(f"{who} {event.text}")
    for key, value in event.actions.state_delta.items():
        lines.append(f"      state {key} = {_short(value, 70)}")
    return lines


async def main_async(live: bool) -> int:
    """Run the conversation and print it; return the exit status."""
    if live and not (has_provider_key() or os.environ.get("EVENTIDE_MODEL")):
        print(
            "--live needs a real model: set a provider key (GOOGLE_API_KEY, OPENAI_API_KEY, "
            "ANTHROPIC_API_KEY) and optionally EVENTIDE_MODEL, or drop --live for the "
            "scripted demo."
        )
        return 2
    service, where = open_session_service()
    agent: BaseAgent = root_agent if live else build_scripted_desk()[0]
    runner = Runner(app_name=APP_NAME, agent=agent, session_service=service)
    mode = f"live model {configured_model()}" if live else "scripted models (offline)"
    print(f"Support desk - {mode}; sessions: {where}")
    # A new customer per run: tickets live in user state, which a database keeps.
    user_id = f"customer-{uuid.uuid4().hex[:8]}"
    try:
        session = await service.create_session(app_name=APP_NAME, user_id=user_id)
        current = 0
        async for turn, event in run_conversation(runner, session.id, user_id):
            if turn != current:
                current = turn
                print(f"\n[user] {USER_MESSAGES[turn - 1]}")
            for line in describe(event):
                print(line)
        final = await service.get_session(app_name=APP_NAME, user_id=user_id, session_id=session.id)
        if final is not None:
            print(f"\nSession {final.id}: {len(final.events)} events committed. State:")
            for key, value in sorted(final.state.items()):
                print(f"  {key} = {_short(value, 100)}")
    finally:
        await runner.close()
        await service.close()
    return 0


def main(argv: list[str] | None = None) -> int:
    """Entry point of ``python -m examples.support_desk``."""
    parser = argparse.ArgumentParser(description="Play the support desk conversation.")
    parser.add_argument(
        "--live", action="store_true", help="use root_agent and a real model (needs a key)"
    )
    args = parser.parse_args(argv)
    return asyncio.run(main_async(args.live))


if __name__ == "__main__":
    raise SystemExit(main())
