"""``construct_trusted``: Eventide's hot paths build some records without validation, from
values already of the fields' types. Such a record must be the one pydantic would build."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import BaseModel, model_validator

from eventide import types
from eventide._fastpath import blank, construct_trusted
from eventide.events import Event, EventActions
from eventide.models.llm_request import LlmRequest
from eventide.models.llm_response import LlmResponse

_CONTENT = types.Content(role="user", parts=[types.Part(text="hi")])
_CASES: list[tuple[type[Any], dict[str, Any]]] = [
    (Event, {"author": "user", "invocation_id": "e-1", "content": _CONTENT}),
    (
        Event,
        {
            "author": "agent",
            "invocation_id": "e-1",
            "id": "x",
            "timestamp": 1.5,
            "branch": None,
            "content": _CONTENT,
            "usage_metadata": types.UsageMetadata(prompt_token_count=3),
            "turn_complete": True,
            "actions": EventActions(state_delta={"k": 1}),
        },
    ),
    (EventActions, {}),
    (LlmResponse, {"content": _CONTENT, "finish_reason": "STOP", "turn_complete": True}),
    (types.Part, {"text": "hi"}),
    (
        LlmRequest,
        {"model": "m", "config": types.GenerateContentConfig(), "history_unchanged": True},
    ),
]


@pytest.mark.parametrize(("cls", "values"), _CASES, ids=lambda v: getattr(v, "__name__", ""))
def test_a_trusted_record_is_the_validated_one(cls: type[Any], values: dict[str, Any]) -> None:
    trusted = construct_trusted(cls, values)
    # Defaults made by factories (ids, timestamps) are the trusted record's own.
    made = {
        name: getattr(trusted, name)
        for name in ("id", "timestamp")
        if name in cls.model_fields and name not in values
    }
    validated = cls(**values, **made)
    assert type(trusted) is cls
    assert trusted == validated
    assert trusted.model_dump_json() == validated.model_dump_json()
    assert trusted.model_fields_set == set(values)
    assert list(vars(trusted)) == list(vars(validated))


def test_default_factories_run_for_each_record() -> None:
    first = construct_trusted(Event, {"author": "user"})
    second = construct_trusted(Event, {"author": "user"})
    assert first.id != second.id
    assert first.actions is not second.actions
    assert first.actions.state_delta is not second.actions.state_delta
    first.actions.state_delta["k"] = 1
    assert second.actions.state_delta == {}


@pytest.mark.parametrize("cls", [types.GenerateContentConfig, types.Tool])
def test_a_class_with_validators_is_refused(cls: type[Any]) -> None:
    with pytest.raises(TypeError, match="without validation"):
        construct_trusted(cls, {})


def test_a_class_with_private_attributes_is_refused() -> None:
    from eventide.models.openai_llm import OpenAILlm

    with pytest.raises(TypeError, match="without validation"):
        construct_trusted(OpenAILlm, {})


@pytest.mark.parametrize("cls", [types.GenerateContentConfig, EventActions, LlmRequest])
def test_a_blank_record_is_the_validated_empty_one(cls: type[Any]) -> None:
    """``blank(cls)`` (a request's config, a model event's actions) is what ``cls()`` gives,
    with mutable defaults of its own."""
    made, validated = blank(cls), cls()
    assert type(made) is cls
    assert made == validated
    assert made.model_dump_json() == validated.model_dump_json()
    assert made.model_fields_set == set()
    assert list(vars(made)) == list(vars(validated))
    again = blank(cls)
    for name, value in vars(made).items():
        if isinstance(value, dict | list):
            assert value is not vars(again)[name]


class _After(BaseModel):
    value: int = 0

    @model_validator(mode="after")
    def _bump(self) -> _After:
        return self


class _Filling(BaseModel):
    value: int = 0

    @model_validator(mode="before")
    @classmethod
    def _fill(cls, data: Any) -> Any:
        return {**data, "value": 1} if isinstance(data, dict) else data


@pytest.mark.parametrize("cls", [_After, _Filling])
def test_blank_refuses_a_class_whose_validators_may_change_an_empty_input(
    cls: type[Any],
) -> None:
    with pytest.raises(TypeError):
        blank(cls)
