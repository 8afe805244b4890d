"""The offline demo model drives an app's real tools; the swap rule decides who gets it."""

from __future__ import annotations

import json
from typing import Any, Literal

import pytest
from pydantic import BaseModel

from eventide import InMemoryRunner, RunConfig, StreamingMode, ToolContext
from eventide.agents import LlmAgent, SequentialAgent
from eventide.apps.demo_model import DEMO_MODEL_NAME, prepare_models
from eventide.errors import ConfigurationError
from eventide.models.base_llm import BaseLlm
from eventide.testing import FunctionModel, ScriptedModel
from tests.event_summary import summarize


def model_of(agent: LlmAgent) -> str | BaseLlm:
    """The agent's model setting, read afresh (not narrowed by an earlier isinstance)."""
    return agent.model


def make_weather_agent(calls: list[dict[str, Any]], model: str = "") -> LlmAgent:
    def get_weather(city: str, tool_context: ToolContext, unit: str = "celsius") -> dict[str, Any]:
        """Get the weather forecast for a city.

        Args:
            city: the city.
            unit: celsius or fahrenheit.
        """
        calls.append({"city": city, "unit": unit})
        tool_context.state["last_city"] = city
        return {"city": city, "forecast": "sunny"}

    return LlmAgent(name="weather", model=model, instruction="Help.", tools=[get_weather])


async def run_turn(agent: Any, message: str, *, stream: bool = False) -> list[Any]:
    runner = InMemoryRunner(agent, app_name="demo")
    await runner.session_service.create_session(app_name="demo", user_id="u", session_id="s")
    mode = StreamingMode.SSE if stream else StreamingMode.NONE
    return [
        event
        async for event in runner.run_async(
            user_id="u",
            session_id="s",
            new_message=message,
            run_config=RunConfig(streaming_mode=mode),
        )
    ]


async def test_demo_model_calls_the_apps_real_tool_and_shows_its_result() -> None:
    """Event loop with a tool call: call event, response event (with the tool's state_delta),
    then the final text, all from the app's real tool."""
    calls: list[dict[str, Any]] = []
    agent = make_weather_agent(calls)
    setup = prepare_models(agent, env={})
    assert setup.uses_demo_model
    assert setup.models == {"weather": DEMO_MODEL_NAME}

    events = await run_turn(agent, "What is the weather in Paris?")

    assert calls == [{"city": "Paris", "unit": "celsius"}]
    assert summarize(events) == [
        ("weather", "call", (("get_weather", (("city", "Paris"), ("unit", "celsius"))),)),
        (
            "weather",
            "response",
            (("get_weather", (("city", "Paris"), ("forecast", "sunny"))),),
        ),
        ("weather", "text", 'get_weather returned: {"city": "Paris", "forecast": "sunny"}'),
    ]
    assert events[1].actions.state_delta == {"last_city": "Paris"}
    assert events[-1].is_final_response()


async def test_optional_strings_keep_their_default() -> None:
    seen: list[str] = []

    def find_flight(destination: str, airline: str = "any") -> str:
        """Find a flight.

        Args:
            destination: where to.
            airline: which airline.
        """
        seen.append(f"{destination}/{airline}")
        return "found"

    agent = LlmAgent(name="travel", tools=[find_flight])
    prepare_models(agent, env={})
    await run_turn(agent, "find a flight to Lisbon")
    assert seen == ["Lisbon/any"]


async def test_enum_values_numbers_and_quoted_strings_fill_arguments() -> None:
    seen: list[tuple[str, int, str]] = []

    def book_table(
        restaurant: str, people: int, seating: Literal["indoor", "outdoor"] = "indoor"
    ) -> str:
        """Book a table at a restaurant.

        Args:
            restaurant: the restaurant's name.
            people: how many people.
            seating: indoor or outdoor.
        """
        seen.append((restaurant, people, seating))
        return "booked"

    agent = LlmAgent(name="host", tools=[book_table])
    prepare_models(agent, env={})
    events = await run_turn(agent, "Please book a table at 'Chez Marie' for 4 people outdoor")
    assert seen == [("Chez Marie", 4, "outdoor")]
    assert events[-1].text == "book_table returned: booked"


async def test_no_matching_tool_gets_an_explanatory_answer() -> None:
    agent = make_weather_agent([])
    prepare_models(agent, env={})
    events = await run_turn(agent, "hello")
    assert len(events) == 1
    assert "[demo model]" in (events[-1].text or "")
    assert "get_weather" in (events[-1].text or "")


