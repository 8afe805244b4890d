"""The support desk's agents and tools; ``root_agent`` is what the CLI and server load.

Tree::

    triage (LlmAgent)
    ├── billing (LlmAgent)        tools: look_up_invoice, open_ticket
    └── tech (LlmAgent)           tools: check_service_status, open_ticket
        └── notice_review (LoopAgent, at most 3 rounds)
            ├── drafter (LlmAgent)   writes ``notice_draft``
            └── critic (LlmAgent)    tools: exit_loop

Only ``triage`` names a model; the others inherit it. It is ``EVENTIDE_MODEL`` when set,
else a default for the first provider key found (``GOOGLE_API_KEY``/``GEMINI_API_KEY``,
``OPENAI_API_KEY``, ``ANTHROPIC_API_KEY``), else ``gemini-2.5-flash`` (which ``eventide run``
replaces with its offline demo model when no key is set). ``build_root_agent(models)`` gives
each agent its own model instead (the scripted demo and the tests use one ``ScriptedModel``
per agent).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from eventide import LlmAgent, LoopAgent, ToolContext, exit_loop
from eventide.models.base_llm import BaseLlm

__all__ = [
    "build_root_agent",
    "check_service_status",
    "configured_model",
    "has_provider_key",
    "look_up_invoice",
    "open_ticket",
    "root_agent",
]

DEFAULT_MODEL = "gemini-2.5-flash"
_DEFAULT_BY_KEY = (
    (("GOOGLE_API_KEY", "GEMINI_API_KEY"), "gemini-2.5-flash"),
    (("OPENAI_API_KEY",), "gpt-4o-mini"),
    (("ANTHROPIC_API_KEY",), "claude-sonnet-4-5"),
)

# A tiny stand-in for the billing system and the status page.
_INVOICES: dict[str, dict[str, Any]] = {
    "INV-1001": {
        "amount_usd": 120.0,
        "status": "paid twice",
        "payments": ["2026-11-02", "2026-11-02"],
    },
    "INV-1002": {"amount_usd": 45.5, "status": "open", "payments": []},
}
_SERVICES: dict[str, str] = {"api": "degraded", "dashboard": "operational", "email": "operational"}


def look_up_invoice(invoice_number: int) -> dict[str, Any]:
    """Look up an invoice by its number.

    Args:
        invoice_number: the digits of the invoice id, e.g. 1001 for "INV-1001".
    """
    # abs(): "INV-1001" read literally gives -1001; invoice numbers are never negative.
    invoice_id = f"INV-{abs(invoice_number)}"
    invoice = _INVOICES.get(invoice_id)
    if invoice is None:
        return {"error": f"No invoice {invoice_id}. Ask the customer to check the number."}
    return {"invoice_id": invoice_id, **invoice}


def check_service_status(service: str) -> dict[str, Any]:
    """Check whether one of our services is working.

    Args:
        service: one of "api", "dashboard", "email".
    """
    status = _SERVICES.get(service.strip().lower())
    if status is None:
        return {"error": f"Unknown service {service!r}; known: {', '.join(sorted(_SERVICES))}."}
    return {"service": service, "status": status}


def open_ticket(summary: str, priority: str, tool_context: ToolContext) -> dict[str, Any]:
    """Open a support ticket for the customer.

    Args:
        summary: one line describing the problem.
        priority: "low", "normal" or "high".
    """
    # Tickets live in user state, so they follow the customer across sessions.
    tickets = list(tool_context.state.get("user:tickets", []))
    ticket_id = f"T-{len(tickets) + 1}"
    tickets.append({"id": ticket_id, "summary": summary, "priority": priority})
    tool_context.state["user:tickets"] = tickets
    tool_context.state["last_ticket"] = f"{ticket_id}: {summary}"
    return {"ticket_id": ticket_id, "priority": priority}


def configured_model(env: Mapping[str, str] | None = None) -> str:
    """The model name triage uses: ``EVENTIDE_MODEL``, else one for the provider key set."""
    env = os.environ if env is None else env
    if env.get("EVENTIDE_MODEL"):
        return env["EVENTIDE_MODEL"]
    for keys, name in _DEFAULT_BY_KEY:
        if any(env.get(key) for key in keys):
            return name
    return DEFAULT_MODEL


def has_provider_key(env: Mapping[str, str] | None = None) -> bool:
    """Whether a real model can be reached (a provider key or an OpenAI-compatible URL)."""
    env = os.environ if env is None else env
    keys = [key for keys, _ in _DEFAULT_BY_KEY for key in keys] + ["OPENAI_BASE_URL"]
    return any(env.get(key) for key in keys)


def build_root_agent(models: Mapping[str, str | BaseLlm] | None = None) -> LlmAgent:
    """Build the desk. ``models`` maps agent names to a model (name or ``BaseLlm``); agents
    not in it inherit triage's model, and triage's defaults to :func:`configured_model`."""
    models = dict(models or {})
    models.setdefault("triage", configured_model())

    def model(name: str) -> str | BaseLlm:
        return models.get(name, "")

    notice_review = LoopAgent(
        name="notice_review",
        description="Writes and reviews a customer-facing incident notice.",
        max_iterations=3,
        sub_agents=[
            LlmAgent(
                name="drafter",
                model=model("drafter"),
                instruction=(
                    "Write a short, plain notice for the customer about the incident in "
                    "ticket {last_ticket?}. If there is reviewer feedback in the "
                    "conversation, apply it. Reply with the notice only."
                ),
                output_key="notice_draft",
            ),
            LlmAgent(
                name="critic",
                model=model("critic"),
                instruction=(
                    "Review this customer notice: {notice_draft}\n"
                    "It must name the ticket and give a next update time. If it does, call "
                    "exit_loop. Otherwise reply with one sentence of feedback."
                ),
                tools=[exit_loop],
            ),
        ],
    )
    billing = LlmAgent(
        name="billing",
        model=model("billing"),
        description="Invoices, payments, double charges and refunds.",
        instruction=(
            "You handle billing. Look invoices up before answering. Open a ticket (priority "
            "normal) when a refund is needed and the customer agrees."
        ),
        tools=[look_up_invoice, open_ticket],
    )
    tech = LlmAgent(
        name="tech",
        model=model("tech"),
        description="Outages, errors and the status of our services.",
        instruction=(
            "You handle technical problems. Check the service status; open a ticket (priority "
            "high) for an outage, then hand over to notice_review for a customer notice."
        ),
        tools=[check_service_status, open_ticket],
        sub_agents=[notice_review],
    )
    return LlmAgent(
        name="triage",
        model=model("triage"),
        description="Greets the customer and routes the request.",
        instruction=(
            "You are the front desk of a software company. Send billing questions to billing "
            "and technical problems to tech. Open tickets so far: {user:tickets?}"
        ),
        sub_agents=[billing, tech],
    )


root_agent = build_root_agent()
