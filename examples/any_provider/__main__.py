"""``python -m examples.any_provider [question]``: ask the assistant once and print the turn.

Uses ``EVENTIDE_MODEL`` and the provider's key (see ``agent.py``).
"""

from __future__ import annotations

import asyncio
import sys

from eventide import InMemoryRunner
from examples.any_provider.agent import build_agent


async def main(question: str) -> None:
    runner = InMemoryRunner(build_agent(), app_name="any_provider")
    session = await runner.session_service.create_session(app_name="any_provider", user_id="me")
    async with runner:
        async for event in runner.run_async(
            user_id="me", session_id=session.id, new_message=question
        ):
            for call in event.get_function_calls():
                print(f"[tool call] {call.name}({call.args})")
            for response in event.get_function_responses():
                print(f"[tool result] {response.response}")
            if event.error_code:
                print(f"[error {event.error_code}] {event.error_message}")
            elif event.is_final_response() and event.text:
                print(event.text)


if __name__ == "__main__":
    asyncio.run(main(" ".join(sys.argv[1:]) or "What is the weather in Oslo and Paris?"))
