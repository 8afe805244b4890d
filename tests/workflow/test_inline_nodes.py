"""A lone plain-function node runs in the graph loop's task (no task of its own): what a task
gave it must hold all the same, and its context builds its actions only when it uses them."""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
from typing import Any, cast

from eventide import Context
from eventide.workflow import Workflow
from tests.workflow.helpers import outputs, play

_seen: contextvars.ContextVar[str] = contextvars.ContextVar("seen", default="unset")


async def test_a_plain_function_node_keeps_its_context_variables_to_itself() -> None:
    """A chain's plain functions run one after another in the workflow's task; a variable one
    sets is not seen by the next, as when each ran in a task of its own."""

    def first(node_input: Any) -> str:
        before = _seen.get()
        _seen.set("first")
        return before

    def second(node_input: str) -> list[str]:
        return [node_input, _seen.get()]

    workflow = Workflow(name="wf", edges=[("START", first, second)])
    events, _ = await play(workflow, "go")
    assert outputs(events) == [("wf@1/first@1", "unset"), ("wf@1/second@1", ["unset", "unset"])]
    assert _seen.get() == "unset"


async def test_a_plain_function_returning_an_awaitable_awaits_it_in_its_own_context() -> None:
    def later(node_input: Any) -> Any:
        async def value() -> str:
            _seen.set("inner")
            await asyncio.sleep(0)
            return _seen.get()

        return value()

    def after(node_input: str) -> list[str]:
        return [node_input, _seen.get()]

    workflow = Workflow(name="wf", edges=[("START", later, after)])
    events, _ = await play(workflow, "go")
    assert outputs(events)[-1] == ("wf@1/after@1", ["inner", "unset"])


async def test_node_contexts_make_their_actions_on_first_use() -> None:
    """A node that writes no state leaves its context without actions; one that writes state
    gets them, and its output event carries the delta."""
    seen: dict[str, Any] = {}

    def reader(ctx: Context, node_input: Any) -> int:
        seen["reader"] = ctx.actions_if_any
        return 1

    def writer(ctx: Context, node_input: int) -> int:
        ctx.state["count"] = node_input + 1
        seen["writer"] = ctx.actions_if_any
        return node_input + 1

    workflow = Workflow(name="wf", edges=[("START", reader, writer)])
    events, state = await play(workflow, "go")
    assert seen["reader"] is None
    assert seen["writer"] is not None
    assert state["count"] == 2
    written = [e for e in events if e.node_info.path == "wf@1/writer@1"]
    assert [e.actions.state_delta for e in written] == [{"count": 2}]


def _agents(**callbacks: Any) -> list[Any]:
    """Two LLM agents answering "answer 0" and "answer 1", with ``callbacks``."""
    from eventide import LlmAgent
    from eventide.testing import ScriptedModel

    return [
        LlmAgent(name=f"agent_{i}", model=ScriptedModel(responses=[f"answer {i}"]), **callbacks)
        for i in range(2)
    ]


async def test_agent_nodes_of_a_chain_run_in_the_graph_loops_task() -> None:
    """A lone agent node runs in the workflow's task, not a task of its own (three event loop
    passes fewer per node)."""
    tasks: list[asyncio.Task[Any] | None] = []

    def note_task(callback_context: Any, llm_request: Any) -> None:
        tasks.append(asyncio.current_task())

    workflow = Workflow(name="wf", edges=[("START", *_agents(before_model_callback=note_task))])
    events, _ = await play(workflow, "go")
    assert outputs(events)[-1] == ("wf@1/agent_1@1", "answer 1")
    assert len(tasks) == 2 and tasks[0] is tasks[1]


async def test_an_agent_node_keeps_its_context_variables_to_itself() -> None:
    """The agent's code (callbacks, model, tools) runs in a copy of the context, as a task of
    its own would give it: what one agent node sets is not seen by the next, nor after."""
    seen: list[str] = []

    def set_and_note(callback_context: Any, llm_request: Any) -> None:
        seen.append(_seen.get())
        _seen.set(callback_context.agent_name)

    def note_after(callback_context: Any, llm_response: Any) -> None:
        seen.append(_seen.get())

    agents = _agents(before_model_callback=set_and_note, after_model_callback=note_after)
    workflow = Workflow(name="wf", edges=[("START", *agents)])
    await play(workflow, "go")
    assert seen == ["unset", "agent_0", "unset", "agent_1"]
    assert _seen.get() == "unset"


