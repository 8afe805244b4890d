"""The support desk example (issue 4 'Examples'): the scripted conversation runs offline
through a Runner, and ``python -m examples.support_desk`` (what ``make demo`` runs) exits 0.

The conversation shows a transfer to a child, sticky routing, a transfer to a peer, tools
that write state (``user:`` scope included), a transfer into a review ``LoopAgent`` that ends
by ``exit_loop``, and the root answering again once the loop's agents cannot keep the
conversation.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from examples.support_desk import agent as desk_agent
from examples.support_desk.scripted import (
    APP_NAME,
    USER_ID,
    USER_MESSAGES,
    build_scripted_desk,
    run_conversation,
)

from eventide import Event, InMemorySessionService, LlmAgent, Runner
from eventide.sessions.base_session_service import BaseSessionService
from tests.agents.multi_agent_helpers import Row, rows

ROOT = Path(__file__).resolve().parents[2]

TICKET_1 = {"id": "T-1", "summary": "Refund duplicate payment of INV-1001", "priority": "normal"}
TICKET_2 = {"id": "T-2", "summary": "API returning errors", "priority": "high"}
NOTICE_1 = "We are aware of API errors and are working on a fix."
NOTICE_2 = (
    "We are aware of API errors (ticket T-2) and are working on a fix. Next update by 12:00 UTC."
)

EXPECTED: list[tuple[int, Row]] = [
    (1, ("triage", None, "call", "transfer_to_agent(agent_name=billing)")),
    (1, ("triage", None, "response", "transfer_to_agent -> billing")),
    (1, ("billing", None, "call", "look_up_invoice(invoice_number=1001)")),
    (
        1,
        (
            "billing",
            None,
            "response",
            'look_up_invoice -> {"amount_usd": 120.0, "invoice_id": "INV-1001", '
            '"payments": ["2026-11-02", "2026-11-02"], "status": "paid twice"}',
        ),
    ),
    (
        1,
        (
            "billing",
            None,
            "text",
            "Invoice INV-1001 ($120.00) was indeed paid twice on 2026-11-02. Shall I open a "
            "refund ticket?",
        ),
    ),
    # Turn 2: sticky routing, billing answers directly.
    (
        2,
        (
            "billing",
            None,
            "call",
            "open_ticket(priority=normal, summary=Refund duplicate payment of INV-1001)",
        ),
    ),
    (2, ("billing", None, "response", 'open_ticket -> {"priority": "normal", "ticket_id": "T-1"}')),
    (
        2,
        (
            "billing",
            None,
            "text",
            "Done: ticket T-1 is open; the refund takes 3-5 business days.",
        ),
    ),
    # Turn 3: billing hands over to its peer, tech, which hands over to the review loop.
    (3, ("billing", None, "call", "transfer_to_agent(agent_name=tech)")),
    (3, ("billing", None, "response", "transfer_to_agent -> tech")),
    (3, ("tech", None, "call", "check_service_status(service=api)")),
    (
        3,
        (
            "tech",
            None,
            "response",
            'check_service_status -> {"service": "api", "status": "degraded"}',
        ),
    ),
    (3, ("tech", None, "call", "open_ticket(priority=high, summary=API returning errors)")),
    (3, ("tech", None, "response", 'open_ticket -> {"priority": "high", "ticket_id": "T-2"}')),
    (3, ("tech", None, "call", "transfer_to_agent(agent_name=notice_review)")),
    (3, ("tech", None, "response", "transfer_to_agent -> notice_review")),
    (3, ("drafter", None, "text", NOTICE_1)),
    (3, ("critic", None, "text", "Name the ticket and say when the next update comes.")),
    (3, ("drafter", None, "text", NOTICE_2)),
    (3, ("critic", None, "call", "exit_loop()")),
    (3, ("critic", None, "response", "exit_loop -> escalate")),
    # Turn 4: the loop's agents cannot transfer back, so tech (which handed over to the loop)
    # answers, as in google-adk 2.13; it hands the customer back to triage.
    (4, ("tech", None, "call", "transfer_to_agent(agent_name=triage)")),
    (4, ("tech", None, "response", "transfer_to_agent -> triage")),
    (
        4,
        (
            "triage",
            None,
            "text",
            "You're welcome! Tickets T-1 (refund) and T-2 (API errors) are open; we will keep "
            "you posted.",
        ),
    ),
]


async def _play(service: BaseSessionService) -> tuple[list[tuple[int, Event]], str]:
    root, _ = build_scripted_desk()
    runner = Runner(app_name=APP_NAME, agent=root, session_service=service)
    session = await service.create_session(app_name=APP_NAME, user_id=USER_ID)
    played = [pair async for pair in run_conversation(runner, session.id)]
    return played, session.id


async def test_scripted_conversation_event_sequence() -> None:
    """Issue 4 example: the whole event sequence of the four scripted turns, and the state the
    tools and the loop committed (``user:tickets`` in user scope)."""
    service = InMemorySessionService()
    played, session_id = await _play(service)

    turns = [turn for turn, _ in played]
    assert list(zip(turns, rows(event for _, event in played), strict=True)) == EXPECTED
    session = await service.get_session(app_name=APP_NAME, user_id=USER_ID, session_id=session_id)
    assert session is not None
    assert session.state == {
        "user:tickets": [TICKET_1, TICKET_2],
        "last_ticket": "T-2: API returning errors",
        "notice_draft": NOTICE_2,
    }
    # The log holds each user message followed by that turn's events, nothing else.
    expected_log: list[Row] = []
    for turn in range(1, 5):
        expected_log.append(("user", None, "text", USER_MESSAGES[turn - 1]))
        expected_log += [row for t, row in EXPECTED if t == turn]
    assert rows(session.events) == expected_log


async def test_scripted_models_saw_state_in_their_instructions() -> None:
    """Issue 4 example: the loop's drafter reads the ticket a tool wrote, the critic reads the
    drafter's output_key, and triage's instruction lists the user's tickets."""
    root, models = build_scripted_desk()
    runner = Runner(app_name=APP_NAME, agent=root, session_service=InMemorySessionService())
    session = await runner.session_service.create_session(app_name=APP_NAME, user_id=USER_ID)
    async for _ in run_conversation(runner, session.id):
        pass

    drafter_instruction = models["drafter"].requests[0].config.system_instruction or ""
    assert "ticket T-2: API returning errors" in drafter_instruction
    critic_instruction = models["critic"].requests[1].config.system_instruction or ""
    assert critic_instruction.startswith(f"Review this customer notice: {NOTICE_2}")
    triage_last = models["triage"].requests[-1].config.system_instruction or ""
    assert "'id': 'T-2'" in triage_last
    assert all(m.calls == len(m.responses) for m in models.values())


