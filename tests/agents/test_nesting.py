"""Nesting (issue 4): workflows inside workflows, LLM agents inside workflows, agents reached
by transfer that are workflows, ``AgentTool`` wrapping a ``SequentialAgent``, and trees of
depth three or more, each with correct authors, branches and state."""

from __future__ import annotations

import asyncio

from eventide import (
    AgentTool,
    CallbackContext,
    InMemoryRunner,
    LlmAgent,
    LoopAgent,
    ParallelAgent,
    SequentialAgent,
    exit_loop,
)
from eventide.testing import ScriptedModel, tool_call_response
from tests.agents.multi_agent_helpers import (
    new_session,
    request_texts,
    rows,
    run_turn,
    stored_events,
)


def transfer(name: str) -> object:
    return tool_call_response(("transfer_to_agent", {"agent_name": name}))


async def test_three_level_workflow_tree() -> None:
    """Issue 4 'three-level nesting': Sequential > Parallel > Sequential > LlmAgent, then a
    Loop of LlmAgents. Authors are the LLM agents, branches name the fan-out path, a step in a
    branch reads its branch-mate's output_key, and the loop after the fan-out reads every
    branch's committed state."""
    collector = ScriptedModel(responses=["3 outages"])
    summarizer = ScriptedModel(responses=["Mostly stable."])
    linter = ScriptedModel(responses=["no typos"])
    editor = ScriptedModel(responses=["Stable week.", "Stable week, 3 outages."])
    critic = ScriptedModel(
        responses=["Mention the outages.", tool_call_response(("exit_loop", {}))]
    )
    root = SequentialAgent(
        name="desk",
        sub_agents=[
            ParallelAgent(
                name="research",
                sub_agents=[
                    SequentialAgent(
                        name="pipe",
                        sub_agents=[
                            LlmAgent(name="collector", model=collector, output_key="facts"),
                            LlmAgent(
                                name="summarizer",
                                model=summarizer,
                                instruction="Summarize: {facts}",
                                output_key="summary",
                            ),
                        ],
                    ),
                    LlmAgent(name="linter", model=linter, output_key="lint"),
                ],
            ),
            LoopAgent(
                name="polish",
                max_iterations=3,
                sub_agents=[
                    LlmAgent(
                        name="editor",
                        model=editor,
                        instruction="Edit '{summary}' ({lint}).",
                        output_key="final",
                    ),
                    LlmAgent(
                        name="critic",
                        model=critic,
                        instruction="Review '{final}'.",
                        tools=[exit_loop],
                    ),
                ],
            ),
        ],
    )
    runner = InMemoryRunner(root, app_name="nest")
    sid = await new_session(runner)

    events = await run_turn(runner, sid, "weekly report")

    fan_out, rest = rows(events[:3]), rows(events[3:])
    # Inside the fan-out only the order within a branch is fixed.
    assert [r for r in fan_out if r[1] == "research.pipe"] == [
        ("collector", "research.pipe", "text", "3 outages"),
        ("summarizer", "research.pipe", "text", "Mostly stable."),
    ]
    assert [r for r in fan_out if r[1] == "research.linter"] == [
        ("linter", "research.linter", "text", "no typos"),
    ]
    assert rest == [
        ("editor", None, "text", "Stable week."),
        ("critic", None, "text", "Mention the outages."),
        ("editor", None, "text", "Stable week, 3 outages."),
        ("critic", None, "call", "exit_loop()"),
        ("critic", None, "response", "exit_loop -> escalate"),
    ]
    assert summarizer.requests[0].config.system_instruction == "Summarize: 3 outages"
    assert "[collector] said: 3 outages" in request_texts(summarizer.requests[0].contents)
    assert request_texts(linter.requests[0].contents) == ["weekly report"]
    assert editor.requests[0].config.system_instruction == "Edit 'Mostly stable.' (no typos)."
    assert critic.requests[1].config.system_instruction == "Review 'Stable week, 3 outages.'."
    # Outside the fan-out, the branches' work is in the history (as other agents' context).
    editor_history = request_texts(editor.requests[0].contents)
    assert editor_history[0] == "weekly report"
    for said in (
        "[collector] said: 3 outages",
        "[summarizer] said: Mostly stable.",
        "[linter] said: no typos",
    ):
        assert said in editor_history
    session = await runner.session_service.get_session(app_name="nest", user_id="u", session_id=sid)
    assert session is not None
    assert session.state == {
        "facts": "3 outages",
        "summary": "Mostly stable.",
        "lint": "no typos",
        "final": "Stable week, 3 outages.",
    }
    assert rows(session.events[1:]) == rows(events)