async def test_demo_model_transfers_to_the_sub_agent_whose_description_matches() -> None:
    """transfer_to_agent: the root hands over to the matching sub-agent, which then calls its
    own tool; the demo never transfers twice in one turn."""
    refunds: list[str] = []

    def issue_refund(order_id: str) -> str:
        """Refund an order.

        Args:
            order_id: the order.
        """
        refunds.append(order_id)
        return f"refunded {order_id}"

    billing = LlmAgent(
        name="billing",
        description="Handles invoices, payments and refunds.",
        tools=[issue_refund],
    )
    support = LlmAgent(name="support", description="Answers product questions.")
    root = LlmAgent(name="desk", sub_agents=[billing, support], instruction="Route.")
    setup = prepare_models(root, env={})
    assert setup.models == {n: DEMO_MODEL_NAME for n in ("desk", "billing", "support")}

    events = await run_turn(root, 'I want a refund for order "A-17"')

    assert refunds == ["A-17"]
    kinds = [(e.author, kind) for e, (_, kind, _) in zip(events, summarize(events), strict=True)]
    assert kinds == [
        ("desk", "call"),
        ("desk", "response"),
        ("billing", "call"),
        ("billing", "response"),
        ("billing", "text"),
    ]
    assert events[1].actions.transfer_to_agent == "billing"


async def test_streaming_yields_partial_chunks_then_the_complete_answer() -> None:
    """Streaming with partial: chunks are forwarded (partial=True), then one complete event."""
    agent = make_weather_agent([])
    prepare_models(agent, env={})
    events = await run_turn(agent, "weather in Rome", stream=True)
    answer = [e for e in events if e.author == "weather" and e.text and not e.get_function_calls()]
    partials = [e for e in answer if e.partial]
    assert len(partials) > 1
    assert answer[-1].partial is not True
    assert "".join(e.text or "" for e in partials) == answer[-1].text


def test_configured_keys_keep_the_apps_models() -> None:
    agent = make_weather_agent([], model="gemini-2.5-flash")
    setup = prepare_models(agent, env={"GOOGLE_API_KEY": "k"})
    assert not setup.uses_demo_model
    assert agent.model == "gemini-2.5-flash"
    assert setup.notice() == "Model: gemini-2.5-flash"


def test_missing_key_swaps_in_the_demo_model_and_restore_undoes_it() -> None:
    agent = make_weather_agent([], model="gpt-4o")
    setup = prepare_models(agent, env={"GOOGLE_API_KEY": "k"})
    assert setup.uses_demo_model
    assert isinstance(agent.model, FunctionModel)
    assert setup.reasons == [
        "weather: model 'gpt-4o' needs a OpenAI key (OPENAI_API_KEY or OPENAI_BASE_URL)"
    ]
    assert setup.notice().startswith("Using the offline demo model")
    setup.restore()
    assert model_of(agent) == "gpt-4o"


def test_agents_without_a_model_get_eventide_model_or_a_default_for_the_key() -> None:
    agent = make_weather_agent([])
    setup = prepare_models(agent, env={"EVENTIDE_MODEL": "claude-x", "ANTHROPIC_API_KEY": "k"})
    assert (agent.model, setup.uses_demo_model) == ("claude-x", False)
    setup.restore()
    assert agent.model == ""

    setup = prepare_models(agent, env={"OPENAI_API_KEY": "k"})
    assert agent.model == "gpt-4o-mini"
    setup.restore()

    setup = prepare_models(agent, env={"OPENAI_BASE_URL": "http://127.0.0.1:1/v1"})
    assert setup.uses_demo_model  # a local server needs EVENTIDE_MODEL to name its model


def test_objects_local_and_inherited_models() -> None:
    scripted = ScriptedModel(responses=[])
    child = LlmAgent(name="child")
    local = LlmAgent(name="local", model="ollama/llama3")
    own = LlmAgent(name="own", model=scripted, sub_agents=[child])
    root = SequentialAgent(name="pipeline", sub_agents=[own, local])
    setup = prepare_models(root, env={})
    assert not setup.uses_demo_model
    assert own.model is scripted
    assert setup.models == {"own": "scripted", "child": "scripted", "local": "ollama/llama3"}


