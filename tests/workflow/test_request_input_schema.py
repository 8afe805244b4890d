"""A ``RequestInput``'s ``response_schema`` checks the user's answer (issue 31, google-adk
2.13's behaviour): the answer is coerced as the schema says when the workflow continues
(``"42"`` for an integer), and one that does not fit raises ``WorkflowDataError``
("Validation failed for interrupt ...") before any node runs again; the user then answers
the same request again and the workflow goes on from the latest answer."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import BaseModel

from eventide import App, Event, InMemoryRunner, ResumabilityConfig
from eventide.errors import WorkflowDataError
from eventide.workflow import RequestInput, Workflow, node
from eventide.workflow.answer_schema import validate_answer
from tests.workflow.helpers import answer, outputs


class Address(BaseModel):
    city: str
    zip: int | None = None


class User(BaseModel):
    name: str
    age: int
    address: Address | None = None


def _runner(workflow: Workflow, resumable: bool) -> InMemoryRunner:
    config = ResumabilityConfig(is_resumable=True) if resumable else None
    return InMemoryRunner(app=App(name="app", root_agent=workflow, resumability_config=config))


async def _turn(runner: InMemoryRunner, session_id: str, message: Any) -> list[Event]:
    return [
        e async for e in runner.run_async(user_id="u", session_id=session_id, new_message=message)
    ]


def _workflow(schema: Any, *, rerun: bool) -> tuple[Workflow, list[Any]]:
    """``ask`` requests input with ``schema``; ``after`` records the value it gets."""
    seen: list[Any] = []

    @node(rerun_on_resume=rerun)
    async def ask(ctx: Any) -> Any:
        if rerun and "q" in ctx.resume_inputs:
            yield ctx.resume_inputs["q"]
            return
        yield RequestInput(interrupt_id="q", message="?", response_schema=schema)

    def after(node_input: Any) -> str:
        seen.append(node_input)
        return f"got {node_input!r}"

    return Workflow(name="wf", edges=[("START", ask, after)]), seen


@pytest.mark.parametrize("resumable", [False, True], ids=["plain", "resumable"])
@pytest.mark.parametrize("rerun", [False, True], ids=["replayed", "rerun"])
async def test_the_answer_is_coerced_to_the_schema(resumable: bool, rerun: bool) -> None:
    workflow, seen = _workflow({"type": "integer"}, rerun=rerun)
    runner = _runner(workflow, resumable)
    session = await runner.session_service.create_session(app_name="app", user_id="u")
    await _turn(runner, session.id, "go")
    events = await _turn(runner, session.id, answer("q", "42"))
    assert seen == [42]
    assert ("wf@1/after@1", "got 42") in outputs(events)


@pytest.mark.parametrize("resumable", [False, True], ids=["plain", "resumable"])
async def test_an_answer_that_does_not_fit_is_refused_and_can_be_given_again(
    resumable: bool,
) -> None:
    workflow, seen = _workflow(User, rerun=False)
    runner = _runner(workflow, resumable)
    session = await runner.session_service.create_session(app_name="app", user_id="u")
    first = await _turn(runner, session.id, "go")
    call = next(c for e in first for c in e.get_function_calls())
    assert call.args is not None
    assert call.args["response_schema"]["required"] == ["name", "age"]
    with pytest.raises(WorkflowDataError, match="Validation failed for interrupt 'q'") as raised:
        await _turn(runner, session.id, answer("q", {"name": "Ada", "age": "old"}))
    assert "age" in str(raised.value) and "Answer the request again" in str(raised.value)
    assert seen == []  # nothing after the request ran
    events = await _turn(
        runner, session.id, answer("q", {"name": "Ada", "age": "36", "address": {"city": "L"}})
    )
    assert seen == [{"name": "Ada", "age": 36, "address": {"city": "L"}}]
    assert outputs(events)[-1][0] == "wf@1/after@1"


async def test_a_request_in_a_nested_workflow_checks_its_answer() -> None:
    inner, seen = _workflow({"type": "boolean"}, rerun=True)
    outer = Workflow(name="outer", edges=[("START", inner)])
    runner = _runner(outer, resumable=False)
    session = await runner.session_service.create_session(app_name="app", user_id="u")
    await _turn(runner, session.id, "go")
    with pytest.raises(WorkflowDataError, match="Validation failed for interrupt"):
        await _turn(runner, session.id, answer("q", "maybe"))
    await _turn(runner, session.id, answer("q", "true"))
    assert seen == [True]


def test_request_input_takes_google_adks_camel_case_names() -> None:
    request = RequestInput(interruptId="q", responseSchema={"type": "string"})  # pyright: ignore[reportCallIssue]
    assert (request.interrupt_id, request.response_schema) == ("q", {"type": "string"})


@pytest.mark.parametrize(
    ("schema", "given", "expected"),
    [
        (None, "anything", "anything"),
        ({"type": "number"}, "42.5", 42.5),
        ({"type": "boolean"}, "0", False),
        ({"type": "array", "items": {"type": "integer"}}, ["1", 2], [1, 2]),
        ({"enum": ["red", "blue"]}, "blue", "blue"),
        ({"type": ["string", "null"]}, None, None),
        ({"anyOf": [{"type": "integer"}, {"type": "string"}]}, "x", "x"),
        ({"type": "object"}, {"any": 1}, {"any": 1}),
        # Absent optional keys stay absent; keys the schema does not name are kept.
        (
            User.model_json_schema(),
            {"name": "A", "age": 1, "x": 2},
            {"name": "A", "age": 1, "x": 2},
        ),
        (
            User.model_json_schema(),
            {"name": "A", "age": 1, "address": {"city": "P", "zip": "9"}},
            {"name": "A", "age": 1, "address": {"city": "P", "zip": 9}},
        ),
        (User, {"name": "A", "age": "1"}, User(name="A", age=1)),
    ],
)
def test_the_check_follows_the_schema_down(schema: Any, given: Any, expected: Any) -> None:
    assert validate_answer("q", given, schema) == expected


@pytest.mark.parametrize(
    ("schema", "given"),
    [
        ({"type": "integer"}, "abc"),
        ({"type": "string"}, 3),
        ({"enum": ["red", "blue"]}, "green"),
        ({"type": "array"}, "not a list"),
        ({"type": "object"}, "not a dict"),
        (User.model_json_schema(), {"name": "A", "address": {"zip": 1}}),
    ],
)
def test_an_answer_that_does_not_fit_says_why(schema: Any, given: Any) -> None:
    with pytest.raises(WorkflowDataError, match="Validation failed for interrupt 'q'"):
        validate_answer("q", given, schema)


def test_a_schema_the_reader_cannot_follow_takes_the_answer_as_given() -> None:
    class Opaque:  # pydantic makes no schema for it
        pass

    assert validate_answer("q", "x", Opaque) == "x"