async def test_transfer_to_a_workflow_sub_agent_then_root_answers_next_turn() -> None:
    """Issue 4 nesting + routing rule: an LlmAgent transfers to a SequentialAgent sub-agent,
    whose steps run in the same invocation; the steps cannot transfer back, so the next turn
    goes to the root."""
    root_model = ScriptedModel(responses=[transfer("onboarding"), "Root again."])
    step1 = ScriptedModel(responses=["Account created."])
    step2 = ScriptedModel(responses=["Welcome mail sent."])
    root = LlmAgent(
        name="triage",
        model=root_model,
        sub_agents=[
            SequentialAgent(
                name="onboarding",
                description="Creates an account and sends a welcome mail.",
                sub_agents=[
                    LlmAgent(name="create_account", model=step1, output_key="account"),
                    LlmAgent(name="welcome", model=step2),
                ],
            )
        ],
    )
    runner = InMemoryRunner(root, app_name="nest")
    sid = await new_session(runner)

    turn1 = await run_turn(runner, sid, "sign me up")
    turn2 = await run_turn(runner, sid, "thanks")

    assert rows(turn1) == [
        ("triage", None, "call", "transfer_to_agent(agent_name=onboarding)"),
        ("triage", None, "response", "transfer_to_agent -> onboarding"),
        ("create_account", None, "text", "Account created."),
        ("welcome", None, "text", "Welcome mail sent."),
    ]
    assert rows(turn2) == [("triage", None, "text", "Root again.")]
    # Steps of a workflow are not offered transfers: their parent decides the order.
    assert step1.requests[0].config.tools is None


async def test_llm_agent_in_a_sequence_transfers_to_its_child_then_the_sequence_goes_on() -> None:
    """Issue 4 nesting, depth three: Sequential > LlmAgent > LlmAgent child. The step hands
    its turn to its child, and the sequence then runs its next step."""
    router = ScriptedModel(responses=[transfer("specialist")])
    specialist = ScriptedModel(responses=["Specialist answer."])
    closer = ScriptedModel(responses=["Closing note."])
    root = SequentialAgent(
        name="flow",
        sub_agents=[
            LlmAgent(
                name="router",
                model=router,
                sub_agents=[LlmAgent(name="specialist", model=specialist, output_key="answer")],
            ),
            LlmAgent(name="closer", model=closer, instruction="Close on: {answer}"),
        ],
    )
    runner = InMemoryRunner(root, app_name="nest")
    sid = await new_session(runner)

    events = await run_turn(runner, sid, "question")

    assert rows(events) == [
        ("router", None, "call", "transfer_to_agent(agent_name=specialist)"),
        ("router", None, "response", "transfer_to_agent -> specialist"),
        ("specialist", None, "text", "Specialist answer."),
        ("closer", None, "text", "Closing note."),
    ]
    assert closer.requests[0].config.system_instruction == "Close on: Specialist answer."


async def test_agent_tool_wrapping_a_sequential_agent() -> None:
    """Issue 4 'AgentTool wrapping a SequentialAgent': the pipeline runs in a child session
    seeded with the caller's state; its state changes are forwarded into the tool's response
    event (committed in the caller's session); the tool returns the final step's text."""
    finder = ScriptedModel(responses=["found: 2 invoices"])
    writer = ScriptedModel(responses=["Report: 2 invoices overdue."])
    boss = ScriptedModel(
        responses=[
            tool_call_response(("research", {"request": "overdue invoices for {customer}"})),
            "Here is your report.",
        ]
    )
    pipeline = SequentialAgent(
        name="research",
        description="Finds facts and writes a report.",
        sub_agents=[
            LlmAgent(
                name="finder", model=finder, instruction="Customer {customer}.", output_key="found"
            ),
            LlmAgent(
                name="writer", model=writer, instruction="Write up: {found}", output_key="report"
            ),
        ],
    )
    root = LlmAgent(name="boss", model=boss, tools=[AgentTool(pipeline)])
    runner = InMemoryRunner(root, app_name="nest")
    sid = await new_session(runner, customer="ACME")

    events = await run_turn(runner, sid, "what is overdue?")

    assert rows(events) == [
        ("boss", None, "call", "research(request=overdue invoices for {customer})"),
        ("boss", None, "response", 'research -> "Report: 2 invoices overdue."'),
        ("boss", None, "text", "Here is your report."),
    ]
    assert events[1].actions.state_delta == {
        "found": "found: 2 invoices",
        "report": "Report: 2 invoices overdue.",
    }
    # The child session started from the caller's state.
    assert finder.requests[0].config.system_instruction == "Customer ACME."
    assert writer.requests[0].config.system_instruction == "Write up: found: 2 invoices"
    session = await runner.session_service.get_session(app_name="nest", user_id="u", session_id=sid)
    assert session is not None
    assert session.state == {
        "customer": "ACME",
        "found": "found: 2 invoices",
        "report": "Report: 2 invoices overdue.",
    }
    # Only the caller's events are in the caller's session.
    assert {e.author for e in await stored_events(runner, sid)} == {"user", "boss"}


