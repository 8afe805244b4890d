"""``AgentNode``: an agent (``LlmAgent``, a custom ``BaseAgent``) as a workflow node.

The agent runs in the workflow's invocation and its events keep their authors. Its output
is the ``output`` of its last event that has one; the agent's final answer carries one
(set here when the agent did not): the answer's text, or the parsed JSON when the agent
has an ``output_schema``. When the node's input
is not the user's message (it is an earlier node's output), it is given to the agent as a
user message first, so the model sees it.
"""

from __future__ import annotations

import contextvars
import json
from collections.abc import AsyncGenerator, Generator
from typing import TYPE_CHECKING, Any

from eventide import types
from eventide._fastpath import (
    assign_fields,
    construct_trusted,
    fields_of,
    hidden_value,
    set_hidden,
)
from eventide.agents.base_agent import BaseAgent
from eventide.events import Event
from eventide.protocol import USER_AUTHOR
from eventide.runtime.replay import ResumeScope
from eventide.workflow.base_node import BaseNode
from eventide.workflow.node_data import content_text, to_plain, validate_node_data

if TYPE_CHECKING:
    from eventide.node_context import Context
    from eventide.runtime.replay_index import NodeRecord

__all__ = ["AgentNode"]

_LLM = "_eventide_llm_agent"  # the agent and whether it is an LlmAgent (see __init__)


class AgentNode(BaseNode):
    """Runs ``agent`` once per trigger; see the module docstring for its output."""

    agent: BaseAgent

    def __init__(self, agent: BaseAgent | None = None, /, **data: Any) -> None:
        if agent is not None:
            data["agent"] = agent
        found: Any = data.get("agent")
        data.setdefault("name", found.name)
        data.setdefault("description", found.description)
        llm = _is_llm_agent(found)
        if llm:
            # The model's turn resumes from the user's answer by running again (google-adk).
            data.setdefault("rerun_on_resume", True)
        super().__init__(**data)
        # Known from here on (while the agent stays the one given): a run asked two hasattr
        # of the agent, a model read through a property among them.
        set_hidden(self, _LLM, (self.agent, llm))

    def run(self, *, ctx: Context, node_input: Any) -> AsyncGenerator[Event, None]:
        """:meth:`BaseNode.run`; without an ``output_schema`` (nothing to do to what the
        agent yields: events only) the node's events come from :meth:`_run_impl` itself,
        not through one more generator."""
        if self.output_schema is not None or type(self)._run_impl is not AgentNode._run_impl:
            return super().run(ctx=ctx, node_input=node_input)
        return self._run_impl(ctx=ctx, node_input=validate_node_data(self.input_schema, node_input))

    async def _run_impl(self, *, ctx: Context, node_input: Any) -> AsyncGenerator[Any, None]:
        agent = self.agent
        invocation = ctx.get_invocation_context()
        runtime = ctx.node_runtime
        committed = (
            runtime.committed(ctx)
            if runtime is not None and invocation.resumable and not ctx.resume_inputs
            else []
        )
        if committed:
            # The node was running when the invocation stopped: its agent continues from
            # its own committed events (read as every agent resumes), so a committed model
            # response is not requested again and its calls keep their ids.
            invocation = invocation.for_agent(invocation.agent)
            invocation.resume = ResumeScope.of(committed)
        known: tuple[BaseAgent, bool] | None = hidden_value(self, _LLM)
        if (
            (known[1] if known is not None and known[0] is agent else _is_llm_agent(agent))
            and node_input is not None
            and node_input is not invocation.user_content
            and not ctx.resume_inputs
            and not any(e.author == USER_AUTHOR for e in committed)
        ):
            message = _as_user_message(node_input)
            yield construct_trusted(Event, {"author": USER_AUTHOR, "content": message})
        # Run from the workflow's context, not one made for the agent: the agent is not the
        # one the Runner started, so its answer must not carry the invocation's end marker.
        events = agent.run_async(invocation)
        # The agent's code runs in a copy of the context variables, as in a task of its own
        # (the node may run in the graph loop's task: see runs_inline).
        variables = contextvars.copy_context()
        name = agent.name
        run = variables.run
        finished = False
        try:
            while True:
                # The agent's next event, its first step run here: an event the agent
                # yields without waiting on anything (a model answer, a tool's result)
                # costs no _InContext and no generator; a step that waits continues in one.
                step = events.__anext__().__await__()
                try:
                    event = await _InContext(step, variables, run(step.send, None))
                except StopIteration as stop:
                    event = stop.value
                except StopAsyncIteration:
                    finished = True
                    break
                fields = fields_of(event)  # five reads: one lookup, not five generic ones
                if not fields["author"]:
                    event.author = name
                if (
                    fields["output"] is None
                    and fields["author"] == name
                    and fields["content"] is not None
                    and not fields["partial"]
                    and event.is_final_response()
                ):
                    # The agent's answer carries the node's output itself (no event more).
                    assign_fields(event, {"output": _answer(agent, fields["content"])})
                yield event
        finally:
            if not finished:  # stopped early: close the agent's generator, in its context
                closing = events.aclose().__await__()
                try:
                    await _InContext(closing, variables, run(closing.send, None))
                except StopIteration:
                    pass

    def finished_in(self, record: NodeRecord) -> bool:
        """An agent that marks its end (an ``LlmAgent``, a workflow agent) commits its
        ``end_of_agent`` after the answer that carries the node's output: a run stopped
        between the two runs again to commit the marker (its agent continues after its
        answer, which is not asked for again)."""
        agent = self.agent
        return agent.name in record.ended or not agent._marks_its_end()  # pyright: ignore[reportPrivateUsage]

    @property
    def runs_inline(self) -> bool:
        """Without a timeout, the workflow may run the node in the graph loop's task when it is the
        only node to run: the agent's code runs in a copy of the context variables all the
        same (see :class:`_InContext`), and a task's start, wake-ups and end cost about a
        tenth of an LLM agent node (three event loop passes)."""
        return self.timeout is None


