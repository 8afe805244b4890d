"""Event and EventActions: the spec's structure, `is_final_response()` rules, JSON."""

from __future__ import annotations

import json
from typing import Any

import pytest

from eventide import Event, EventActions, types

# The example events of the spec ("Ejemplos Comunes de Eventos"), as JSON.
SPEC_EXAMPLES: dict[str, dict[str, Any]] = {
    "user_input": {
        "author": "user",
        "invocation_id": "e-xyz...",
        "content": {"parts": [{"text": "Reserva un vuelo a Londres para el próximo martes"}]},
    },
    "final_text": {
        "author": "TravelAgent",
        "invocation_id": "e-xyz...",
        "content": {"parts": [{"text": "Está bien, puedo ayudarte con eso."}]},
        "partial": False,
        "turn_complete": True,
    },
    "streaming_text": {
        "author": "SummaryAgent",
        "invocation_id": "e-abc...",
        "content": {"parts": [{"text": "El documento discute tres puntos principales:"}]},
        "partial": True,
        "turn_complete": False,
    },
    "tool_call": {
        "author": "TravelAgent",
        "invocation_id": "e-xyz...",
        "content": {
            "parts": [{"function_call": {"name": "find_airports", "args": {"city": "London"}}}]
        },
    },
    "tool_result": {
        "author": "TravelAgent",
        "invocation_id": "e-xyz...",
        "content": {
            "role": "user",
            "parts": [
                {
                    "function_response": {
                        "name": "find_airports",
                        "response": {"result": ["LHR", "LGW", "STN"]},
                    }
                }
            ],
        },
    },
    "state_only": {
        "author": "InternalUpdater",
        "invocation_id": "e-def...",
        "content": None,
        "actions": {
            "state_delta": {"user_status": "verified"},
            "artifact_delta": {"verification_doc.pdf": 2},
        },
    },
    "transfer": {
        "author": "OrchestratorAgent",
        "invocation_id": "e-789...",
        "content": {
            "parts": [
                {
                    "function_call": {
                        "name": "transfer_to_agent",
                        "args": {"agent_name": "BillingAgent"},
                    }
                }
            ]
        },
        "actions": {"transfer_to_agent": "BillingAgent"},
    },
    "escalation": {
        "author": "CheckerAgent",
        "invocation_id": "e-loop...",
        "content": {"parts": [{"text": "Se alcanzó el máximo de reintentos."}]},
        "actions": {"escalate": True},
    },
    "error": {
        "author": "LLMAgent",
        "invocation_id": "e-err...",
        "content": None,
        "error_code": "SAFETY_FILTER_TRIGGERED",
        "error_message": "Respuesta bloqueada debido a configuraciones de seguridad.",
        "actions": {},
    },
}

# is_final_response() per example, as the spec annotates them.
SPEC_FINALITY = {
    "final_text": True,
    "streaming_text": False,
    "tool_call": False,
    "tool_result": False,  # depends on skip_summarization, unset here
    "transfer": False,
}


@pytest.mark.parametrize("name", sorted(SPEC_EXAMPLES))
def test_spec_example_event_json_round_trips(name: str) -> None:
    """Spec "Ejemplos Comunes de Eventos": each example parses, and re-emitting it keeps every
    field it had (stable JSON round trip)."""
    data = SPEC_EXAMPLES[name]
    event = Event.model_validate(data)
    emitted = json.loads(event.model_dump_json())
    for key, value in data.items():
        if value is None:
            assert emitted[key] is None
        elif key == "actions":
            for action_key, action_value in value.items():
                assert emitted["actions"][action_key] == action_value
        elif key == "content":
            assert _strip_none(emitted["content"]) == value
        else:
            assert emitted[key] == value
    again = Event.model_validate_json(event.model_dump_json())
    assert again == event


