"""google-adk 2.x's one ``Context`` (issue 31): what a workflow node sees (its path, run,
attempt, the user's answers, ``run_node``), and a tool annotated with it gets the tool's
context, as google-adk 2.x tools do."""

from __future__ import annotations

from typing import Any

import pytest

from eventide import Context, LlmAgent, ToolContext
from eventide.errors import WorkflowConfigurationError
from eventide.testing import ScriptedModel, tool_call_response
from eventide.workflow import Workflow, node
from tests.workflow.helpers import outputs, play


def remember(note: str, ctx: Context) -> str:
    """Remember a note."""
    ctx.state["note"] = note
    return "ok"


async def test_a_tool_annotated_with_context_gets_its_context() -> None:
    """The annotation is a string here (``from __future__ import annotations``)."""
    model = ScriptedModel(responses=[tool_call_response(("remember", {"note": "milk"})), "Ok."])
    _, state = await play(LlmAgent(name="a", model=model, tools=[remember]), "hi")
    assert state == {"note": "milk"}
    assert issubclass(Context, ToolContext)


async def test_a_node_context_says_where_the_node_is() -> None:
    seen: list[tuple[Any, ...]] = []

    def probe(ctx: Context, node_input: Any) -> str:
        parent = ctx.parent_ctx
        assert parent is not None
        seen.append(
            (ctx.node_path, ctx.run_id, ctx.attempt_count, ctx.event_author, parent.node_path)
        )
        return "ok"

    @node(rerun_on_resume=True)
    async def caller(ctx: Context) -> Any:
        return await ctx.run_node(probe, "x")

    events, _ = await play(Workflow(name="wf", edges=[("START", caller)]), "go")
    assert seen == [("wf@1/caller@1/probe@1", "1", 1, "wf", "wf@1/caller@1")]
    assert outputs(events) == [("wf@1/caller@1/probe@1", "ok"), ("wf@1/caller@1", "ok")]


async def test_run_node_needs_a_parent_that_reruns_on_resume() -> None:
    def child() -> str:
        return "c"

    async def caller(ctx: Context) -> Any:
        return await ctx.run_node(child)

    with pytest.raises(WorkflowConfigurationError, match="needs rerun_on_resume=True"):
        await play(Workflow(name="wf", edges=[("START", caller)]), "go")


async def test_a_failed_child_can_be_caught_and_otherwise_fails_the_parent() -> None:
    from eventide.errors import DynamicNodeFailError

    def risky(node_input: str) -> str:
        if node_input == "bad":
            raise ValueError("Intentional failure")
        return f"ok {node_input}"

    @node(rerun_on_resume=True)
    async def careful(ctx: Context) -> list[str]:
        results = []
        try:
            await ctx.run_node(risky, "bad")
        except DynamicNodeFailError as failed:
            results.append(f"caught {failed.error} at {failed.error_node_path}")
        results.append(await ctx.run_node(risky, "good"))
        return results

    events, _ = await play(Workflow(name="wf", edges=[("START", careful)]), "go")
    assert outputs(events)[-1] == (
        "wf@1/careful@1",
        ["caught Intentional failure at wf@1/careful@1/risky@1", "ok good"],
    )
    assert [e.error_code for e in events if e.error_code] == ["ValueError"]  # once: the child's

    @node(rerun_on_resume=True)
    async def careless(ctx: Context) -> str:
        result: str = await ctx.run_node(risky, "bad")
        return result

    with pytest.raises(ValueError, match="Intentional failure"):
        await play(Workflow(name="wf", edges=[("START", careless)]), "go")


def test_a_node_context_sets_every_slot_its_base_classes_set() -> None:
    """``Context.__init__`` sets its base classes' slots itself (one call per node run, not
    four): each slot of the class and its bases holds what the bases' own ``__init__``s set."""
    from types import SimpleNamespace
    from typing import cast

    from eventide import InvocationContext

    invocation = cast("InvocationContext", SimpleNamespace())
    given: dict[str, Any] = {"function_call_id": "c-1", "tool_confirmation": None}
    ctx = Context(invocation, **given)
    base = ToolContext(invocation, **given)
    slots = [
        name
        for cls in type(ctx).__mro__
        for name in getattr(cls, "__slots__", ())
        if name not in ("__weakref__", "__dict__")
    ]
    unset = [name for name in slots if not hasattr(ctx, name)]
    assert unset == []
    for cls in ToolContext.__mro__:
        for name in getattr(cls, "__slots__", ()):
            assert getattr(ctx, name) is getattr(base, name), name