async def test_scripted_conversation_on_sqlite(tmp_path: Path) -> None:
    """Issue 4 example on the SQLite session store: same events, and the reloaded session
    holds them all (28 = 4 user messages + 24 agent events)."""
    from eventide.sessions.sql_session_service import SqlSessionService

    service = SqlSessionService(f"sqlite+aiosqlite:///{tmp_path / 'desk.db'}")
    try:
        played, session_id = await _play(service)
        reloaded = await service.get_session(
            app_name=APP_NAME, user_id=USER_ID, session_id=session_id
        )
    finally:
        await service.close()
    assert rows(e for _, e in played) == [row for _, row in EXPECTED]
    assert reloaded is not None
    assert len(reloaded.events) == 4 + len(EXPECTED)
    assert rows(e for e in reloaded.events if e.author != "user") == [row for _, row in EXPECTED]
    assert reloaded.state["user:tickets"] == [TICKET_1, TICKET_2]


def test_root_agent_model_comes_from_the_environment() -> None:
    """Issue 4 example: with a provider key set, root_agent uses EVENTIDE_MODEL (else a
    default for that provider); the other agents inherit it."""
    assert desk_agent.configured_model({"EVENTIDE_MODEL": "gpt-4.1"}) == "gpt-4.1"
    assert desk_agent.configured_model({"OPENAI_API_KEY": "k"}) == "gpt-4o-mini"
    assert desk_agent.configured_model({"GOOGLE_API_KEY": "k"}) == "gemini-2.5-flash"
    assert desk_agent.has_provider_key({"ANTHROPIC_API_KEY": "k"})
    assert not desk_agent.has_provider_key({})
    root = desk_agent.root_agent
    assert isinstance(root, LlmAgent) and root.model == desk_agent.configured_model()
    assert [a.name for a in root.walk()] == [
        "triage",
        "billing",
        "tech",
        "notice_review",
        "drafter",
        "critic",
    ]
    assert all(getattr(a, "model", "") == "" for a in root.walk() if a is not root)


@pytest.mark.slow
def test_demo_command_runs_offline_and_exits_zero(tmp_path: Path) -> None:
    """`make demo` runs `python -m examples.support_desk`: it must finish and exit 0 offline
    (no provider key), printing the conversation."""
    env = {
        key: value
        for key, value in os.environ.items()
        if key not in ("GOOGLE_API_KEY", "GEMINI_API_KEY", "OPENAI_API_KEY", "ANTHROPIC_API_KEY")
    }
    env["EVENTIDE_SESSION_DB"] = f"sqlite+aiosqlite:///{tmp_path / 'demo.db'}"
    done = subprocess.run(
        [sys.executable, "-m", "examples.support_desk"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    out = done.stdout
    for line in (
        "[user] Hi, I think I was charged twice for invoice INV-1001.",
        "[triage] -> hands the conversation to billing",
        "[billing] calls look_up_invoice(invoice_number=1001)",
        "[tech] -> hands the conversation to notice_review",
        "[critic] <- exit_loop: the review loop ends",
        "28 events committed",
    ):
        assert line in out, out