class _InContext:
    """Continues ``steps`` (an awaitable's steps, the first already run: ``signal`` is what
    it yielded), each step run in ``context``: what a task of its own gives a coroutine (its
    own context variables), without the task. Cancellation and other exceptions thrown in
    reach the awaitable in that context too."""

    __slots__ = ("_context", "_signal", "_steps")

    def __init__(
        self, steps: Generator[Any, Any, Any], context: contextvars.Context, signal: Any
    ) -> None:
        self._steps = steps
        self._context = context
        self._signal = signal

    def __await__(self) -> Generator[Any, Any, Any]:
        inner = self._steps
        run = self._context.run
        signal = self._signal
        while True:
            try:
                value = yield signal
            except GeneratorExit:
                run(inner.close)
                raise
            except BaseException as error:  # noqa: BLE001 - thrown in: handed to the awaitable
                method: Any = inner.throw
                value = error
            else:
                method = inner.send
            try:
                signal = run(method, value)
            except StopIteration as stop:
                return stop.value


def _is_llm_agent(agent: Any) -> bool:
    return hasattr(agent, "output_key") and hasattr(agent, "canonical_model")


def _answer(agent: BaseAgent, content: types.Content) -> Any:
    text = content_text(content)
    if not text:
        return None
    if getattr(agent, "output_schema", None) is not None:
        try:
            return json.loads(text)
        except json.JSONDecodeError:
            return text
    return text


def _as_user_message(node_input: Any) -> types.Content:
    if isinstance(node_input, types.Content):
        return node_input
    text = node_input if isinstance(node_input, str) else json.dumps(to_plain(node_input))
    part = construct_trusted(types.Part, {"text": text})  # a str: nothing to validate
    return construct_trusted(types.Content, {"role": "user", "parts": [part]})
