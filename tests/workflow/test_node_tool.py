"""A workflow as a tool (google-adk's ``NodeTool``): the model's arguments are its input,
its output the tool's result, and its steps are committed to the caller's session."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from eventide import LlmAgent
from eventide.testing import ScriptedModel
from eventide.testing.scripted_model import tool_call_response
from eventide.workflow import NodeTool, Workflow
from tests.workflow.helpers import play


class Order(BaseModel):
    item: str
    quantity: int


def price(node_input: Order, ctx: Any) -> dict[str, Any]:
    ctx.state["priced"] = node_input.item
    return {"item": node_input.item, "total": node_input.quantity * 3}


def confirm(node_input: dict[str, Any]) -> str:
    return f"{node_input['item']} costs {node_input['total']}"


async def test_an_agent_calls_a_workflow_as_a_tool() -> None:
    checkout = Workflow(
        name="checkout", description="Price an order.", edges=[("START", price, confirm)]
    )
    tool = NodeTool(checkout)
    declaration = tool.get_declaration()
    assert declaration.name == "checkout"
    assert declaration.description == "Price an order."
    assert declaration.parameters_json_schema is not None
    assert set(declaration.parameters_json_schema["properties"]) == {"item", "quantity"}

    model = ScriptedModel(
        responses=[tool_call_response(("checkout", {"item": "pen", "quantity": 2})), "Done."]
    )
    agent = LlmAgent(name="clerk", model=model, tools=[tool])
    events, state = await play(agent, "two pens")
    responses = [r.response for e in events for r in e.get_function_responses()]
    assert responses == [{"result": "pen costs 6"}]
    assert state["priced"] == "pen"
    last = model.requests[1].contents[-1]
    assert [p.function_response is not None for p in last.parts or []] == [True]


async def test_a_function_as_a_tool_takes_its_parameters_from_the_arguments() -> None:
    def add(a: int, b: int = 1) -> int:
        return a + b

    tool = NodeTool(add)
    declaration = tool.get_declaration()
    assert declaration.parameters_json_schema == {
        "type": "object",
        "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
        "required": ["a"],
    }
    model = ScriptedModel(responses=[tool_call_response(("add", {"a": 4})), "ok"])
    events, _ = await play(LlmAgent(name="calc", model=model, tools=[tool]), "4+1")
    assert [r.response for e in events for r in e.get_function_responses()] == [{"result": 5}]
