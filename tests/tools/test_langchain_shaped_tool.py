"""``LangchainTool`` accepts, as google-adk 2.13 does, a tool shaped like a LangChain tool
that is not a ``langchain_core`` instance: an object with ``_run`` (or ``run``), a name, a
description, and optionally ``args_schema`` and ``return_direct``. Checked side by side with
google-adk in its venv: same name, description, argument names, results and
``skip_summarization``."""

from __future__ import annotations

from typing import Any

import pydantic
import pytest

from eventide import InMemoryRunner, LangchainTool, LlmAgent
from eventide.errors import UsageError
from eventide.testing import ScriptedModel, tool_call_response


class WordCount:
    """Shaped like a LangChain tool: LangChain fills ``run_manager`` itself."""

    name = "word_count"
    description = "Counts the words of a text."
    return_direct = False

    def _run(self, text: str, run_manager: Any = None) -> int:
        return len(text.split())


class AsyncLookup:
    """Only ``run``, asynchronous, with its arguments described by ``args_schema``."""

    class Args(pydantic.BaseModel):
        key: str

    name = "lookup"
    description = "Looks a key up."
    args_schema = Args

    async def run(self, **kwargs: Any) -> dict[str, str]:
        return {"value": kwargs["key"].upper()}


class FinalAnswer(WordCount):
    return_direct = True


def test_the_declaration_comes_from_the_run_method_without_langchains_parameters() -> None:
    declaration = LangchainTool(WordCount()).get_declaration()
    assert (declaration.name, declaration.description) == (
        "word_count",
        "Counts the words of a text.",
    )
    schema = declaration.parameters_json_schema
    assert isinstance(schema, dict)
    assert set(schema["properties"]) == {"text"} and schema["required"] == ["text"]


def test_args_schema_and_overrides_are_used_when_given() -> None:
    tool = LangchainTool(AsyncLookup(), name="find", description="Finds.")
    declaration = tool.get_declaration()
    assert (declaration.name, declaration.description) == ("find", "Finds.")
    schema = declaration.parameters_json_schema
    assert isinstance(schema, dict) and set(schema["properties"]) == {"key"}


async def test_calls_run_through_an_agent_and_return_direct_skips_the_summary() -> None:
    model = ScriptedModel(
        responses=[
            tool_call_response(("word_count", {"text": "one two three"})),
            tool_call_response(("lookup", {"key": "abc"})),
            "done",
            tool_call_response(("word_count", {"text": "a b"})),
        ]
    )
    agent = LlmAgent(
        name="a", model=model, tools=[LangchainTool(WordCount()), LangchainTool(AsyncLookup())]
    )
    runner = InMemoryRunner(agent, app_name="app")
    session = await runner.session_service.create_session(app_name="app", user_id="u")
    events = [
        e async for e in runner.run_async(user_id="u", session_id=session.id, new_message="go")
    ]
    responses = [r.response for e in events for r in e.get_function_responses()]
    assert responses == [{"result": 3}, {"value": "ABC"}]
    await runner.close()

    direct = InMemoryRunner(
        LlmAgent(name="b", model=model, tools=[LangchainTool(FinalAnswer())]), app_name="app"
    )
    session = await direct.session_service.create_session(app_name="app", user_id="u")
    events = [
        e async for e in direct.run_async(user_id="u", session_id=session.id, new_message="go")
    ]
    [result_event] = [e for e in events if e.get_function_responses()]
    assert result_event.actions.skip_summarization is True
    assert result_event is events[-1]  # the model is not asked to summarize
    await direct.close()


def test_an_object_without_run_is_refused_with_what_is_accepted() -> None:
    with pytest.raises(UsageError, match="'run' or '_run' method; got object"):
        LangchainTool(object())