async def test_parallel_of_loops_and_sequences() -> None:
    """Issue 4 nesting: a ParallelAgent whose branches are a LoopAgent and a SequentialAgent.
    The exit_loop in the loop branch ends that loop only (the loop consumed the escalation);
    the sibling branch still finishes; every event carries its branch path."""
    looper = ScriptedModel(responses=["try 1", tool_call_response(("exit_loop", {}))])
    step_a = ScriptedModel(responses=["step a"])
    step_b = ScriptedModel(responses=["step b"])
    gate = asyncio.Event()

    async def hold_until_loop_ended(
        callback_context: CallbackContext,
    ) -> None:
        # step_b starts only once the loop branch has escalated: it must not be cancelled.
        await gate.wait()

    def open_gate(callback_context: CallbackContext) -> None:
        gate.set()

    fan = ParallelAgent(
        name="fan",
        sub_agents=[
            LoopAgent(
                name="retry",
                max_iterations=5,
                sub_agents=[LlmAgent(name="looper", model=looper, tools=[exit_loop])],
                after_agent_callback=open_gate,
            ),
            SequentialAgent(
                name="steps",
                sub_agents=[
                    LlmAgent(name="step_a", model=step_a),
                    LlmAgent(
                        name="step_b", model=step_b, before_agent_callback=hold_until_loop_ended
                    ),
                ],
            ),
        ],
    )
    runner = InMemoryRunner(fan, app_name="nest")
    sid = await new_session(runner)

    events = await run_turn(runner, sid, "go")

    assert [r for r in rows(events) if r[1] == "fan.retry"] == [
        ("looper", "fan.retry", "text", "try 1"),
        ("looper", "fan.retry", "call", "exit_loop()"),
        ("looper", "fan.retry", "response", "exit_loop -> escalate"),
    ]
    assert [r for r in rows(events) if r[1] == "fan.steps"] == [
        ("step_a", "fan.steps", "text", "step a"),
        ("step_b", "fan.steps", "text", "step b"),
    ]
    assert len(events) == 5


async def test_escalate_in_a_parallel_branch_ends_the_loop_around_it() -> None:
    """Issue 4 nesting: Loop > Parallel > LlmAgent. exit_loop in a branch (no loop inside the
    branch) ends the fan-out and the loop around it; the next round never starts."""
    quitter = ScriptedModel(responses=[tool_call_response(("exit_loop", {}))])
    loop = LoopAgent(
        name="rounds",
        max_iterations=3,
        sub_agents=[
            ParallelAgent(
                name="fan", sub_agents=[LlmAgent(name="quitter", model=quitter, tools=[exit_loop])]
            )
        ],
    )
    runner = InMemoryRunner(loop, app_name="nest")
    sid = await new_session(runner)

    events = await run_turn(runner, sid, "go")

    assert rows(events) == [
        ("quitter", "fan.quitter", "call", "exit_loop()"),
        ("quitter", "fan.quitter", "response", "exit_loop -> escalate"),
    ]
    assert quitter.calls == 1


async def test_transfer_inside_a_parallel_branch_stays_on_the_branch() -> None:
    """Issue 4 nesting: an LlmAgent in a fan-out transfers to its own child; the child's
    events carry the branch, and its history holds only that branch and shared events."""
    router = ScriptedModel(responses=[transfer("helper")])
    helper = ScriptedModel(responses=["helped"])
    other = ScriptedModel(responses=["other done"])
    fan = ParallelAgent(
        name="fan",
        sub_agents=[
            LlmAgent(
                name="router", model=router, sub_agents=[LlmAgent(name="helper", model=helper)]
            ),
            LlmAgent(name="other", model=other),
        ],
    )
    runner = InMemoryRunner(fan, app_name="nest")
    sid = await new_session(runner)

    events = await run_turn(runner, sid, "go")

    assert [r for r in rows(events) if r[1] == "fan.router"] == [
        ("router", "fan.router", "call", "transfer_to_agent(agent_name=helper)"),
        ("router", "fan.router", "response", "transfer_to_agent -> helper"),
        ("helper", "fan.router", "text", "helped"),
    ]
    assert [r for r in rows(events) if r[1] == "fan.other"] == [
        ("other", "fan.other", "text", "other done"),
    ]
    assert not any("other" in t for t in request_texts(helper.requests[0].contents))
