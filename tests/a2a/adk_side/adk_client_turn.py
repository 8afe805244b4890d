"""Run by google-adk's Python: one turn of google-adk's RemoteA2aAgent against an A2A agent.

Usage: adk_client_turn.py CARD_URL MESSAGE
Prints one JSON line: {"texts": [...final response texts...], "errors": [...]}.
"""

from __future__ import annotations

import asyncio
import json
import sys

from google.adk.a2a.agent import RemoteA2aAgent
from google.adk.runners import InMemoryRunner
from google.genai import types


async def main(card_url: str, message: str) -> None:
    agent = RemoteA2aAgent(name="remote", agent_card=card_url)
    runner = InMemoryRunner(agent=agent, app_name="adk_side")
    session = await runner.session_service.create_session(app_name="adk_side", user_id="u")
    texts: list[str] = []
    errors: list[str] = []
    content = types.Content(role="user", parts=[types.Part(text=message)])
    async for event in runner.run_async(user_id="u", session_id=session.id, new_message=content):
        if event.error_message:
            errors.append(event.error_message)
        if event.is_final_response() and event.content and event.content.parts:
            texts.extend(p.text for p in event.content.parts if p.text and not p.thought)
    await runner.close()
    print(json.dumps({"texts": texts, "errors": errors}))


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2]))