async def test_cancelling_the_run_reaches_an_agent_node_in_its_own_context() -> None:
    """Cancelling the invocation while an agent node's model call waits cancels that call, and
    the model's clean-up runs in the node's own context variables."""
    from collections.abc import AsyncGenerator

    from eventide import InMemoryRunner, LlmAgent
    from eventide.models import BaseLlm, LlmResponse

    started = asyncio.Event()
    cleaned_up: list[str] = []

    class Waiting(BaseLlm):
        async def generate_content_async(
            self, llm_request: Any, stream: bool = False
        ) -> AsyncGenerator[LlmResponse, None]:
            _seen.set("model")
            started.set()
            try:
                await asyncio.Event().wait()
            except asyncio.CancelledError:
                cleaned_up.append(_seen.get())
                raise
            yield LlmResponse()  # pragma: no cover - never reached

    agent = LlmAgent(name="slow", model=Waiting(model="waiting"))
    runner = InMemoryRunner(Workflow(name="wf", edges=[("START", agent)]), app_name="app")
    session = await runner.session_service.create_session(app_name="app", user_id="u")

    async def consume() -> None:
        async for _ in runner.run_async(user_id="u", session_id=session.id, new_message="go"):
            pass

    task = asyncio.create_task(consume())
    await asyncio.wait_for(started.wait(), 5)
    task.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await task
    assert cleaned_up == ["model"]
    assert _seen.get() == "unset"


async def test_an_agent_nodes_events_come_from_its_body_unless_it_checks_its_output() -> None:
    """Without an output_schema an agent node has nothing to do to its agent's events: they
    come from ``_run_impl``'s own generator; with one, ``BaseNode.run`` checks each output."""
    from eventide import LlmAgent
    from eventide.testing import ScriptedModel
    from eventide.workflow.agent_node import AgentNode

    agent = LlmAgent(name="a", model=ScriptedModel(responses=["x"]))
    plain = AgentNode(agent).run(ctx=cast(Any, None), node_input="go")
    body = vars(AgentNode)["_run_impl"].__code__
    assert cast(Any, plain).ag_code is body
    await plain.aclose()
    checked = AgentNode(agent, output_schema=str).run(ctx=cast(Any, None), node_input="go")
    assert cast(Any, checked).ag_code is not body
    await checked.aclose()


async def test_an_agent_node_step_that_waits_continues_in_its_own_context() -> None:
    """An agent's step that waits (the model awaits between setting a variable and answering)
    is continued in the node's copy of the context: the model sees its own variable after the
    wait, the next agent node and the workflow's caller do not."""
    from collections.abc import AsyncGenerator

    from eventide import LlmAgent, types
    from eventide.models import BaseLlm, LlmResponse

    seen: list[str] = []

    class Pausing(BaseLlm):
        async def generate_content_async(
            self, llm_request: Any, stream: bool = False
        ) -> AsyncGenerator[LlmResponse, None]:
            seen.append(_seen.get())
            _seen.set(self.model)
            await asyncio.sleep(0)  # a step that waits: continued after an event-loop pass
            seen.append(_seen.get())
            text = types.Part(text=f"from {self.model}")
            yield LlmResponse(content=types.Content(role="model", parts=[text]))

    agents = [LlmAgent(name=f"agent_{i}", model=Pausing(model=f"m{i}")) for i in range(2)]
    events, _ = await play(Workflow(name="wf", edges=[("START", *agents)]), "go")
    assert outputs(events)[-1] == ("wf@1/agent_1@1", "from m1")
    assert seen == ["unset", "m0", "unset", "m1"]
    assert _seen.get() == "unset"


async def test_an_agent_node_given_another_agent_asks_the_new_one_what_it_is() -> None:
    """Whether an agent node's agent is an LLM agent (which gets an earlier node's output as a
    user message) is known from the node's build, and asked again of an agent set later."""
    from collections.abc import AsyncGenerator

    from eventide import BaseAgent, Event, InvocationContext, LlmAgent, types
    from eventide.testing import ScriptedModel
    from eventide.workflow.agent_node import AgentNode

    class Say(BaseAgent):
        async def _run_async_impl(self, ctx: InvocationContext) -> AsyncGenerator[Event, None]:
            text = types.Part(text="said")
            yield Event(author=self.name, content=types.Content(role="model", parts=[text]))

    def first() -> str:
        return "from the first node"

    node = AgentNode(LlmAgent(name="talk", model=ScriptedModel(responses=["unused"])))
    node.agent = Say(name="talk")
    events, _ = await play(Workflow(name="wf", edges=[("START", first, node)]), "go")
    authors = [e.author for e in events if e.content is not None]
    assert authors == ["talk"]  # no user message made of the first node's output
