"""The eval-set JSON format: google-adk's files load, round-trip, and accept both cases."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from eventide.evaluation.eval_set import EvalSet, from_either_case, to_camel_json
from eventide.evaluation.store import InvalidEvalFileError, load_eval_set_file

# What `adk web` writes when a session becomes an eval case (recorded from google-adk 2.13
# by running it; shortened): snake_case, intermediate data as invocation events.
ADK_RECORDED: dict[str, Any] = {
    "eval_set_id": "recorded",
    "name": "recorded",
    "eval_cases": [
        {
            "eval_id": "case1",
            "conversation": [
                {
                    "invocation_id": "e-1",
                    "user_content": {"parts": [{"text": "weather in Paris?"}], "role": "user"},
                    "final_response": {
                        "parts": [{"text": "It is sunny in Paris."}],
                        "role": "model",
                    },
                    "intermediate_data": {
                        "invocation_events": [
                            {
                                "author": "weather",
                                "content": {
                                    "parts": [
                                        {
                                            "function_call": {
                                                "id": "adk-1",
                                                "args": {"city": "Paris"},
                                                "name": "get_weather",
                                            }
                                        }
                                    ],
                                    "role": "model",
                                },
                            },
                            {"author": "weather"},
                        ]
                    },
                    "creation_timestamp": 1795498329.97,
                    "app_details": {"agent_details": {"weather": {"name": "weather"}}},
                }
            ],
            "session_input": {"app_name": "weather", "user_id": "u1"},
            "creation_timestamp": 1795498330.85,
            "final_session_state": {"camelKey": 1},
        }
    ],
    "creation_timestamp": 1795498330.47,
}


def test_an_adk_recorded_eval_set_loads_with_its_tool_calls(tmp_path: Path) -> None:
    """A file written by google-adk (invocation_events shape) loads; its tool calls are
    read from the recorded events."""
    path = tmp_path / "recorded.evalset.json"
    path.write_text(json.dumps(ADK_RECORDED))
    eval_set = load_eval_set_file(path)
    invocation = eval_set.eval_cases[0].conversation[0]  # type: ignore[index]
    assert [(c.name, c.args) for c in invocation.tool_calls()] == [
        ("get_weather", {"city": "Paris"})
    ]
    assert invocation.final_text() == "It is sunny in Paris."


def test_round_trip_keeps_fields_eventide_does_not_use() -> None:
    """Unknown fields (app_details, rubrics, ...) survive a load and a save unchanged."""
    eval_set = EvalSet.model_validate(ADK_RECORDED)
    saved = json.loads(eval_set.model_dump_json(exclude_none=True))
    turn = saved["eval_cases"][0]["conversation"][0]
    assert turn["app_details"] == {"agent_details": {"weather": {"name": "weather"}}}
    assert saved["eval_cases"][0]["final_session_state"] == {"camelKey": 1}


def test_camel_case_and_snake_case_read_the_same_and_data_keys_are_kept() -> None:
    """Requests may use camelCase or snake_case; keys inside state and tool arguments are
    user data and keep their spelling both ways."""
    camel = to_camel_json(ADK_RECORDED)
    assert "evalCases" in camel and "evalSetId" in camel
    case = camel["evalCases"][0]
    assert case["finalSessionState"] == {"camelKey": 1}
    call = case["conversation"][0]["intermediateData"]["invocationEvents"][0]["content"]
    assert call["parts"][0]["functionCall"]["args"] == {"city": "Paris"}
    assert EvalSet.model_validate(from_either_case(camel)) == EvalSet.model_validate(ADK_RECORDED)


def test_a_malformed_eval_set_file_is_reported_with_its_path(tmp_path: Path) -> None:
    """A file that is not JSON, or not an eval set, gets an error naming the file."""
    broken = tmp_path / "broken.evalset.json"
    broken.write_text("{not json")
    with pytest.raises(InvalidEvalFileError, match="broken.evalset.json is not valid JSON"):
        load_eval_set_file(broken)
    broken.write_text(json.dumps({"eval_set_id": "x", "eval_cases": "nope"}))
    with pytest.raises(InvalidEvalFileError, match="not a valid eval set"):
        load_eval_set_file(broken)


def test_eval_set_ids_name_files_so_only_safe_characters_are_allowed() -> None:
    """The id becomes <id>.evalset.json: letters, digits and underscores only."""
    for bad in ("../escape", "a b", "", "x.y"):
        with pytest.raises(ValidationError, match="letters, digits and underscores"):
            EvalSet(eval_set_id=bad)