def test_inherited_unconfigured_model_gives_each_agent_its_own_demo_model() -> None:
    child = LlmAgent(name="child")
    root = LlmAgent(name="root", model="gemini-2.5-flash", sub_agents=[child])
    setup = prepare_models(root, env={})
    assert isinstance(root.model, FunctionModel) and isinstance(child.model, FunctionModel)
    assert root.model is not child.model
    setup.restore()
    assert (model_of(root), model_of(child)) == ("gemini-2.5-flash", "")


class Forecast(BaseModel):
    city: str
    days: int = 1


async def test_output_schema_without_tools_gets_matching_json() -> None:
    agent = LlmAgent(name="planner", output_schema=Forecast, output_key="plan")
    prepare_models(agent, env={})
    events = await run_turn(agent, "plan 3 days in Lisbon")
    assert json.loads(events[-1].text or "") == {"city": "Lisbon", "days": 3}
    assert events[-1].actions.state_delta == {"plan": {"city": "Lisbon", "days": 3}}


async def test_output_schema_with_tools_answers_through_set_model_response() -> None:
    calls: list[dict[str, Any]] = []
    agent = make_weather_agent(calls)
    agent.output_schema = Forecast
    agent.output_key = "forecast"
    prepare_models(agent, env={})
    events = await run_turn(agent, "weather in Oslo for 2 days")
    assert calls == [{"city": "Oslo", "unit": "celsius"}]
    assert [name for e in events for name in (c.name for c in e.get_function_calls())] == [
        "get_weather",
        "set_model_response",
    ]
    final = events[-1]
    assert final.is_final_response()
    assert json.loads(final.text or "") == {"city": "Oslo", "days": 2}


async def test_ids_docstring_choices_and_free_text_fill_arguments() -> None:
    """A dash inside an id is not a minus sign; quoted choices in a parameter's docstring
    work as an enum; a `summary`-like parameter takes the whole message."""
    seen: list[tuple[int, str, str]] = []

    def file_report(invoice_number: int, priority: str, summary: str) -> str:
        """File a report about an invoice.

        Args:
            invoice_number: the digits of the invoice id.
            priority: "low", "normal" or "high".
            summary: one line about the problem.
        """
        seen.append((invoice_number, priority, summary))
        return "filed"

    agent = LlmAgent(name="clerk", tools=[file_report])
    prepare_models(agent, env={})
    await run_turn(agent, "file a report: INV-1001 was billed twice, high priority")
    assert seen == [(1001, "high", "file a report: INV-1001 was billed twice, high priority")]


async def test_sub_agents_are_matched_by_their_tools_too() -> None:
    opened: list[str] = []

    def open_ticket(summary: str) -> str:
        """Open a support ticket."""
        opened.append(summary)
        return "T-1"

    helpdesk = LlmAgent(name="helpdesk", description="Second line.", tools=[open_ticket])
    root = LlmAgent(name="front", sub_agents=[helpdesk, LlmAgent(name="sales")])
    prepare_models(root, env={})
    events = await run_turn(root, "please open a ticket for me")
    assert opened == ["please open a ticket for me"]
    assert events[-1].author == "helpdesk"

    quiet = LlmAgent(name="front2", sub_agents=[LlmAgent(name="sales2")])
    prepare_models(quiet, env={})
    events = await run_turn(quiet, "hello")
    assert 'could not match "hello" to my agents (sales2)' in (events[-1].text or "")


def test_mixed_trees_name_the_agents_on_the_demo_model() -> None:
    child = LlmAgent(name="writer", model="gpt-4o")
    root = LlmAgent(name="lead", model="scripted-x", sub_agents=[child])
    setup = prepare_models(root, env={})
    assert setup.notice() == (
        "Using the offline demo model for writer (writer: model 'gpt-4o' needs a OpenAI key "
        "(OPENAI_API_KEY or OPENAI_BASE_URL)); the other agents use scripted-x."
    )


def test_check_model_names_fails_early_for_names_no_connector_serves() -> None:
    agent = LlmAgent(name="odd", model="no-such-model-family")
    setup = prepare_models(agent, env={})
    with pytest.raises(ConfigurationError, match="No model connector serves"):
        setup.check_model_names()
    scripted = LlmAgent(name="fine", model=ScriptedModel(responses=[]))
    prepare_models(scripted, env={}).check_model_names()  # objects are not looked up
