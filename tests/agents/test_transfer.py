"""Agent transfer (issue 4): ``transfer_to_agent`` to a child, the parent and a peer, forbidden
and unknown targets, the declaration's enum of valid names, and sticky routing of the next
turn (``eventide.agents.routing``).

Spec rule exercised throughout ("Events", control-flow signals): an event whose
``actions.transfer_to_agent`` is set passes control to the named agent; the call's event is not
a final response, the target's answer is.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator

import pytest

from eventide import (
    BaseAgent,
    Event,
    InMemoryRunner,
    InvocationContext,
    LlmAgent,
    LlmResponse,
    RunConfig,
    Runner,
    StreamingMode,
    ToolContext,
    types,
)
from eventide.errors import LlmCallsLimitExceededError
from eventide.testing import ScriptedModel, text_response, tool_call_response
from tests.agents.llm_helpers import start, turn
from tests.agents.multi_agent_helpers import (
    declaration,
    new_session,
    request_texts,
    rows,
    run_turn,
    stored_events,
)


def transfer(name: str) -> LlmResponse:
    return tool_call_response(("transfer_to_agent", {"agent_name": name}))


class Desk:
    """root (triage) -> billing, tech; billing -> refunds. One ScriptedModel per agent."""

    def __init__(
        self,
        *,
        billing_disallow_parent: bool = False,
        billing_disallow_peers: bool = False,
    ) -> None:
        self.root_model = ScriptedModel()
        self.billing_model = ScriptedModel()
        self.tech_model = ScriptedModel()
        self.refunds_model = ScriptedModel()
        self.refunds = LlmAgent(
            name="refunds", model=self.refunds_model, description="Issues refunds."
        )
        self.billing = LlmAgent(
            name="billing",
            model=self.billing_model,
            description="Invoices and payments.",
            sub_agents=[self.refunds],
            disallow_transfer_to_parent=billing_disallow_parent,
            disallow_transfer_to_peers=billing_disallow_peers,
        )
        self.tech = LlmAgent(name="tech", model=self.tech_model, description="Outages, bugs.")
        self.root = LlmAgent(
            name="triage",
            model=self.root_model,
            description="Routes requests.",
            sub_agents=[self.billing, self.tech],
        )
        self.runner = InMemoryRunner(self.root, app_name="desk")


async def test_transfer_to_child_runs_child_in_same_invocation() -> None:
    """Issue 4 'transfer to child'; spec: transfer_to_agent passes control to the named agent,
    which answers in the same invocation (the call event is not final, the answer is)."""
    desk = Desk()
    desk.root_model.add(transfer("billing"))
    desk.billing_model.add("Invoice 42 is paid.")
    sid = await new_session(desk.runner)

    events = await run_turn(desk.runner, sid, "Is my invoice paid?")

    assert rows(events) == [
        ("triage", None, "call", "transfer_to_agent(agent_name=billing)"),
        ("triage", None, "response", "transfer_to_agent -> billing"),
        ("billing", None, "text", "Invoice 42 is paid."),
    ]
    assert [e.is_final_response() for e in events] == [False, False, True]
    assert len({e.invocation_id for e in events}) == 1
    stored = await stored_events(desk.runner, sid)
    assert rows(stored)[1:] == rows(events)
    assert stored[0].author == "user"
    # The child's model saw the user's message and the parent's hand-over as context.
    billing_history = request_texts(desk.billing_model.requests[0].contents)
    assert billing_history[0] == "Is my invoice paid?"
    assert any("[triage] called tool `transfer_to_agent`" in t for t in billing_history)


async def test_transfer_declaration_lists_valid_names_as_enum() -> None:
    """Issue 4: the valid targets (sub-agents, parent, peers) are given to the model as an enum
    in the `transfer_to_agent` declaration, and listed in the instruction."""
    desk = Desk()
    desk.root_model.add(transfer("billing"))
    desk.billing_model.add("ok")
    sid = await new_session(desk.runner)
    await run_turn(desk.runner, sid, "hi")

    root_decl = declaration(desk.root_model.requests[0].config, "transfer_to_agent")
    billing_request = desk.billing_model.requests[0]
    billing_decl = declaration(billing_request.config, "transfer_to_agent")
    assert root_decl.parameters_json_schema is not None
    assert billing_decl.parameters_json_schema is not None
    assert root_decl.parameters_json_schema["properties"]["agent_name"]["enum"] == [
        "billing",
        "tech",
    ]
    # billing: its child, its parent, its peer.
    assert billing_decl.parameters_json_schema["properties"]["agent_name"]["enum"] == [
        "refunds",
        "triage",
        "tech",
    ]
    instruction = billing_request.config.system_instruction or ""
    for line in ("- `refunds`: Issues refunds.", "- `triage`: Routes requests.", "- `tech`:"):
        assert line in instruction


async def test_forbidden_targets_are_left_out_of_the_enum() -> None:
    """Issue 4: disallow_transfer_to_parent / disallow_transfer_to_peers remove the parent /
    the peers from the agents offered."""
    desk = Desk(billing_disallow_parent=True, billing_disallow_peers=True)
    desk.root_model.add(transfer("billing"))
    desk.billing_model.add("ok")
    sid = await new_session(desk.runner)
    await run_turn(desk.runner, sid, "hi")

    decl = declaration(desk.billing_model.requests[0].config, "transfer_to_agent")
    assert decl.parameters_json_schema is not None
    assert decl.parameters_json_schema["properties"]["agent_name"]["enum"] == ["refunds"]


async def test_forbidden_transfer_to_parent_is_an_error_response_and_the_turn_goes_on() -> None:
    """Issue 4 'forbidden transfers': a transfer to a parent the agent may not return to goes
    back to the model as an error response; no crash, the agent answers itself."""
    desk = Desk(billing_disallow_parent=True)
    desk.root_model.add(transfer("billing"))
    desk.billing_model.add(transfer("triage"), "I will handle it myself.")
    sid = await new_session(desk.runner)

    events = await run_turn(desk.runner, sid, "hi")

    assert rows(events) == [
        ("triage", None, "call", "transfer_to_agent(agent_name=billing)"),
        ("triage", None, "response", "transfer_to_agent -> billing"),
        ("billing", None, "call", "transfer_to_agent(agent_name=triage)"),
        ("billing", None, "response", "transfer_to_agent -> error"),
        ("billing", None, "text", "I will handle it myself."),
    ]
    error = (events[3].get_function_responses()[0].response or {})["error"]
    assert error == (
        "Cannot transfer to 'triage': you may not hand over to it. The agents you may "
        "transfer to are: refunds, tech. Pick one of those or answer yourself."
    )
    assert events[3].actions.transfer_to_agent is None
    assert desk.root_model.calls == 1  # the parent never ran again


async def test_forbidden_transfer_to_peer_is_an_error_response() -> None:
    """Issue 4 'forbidden transfers': disallow_transfer_to_peers turns a transfer to a
    sibling into an error response the model reads."""
    desk = Desk(billing_disallow_peers=True)
    desk.root_model.add(transfer("billing"))
    desk.billing_model.add(transfer("tech"), "Sorry, billing only.")
    sid = await new_session(desk.runner)

    events = await run_turn(desk.runner, sid, "hi")

    assert rows(events)[2:] == [
        ("billing", None, "call", "transfer_to_agent(agent_name=tech)"),
        ("billing", None, "response", "transfer_to_agent -> error"),
        ("billing", None, "text", "Sorry, billing only."),
    ]
    assert desk.tech_model.calls == 0
    # The model's second request carries its call and the error answer.
    last = desk.billing_model.requests[1].contents[-1]
    assert last.parts is not None and last.parts[0].function_response is not None
    assert "error" in (last.parts[0].function_response.response or {})


async def test_unknown_target_is_an_error_response() -> None:
    """Issue 4: an unknown target name goes back to the model as an error, never a crash."""
    desk = Desk()
    desk.root_model.add(transfer("sales"), "Let me help you myself.")
    sid = await new_session(desk.runner)

    events = await run_turn(desk.runner, sid, "hi")

    assert rows(events) == [
        ("triage", None, "call", "transfer_to_agent(agent_name=sales)"),
        ("triage", None, "response", "transfer_to_agent -> error"),
        ("triage", None, "text", "Let me help you myself."),
    ]
    error = (events[1].get_function_responses()[0].response or {})["error"]
    assert error == (
        "Cannot transfer to 'sales': there is no agent by that name. The agents you may "
        "transfer to are: billing, tech. Pick one of those or answer yourself."
    )


async def test_transfer_to_parent() -> None:
    """Issue 4 'transfer to parent': the child hands back to its parent, which answers."""
    desk = Desk()
    desk.root_model.add(transfer("billing"), "Triage here: what else do you need?")
    desk.billing_model.add("Invoice 42 is paid.", transfer("triage"))
    sid = await new_session(desk.runner)
    await run_turn(desk.runner, sid, "invoice?")

    events = await run_turn(desk.runner, sid, "something else entirely")

    assert rows(events) == [
        ("billing", None, "call", "transfer_to_agent(agent_name=triage)"),
        ("billing", None, "response", "transfer_to_agent -> triage"),
        ("triage", None, "text", "Triage here: what else do you need?"),
    ]


async def test_transfer_to_peer() -> None:
    """Issue 4 'transfer to peer': a child hands the conversation to its sibling."""
    desk = Desk()
    desk.root_model.add(transfer("billing"))
    desk.billing_model.add(transfer("tech"))
    desk.tech_model.add("The API is up.")
    sid = await new_session(desk.runner)

    events = await run_turn(desk.runner, sid, "is the api down? also my invoice")

    assert rows(events) == [
        ("triage", None, "call", "transfer_to_agent(agent_name=billing)"),
        ("triage", None, "response", "transfer_to_agent -> billing"),
        ("billing", None, "call", "transfer_to_agent(agent_name=tech)"),
        ("billing", None, "response", "transfer_to_agent -> tech"),
        ("tech", None, "text", "The API is up."),
    ]


async def test_transfer_to_grandchild_and_back_up_two_levels() -> None:
    """Issue 4 'sub-agent trees of depth three': triage -> billing -> refunds, then refunds
    hands back to billing, which answers."""
    desk = Desk()
    desk.root_model.add(transfer("billing"))
    desk.billing_model.add(transfer("refunds"), "Billing again: refund noted.")
    desk.refunds_model.add(transfer("billing"))
    sid = await new_session(desk.runner)

    events = await run_turn(desk.runner, sid, "refund please")

    assert [(a, k, d) for a, _, k, d in rows(events)] == [
        ("triage", "call", "transfer_to_agent(agent_name=billing)"),
        ("triage", "response", "transfer_to_agent -> billing"),
        ("billing", "call", "transfer_to_agent(agent_name=refunds)"),
        ("billing", "response", "transfer_to_agent -> refunds"),
        ("refunds", "call", "transfer_to_agent(agent_name=billing)"),
        ("refunds", "response", "transfer_to_agent -> billing"),
        ("billing", "text", "Billing again: refund noted."),
    ]


async def test_round_trip_parent_child_parent_peer_over_turns() -> None:
    """Issue 4 round trips parent -> child -> parent -> peer, with correct authors on every
    event and sticky routing between turns (the last answering agent keeps the conversation)."""
    desk = Desk()
    desk.root_model.add(transfer("billing"), transfer("tech"))
    desk.billing_model.add("Invoice 42 is paid.", transfer("triage"))
    desk.tech_model.add("The API is up.", "Restarted your VM.")
    sid = await new_session(desk.runner)

    turn1 = await run_turn(desk.runner, sid, "invoice?")
    turn2 = await run_turn(desk.runner, sid, "and is the API down?")
    turn3 = await run_turn(desk.runner, sid, "please restart my VM")

    assert rows(turn1) == [
        ("triage", None, "call", "transfer_to_agent(agent_name=billing)"),
        ("triage", None, "response", "transfer_to_agent -> billing"),
        ("billing", None, "text", "Invoice 42 is paid."),
    ]
    assert rows(turn2) == [
        ("billing", None, "call", "transfer_to_agent(agent_name=triage)"),
        ("billing", None, "response", "transfer_to_agent -> triage"),
        ("triage", None, "call", "transfer_to_agent(agent_name=tech)"),
        ("triage", None, "response", "transfer_to_agent -> tech"),
        ("tech", None, "text", "The API is up."),
    ]
    # Sticky: tech answered last, so tech answers turn 3 directly.
    assert rows(turn3) == [("tech", None, "text", "Restarted your VM.")]
    assert desk.root_model.calls == 2 and desk.billing_model.calls == 2
    stored = await stored_events(desk.runner, sid)
    assert [e.author for e in stored] == [
        "user",
        *(e.author for e in turn1),
        "user",
        *(e.author for e in turn2),
        "user",
        "tech",
    ]
    # Tech's last request sees its own earlier answer as model turn, others as context.
    contents = desk.tech_model.requests[1].contents
    assert contents[-1].role == "user" and contents[-1].parts is not None
    assert contents[-1].parts[0].text == "please restart my VM"
    own = [c for c in contents if c.role == "model"]
    assert [c.parts[0].text for c in own if c.parts] == ["The API is up."]


async def test_sticky_routing_returns_to_root_when_agent_cannot_transfer_back() -> None:
    """Routing rule (agents/routing.py): the last answering agent keeps the conversation only
    if it can transfer back up to the root; with disallow_transfer_to_parent the root answers."""
    desk = Desk(billing_disallow_parent=True)
    desk.root_model.add(transfer("billing"), "Triage: hello again.")
    desk.billing_model.add("Invoice 42 is paid.")
    sid = await new_session(desk.runner)
    await run_turn(desk.runner, sid, "invoice?")

    events = await run_turn(desk.runner, sid, "thanks")

    assert rows(events) == [("triage", None, "text", "Triage: hello again.")]
    assert desk.billing_model.calls == 1


async def test_sticky_routing_two_levels_down() -> None:
    """Routing rule: a grandchild that can transfer back through every ancestor keeps the
    conversation on the next turn."""
    desk = Desk()
    desk.root_model.add(transfer("billing"))
    desk.billing_model.add(transfer("refunds"))
    desk.refunds_model.add("Refund started.", "Refund done.")
    sid = await new_session(desk.runner)
    await run_turn(desk.runner, sid, "refund")

    events = await run_turn(desk.runner, sid, "status?")

    assert rows(events) == [("refunds", None, "text", "Refund done.")]


async def test_transfer_and_text_in_one_response() -> None:
    """Spec: a model response with text and a transfer call is a call event (not final); the
    target still answers."""
    desk = Desk()
    desk.root_model.add(
        tool_call_response(("transfer_to_agent", {"agent_name": "tech"}), text="One moment.")
    )
    desk.tech_model.add(text_response("Tech here."))
    sid = await new_session(desk.runner)

    events = await run_turn(desk.runner, sid, "bug")

    assert rows(events) == [
        ("triage", None, "call", "transfer_to_agent(agent_name=tech)"),
        ("triage", None, "response", "transfer_to_agent -> tech"),
        ("tech", None, "text", "Tech here."),
    ]
    assert not events[0].is_final_response()


async def test_sticky_routing_skips_authors_no_longer_in_the_tree() -> None:
    """Routing rule: an author that is not in the current tree (an agent since removed) is
    skipped; the latest known author that can transfer back keeps the conversation."""
    desk = Desk()
    desk.root_model.add(transfer("billing"))
    desk.billing_model.add("Invoice 42 is paid.", "Billing again.")
    sid = await new_session(desk.runner)
    await run_turn(desk.runner, sid, "invoice?")
    # Another version of the app, whose only agent is `legacy_bot`, answers one turn.
    legacy = Runner(
        app_name="desk",
        agent=LlmAgent(name="legacy_bot", model=ScriptedModel(responses=["Legacy answer."])),
        session_service=desk.runner.session_service,
    )
    assert rows(await run_turn(legacy, sid, "hello?")) == [
        ("legacy_bot", None, "text", "Legacy answer.")
    ]

    events = await run_turn(desk.runner, sid, "and my other invoice?")

    assert rows(events) == [("billing", None, "text", "Billing again.")]
    assert desk.root_model.calls == 1


async def test_transfer_with_streaming_forwards_target_chunks_and_commits_only_finals() -> None:
    """Spec 'streaming with partial': after a transfer, the target's partial chunks are
    forwarded (authored by the target) and never committed; its final answer is."""
    desk = Desk()
    desk.billing_model.stream_chunk_size = 6
    desk.root_model.add(transfer("billing"))
    desk.billing_model.add("Invoice 42 is paid.")
    sid = await new_session(desk.runner)

    events = [
        event
        async for event in desk.runner.run_async(
            user_id="u",
            session_id=sid,
            new_message=types.Content(role="user", parts=[types.Part(text="invoice?")]),
            run_config=RunConfig(streaming_mode=StreamingMode.SSE),
        )
    ]

    assert rows(events) == [
        ("triage", None, "call", "transfer_to_agent(agent_name=billing)"),
        ("triage", None, "response", "transfer_to_agent -> billing"),
        ("billing", None, "partial", "Invoic"),
        ("billing", None, "partial", "e 42 i"),
        ("billing", None, "partial", "s paid"),
        ("billing", None, "partial", "."),
        ("billing", None, "text", "Invoice 42 is paid."),
    ]
    stored = await stored_events(desk.runner, sid)
    assert rows(stored)[1:] == [r for r in rows(events) if r[2] != "partial"]


async def test_transfer_ping_pong_stops_at_max_llm_calls() -> None:
    """A model that keeps handing the conversation back and forth cannot run forever:
    RunConfig.max_llm_calls ends the invocation with LlmCallsLimitExceededError, and every
    event committed before stays in the session."""
    desk = Desk()
    desk.root_model.add(*[transfer("billing")] * 5)
    desk.billing_model.add(*[transfer("triage")] * 5)
    sid = await new_session(desk.runner)
    seen: list[Event] = []

    with pytest.raises(LlmCallsLimitExceededError):
        async for event in desk.runner.run_async(
            user_id="u",
            session_id=sid,
            new_message=types.Content(role="user", parts=[types.Part(text="hi")]),
            run_config=RunConfig(max_llm_calls=4),
        ):
            seen.append(event)

    assert [(a, d) for a, _, _, d in rows(seen)] == [
        ("triage", "transfer_to_agent(agent_name=billing)"),
        ("triage", "transfer_to_agent -> billing"),
        ("billing", "transfer_to_agent(agent_name=triage)"),
        ("billing", "transfer_to_agent -> triage"),
        ("triage", "transfer_to_agent(agent_name=billing)"),
        ("triage", "transfer_to_agent -> billing"),
        ("billing", "transfer_to_agent(agent_name=triage)"),
        ("billing", "transfer_to_agent -> triage"),
    ]
    assert rows(await stored_events(desk.runner, sid))[1:] == rows(seen)


async def test_transfer_to_a_grandchild_directly_is_refused() -> None:
    """Issue 4 'forbidden transfers': an agent may hand over only to its sub-agents, parent
    and peers; a deeper agent of the tree (triage -> refunds, skipping billing) gets an error
    response, even though the name exists."""
    desk = Desk()
    desk.root_model.add(transfer("refunds"), transfer("billing"))
    desk.billing_model.add("Billing here.")
    sid = await new_session(desk.runner)

    events = await run_turn(desk.runner, sid, "refund")

    assert rows(events) == [
        ("triage", None, "call", "transfer_to_agent(agent_name=refunds)"),
        ("triage", None, "response", "transfer_to_agent -> error"),
        ("triage", None, "call", "transfer_to_agent(agent_name=billing)"),
        ("triage", None, "response", "transfer_to_agent -> billing"),
        ("billing", None, "text", "Billing here."),
    ]
    assert desk.refunds_model.calls == 0


class _Clock(BaseAgent):
    """A custom (non-LLM) agent: answers with a fixed text."""

    async def _run_async_impl(self, ctx: InvocationContext) -> AsyncGenerator[Event, None]:
        yield Event(
            invocation_id=ctx.invocation_id,
            author=self.name,
            content=types.Content(role="model", parts=[types.Part(text="It is noon.")]),
        )


async def test_sticky_routing_never_keeps_a_custom_agent() -> None:
    """Routing rule: a custom BaseAgent cannot transfer back (no model to decide it), so after
    it answered, the next turn goes to the root."""
    root_model = ScriptedModel(responses=[transfer("clock"), "Triage again."])
    root = LlmAgent(name="triage", model=root_model, sub_agents=[_Clock(name="clock")])
    runner = InMemoryRunner(root, app_name="desk")
    sid = await new_session(runner)

    turn1 = await run_turn(runner, sid, "time?")
    turn2 = await run_turn(runner, sid, "thanks")

    assert rows(turn1) == [
        ("triage", None, "call", "transfer_to_agent(agent_name=clock)"),
        ("triage", None, "response", "transfer_to_agent -> clock"),
        ("clock", None, "text", "It is noon."),
    ]
    assert rows(turn2) == [("triage", None, "text", "Triage again.")]


async def test_transfer_set_by_a_tool_to_an_unknown_agent_raises() -> None:
    """Issue 12 (errors have one home; spec "Events", control-flow signals): a tool that sets
    ``actions.transfer_to_agent`` to a name no agent of the tree has ends the invocation with
    AgentNotFoundError naming it, and what was committed before stays committed."""
    from eventide.errors import AgentNotFoundError

    def hand_over(tool_context: ToolContext) -> str:
        """Hand the conversation over."""
        tool_context.actions.transfer_to_agent = "nowhere"
        return "handing over"

    model = ScriptedModel(responses=[tool_call_response(("hand_over", {}))])
    runner = InMemoryRunner(LlmAgent(name="solo", model=model, tools=[hand_over]), app_name="app")
    sid = await new_session(runner)
    with pytest.raises(AgentNotFoundError, match="'nowhere'") as info:
        await run_turn(runner, sid, "hi")
    assert info.value.agent_name == "nowhere"
    assert [e.author for e in await stored_events(runner, sid)] == ["user", "solo", "solo"]


async def test_an_agents_own_transfer_tool_stands_in_for_the_flows() -> None:
    """google-adk 2.13: an agent that has its own ``transfer_to_agent`` tool gets that one
    called (and declared once); its ``actions.transfer_to_agent`` hands over as the flow's
    tool does. Before, Eventide declared the name twice and ran its own tool instead."""
    called: list[str] = []

    async def transfer_to_agent(agent_name: str, tool_context: ToolContext) -> None:
        """Hand the conversation to another agent."""
        called.append(agent_name)
        tool_context.actions.transfer_to_agent = agent_name

    root_model = ScriptedModel(
        responses=[tool_call_response(("transfer_to_agent", {"agent_name": "helper"}))]
    )
    helper = LlmAgent(name="helper", model=ScriptedModel(responses=["helper here"]))
    root = LlmAgent(name="root", model=root_model, tools=[transfer_to_agent], sub_agents=[helper])
    runner, sid = await start(root)
    events = await turn(runner, sid)
    assert called == ["helper"]
    declared = [
        d.name
        for tool in root_model.requests[0].config.tools or ()
        for d in tool.function_declarations or ()
    ]
    assert declared.count("transfer_to_agent") == 1
    assert events[1].actions.transfer_to_agent == "helper"
    assert (events[-1].author, events[-1].text) == ("helper", "helper here")