def _strip_none(value: object) -> object:
    if isinstance(value, dict):
        return {k: _strip_none(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [_strip_none(v) for v in value]
    return value


@pytest.mark.parametrize("name", sorted(SPEC_FINALITY))
def test_spec_examples_finality(name: str) -> None:
    """Spec: the is_final_response() value the spec gives next to each example event."""
    assert Event.model_validate(SPEC_EXAMPLES[name]).is_final_response() is SPEC_FINALITY[name]


def _event(*parts: types.Part, **fields: Any) -> Event:
    return Event(author="agent", content=types.Content(role="model", parts=list(parts)), **fields)


CALL = types.Part(function_call=types.FunctionCall(id="c1", name="tool", args={}))
RESPONSE = types.Part(function_response=types.FunctionResponse(id="c1", name="tool", response={}))
TEXT = types.Part(text="hello")
CODE_RESULT = types.Part(
    code_execution_result=types.CodeExecutionResult(outcome="OUTCOME_OK", output="4")
)


def test_final_rule_1_function_response_with_skip_summarization() -> None:
    """Spec is_final_response rule 1: a function response with skip_summarization is final;
    without it, it is not."""
    assert _event(RESPONSE, actions=EventActions(skip_summarization=True)).is_final_response()
    assert not _event(RESPONSE).is_final_response()


def test_final_rule_2_long_running_tool_call() -> None:
    """Spec is_final_response rule 2: a call of a long-running tool (its id in
    long_running_tool_ids) is final; a plain call is not."""
    assert _event(CALL, long_running_tool_ids={"c1"}).is_final_response()
    assert not _event(CALL).is_final_response()


def test_final_rule_3_each_condition() -> None:
    """Spec is_final_response rule 3: final only with no calls, no responses, not partial,
    and no trailing code-execution result."""
    assert _event(TEXT).is_final_response()
    assert not _event(TEXT, partial=True).is_final_response()
    assert not _event(TEXT, CALL).is_final_response()
    assert not _event(TEXT, RESPONSE).is_final_response()
    assert not _event(TEXT, CODE_RESULT).is_final_response()
    assert _event(CODE_RESULT, TEXT).is_final_response()
    # No content at all (a state-only event) is final by rule 3 too.
    assert Event(author="a", actions=EventActions(state_delta={"k": 1})).is_final_response()


def test_finality_rules_over_every_combination() -> None:
    """The three rules together, over every mix of parts (in both orders), partial, skip
    and long-running ids: final exactly when one of them says so."""
    import itertools

    for parts in itertools.chain.from_iterable(
        itertools.permutations([TEXT, CALL, RESPONSE, CODE_RESULT], size) for size in range(3)
    ):
        for partial, skip, long_running in itertools.product((False, True), repeat=3):
            event = _event(
                *parts,
                partial=partial,
                actions=EventActions(skip_summarization=skip or None),
                long_running_tool_ids={"c1"} if long_running else None,
            )
            calls = CALL in parts
            responses = RESPONSE in parts
            trailing = bool(parts) and parts[-1] is CODE_RESULT
            expected = (
                (skip and responses)
                or long_running
                or not (calls or responses or partial or trailing)
            )
            assert event.is_final_response() is expected, (parts, partial, skip, long_running)


def test_function_calls_and_responses_accessors() -> None:
    """Spec "Extraer Información Clave": get_function_calls() / get_function_responses() list
    the parts in order, each with name and args/response; empty lists when absent."""
    call2 = types.Part(function_call=types.FunctionCall(id="c2", name="other", args={"x": 1}))
    event = _event(TEXT, CALL, call2)
    assert [(c.name, c.args) for c in event.get_function_calls()] == [
        ("tool", {}),
        ("other", {"x": 1}),
    ]
    assert event.get_function_responses() == []
    assert Event(author="a").get_function_calls() == []
    assert _event(CODE_RESULT).has_trailing_code_execution_result()
    assert not _event(CODE_RESULT, TEXT).has_trailing_code_execution_result()


def test_event_ids_are_unique_and_timestamped() -> None:
    """Spec: event.id is unique per event; timestamp is the creation time."""
    events = [Event(author="a") for _ in range(1000)]
    assert len({e.id for e in events}) == 1000
    assert all(e.timestamp > 1_600_000_000 for e in events)


def test_actions_defaults_and_merge() -> None:
    """EventActions: empty deltas by default; merge folds another object's actions in."""
    actions = EventActions()
    assert actions.state_delta == {} and actions.artifact_delta == {} and actions.is_empty()
    actions.merge(EventActions(state_delta={"a": 1}, artifact_delta={"f": 0}, escalate=True))
    actions.merge(EventActions(state_delta={"b": 2}, transfer_to_agent="x"))
    assert actions.state_delta == {"a": 1, "b": 2}
    assert actions.escalate and actions.transfer_to_agent == "x"
    assert not actions.is_empty()


def test_bytes_travel_as_base64() -> None:
    """Inline data round-trips through JSON as base64, like the Gemini API."""
    event = _event(types.Part.from_bytes(data=b"\x00\xffpng", mime_type="image/png"))
    data = json.loads(event.model_dump_json())
    assert data["content"]["parts"][0]["inline_data"]["data"] == "AP9wbmc="
    assert Event.model_validate_json(event.model_dump_json()) == event
