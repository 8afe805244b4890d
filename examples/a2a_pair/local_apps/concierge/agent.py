"""The local half of the A2A example: a concierge that hands country questions to the
remote ``trivia`` agent over A2A.

``TRIVIA_A2A_URL`` is where the trivia agent is served (default:
``http://localhost:8001/a2a/trivia``, what ``eventide api-server examples/a2a_pair/
remote_apps --a2a --port 8001`` serves).
"""

from __future__ import annotations

import os

from eventide import LlmAgent
from eventide.a2a import RemoteA2aAgent

trivia = RemoteA2aAgent(
    name="trivia",
    description="Answers trivia about countries: their capitals and populations.",
    agent_card=os.environ.get("TRIVIA_A2A_URL", "http://localhost:8001/a2a/trivia"),
    timeout=60,
)

root_agent = LlmAgent(
    name="concierge",
    description="Greets the user and finds someone who can answer.",
    model=os.environ.get("EVENTIDE_MODEL", "gemini-2.5-flash"),
    instruction="Greet the user. Hand questions about countries to the trivia agent.",
    sub_agents=[trivia],
)
