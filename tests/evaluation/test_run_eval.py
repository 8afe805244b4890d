"""Running eval sets against a real app: replaying turns, scoring, failures."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from eventide.apps import App
from eventide.apps.loader import load_app
from eventide.evaluation.eval_set import (
    EvalCaseResult,
    EvalMetric,
    EvalSet,
    EvalStatus,
    MetricCriterion,
)
from eventide.evaluation.run import run_eval_set
from tests.evaluation.weather_app import turn, write_weather_app

TRAJECTORY = EvalMetric(metric_name="tool_trajectory_avg_score", threshold=1.0)
RESPONSE = EvalMetric(metric_name="response_match_score", threshold=0.8)


@pytest.fixture
def weather(tmp_path: Path) -> Iterator[App]:
    saved = list(sys.path)
    try:
        yield load_app(write_weather_app(tmp_path))
    finally:
        sys.path[:] = saved


async def _run(app: App, eval_set: EvalSet, metrics: list[EvalMetric]) -> list[EvalCaseResult]:
    result = await run_eval_set(
        app_name="weather",
        agent=app.root_agent,
        plugins=app.plugins,
        eval_set=eval_set,
        cases=eval_set.eval_cases,
        metrics=metrics,
    )
    return list(result.eval_case_results)


async def test_a_matching_case_passes_and_a_wrong_tool_argument_fails(weather: App) -> None:
    """Each turn's tool calls and final response are scored against the expected ones; a
    case passes only when every metric reaches its threshold."""
    eval_set = EvalSet.model_validate(
        {
            "eval_set_id": "s",
            "eval_cases": [
                {
                    "eval_id": "good",
                    "conversation": [
                        turn(
                            "weather in Paris?",
                            "It is sunny in Paris.",
                            [("get_weather", {"city": "Paris"})],
                        )
                    ],
                },
                {
                    "eval_id": "bad_args",
                    "conversation": [
                        turn(
                            "weather in Lyon?",
                            "It is sunny in Lyon.",
                            [("get_weather", {"city": "Paris"})],
                        )
                    ],
                },
            ],
        }
    )
    good, bad = await _run(weather, eval_set, [TRAJECTORY, RESPONSE])
    assert good.eval_id == "good" and good.final_eval_status == EvalStatus.PASSED
    assert bad.final_eval_status == EvalStatus.FAILED
    trajectory, response = bad.overall_eval_metric_results
    assert (trajectory.score, trajectory.eval_status) == (0.0, EvalStatus.FAILED)
    assert (response.score, response.eval_status) == (1.0, EvalStatus.PASSED)
    actual = bad.eval_metric_result_per_invocation[0].actual_invocation
    assert [(c.name, c.args) for c in actual.tool_calls()] == [("get_weather", {"city": "Lyon"})]
    assert actual.final_text() == "It is sunny in Lyon."


async def test_multi_turn_scores_are_averaged_over_turns(weather: App) -> None:
    """A case's overall score for a metric is the mean of its turns' scores."""
    eval_set = EvalSet.model_validate(
        {
            "eval_set_id": "s",
            "eval_cases": [
                {
                    "eval_id": "two",
                    "conversation": [
                        turn(
                            "weather in Rome?",
                            "It is sunny in Rome.",
                            [("get_weather", {"city": "Rome"})],
                        ),
                        turn("thanks", "You said: thanks", [("get_weather", {"city": "Rome"})]),
                    ],
                }
            ],
        }
    )
    (case,) = await _run(weather, eval_set, [TRAJECTORY])
    (overall,) = case.overall_eval_metric_results
    per_turn = [r.eval_metric_results[0].score for r in case.eval_metric_result_per_invocation]
    assert per_turn == [1.0, 0.0]
    assert overall.score == 0.5 and overall.eval_status == EvalStatus.FAILED


async def test_in_order_criterion_accepts_extra_calls(weather: App) -> None:
    """criterion.match_type IN_ORDER lets the agent make calls beyond the expected ones."""
    eval_set = EvalSet.model_validate(
        {
            "eval_set_id": "s",
            "eval_cases": [{"eval_id": "c", "conversation": [turn("weather in Oslo?", None, [])]}],
        }
    )
    in_order = EvalMetric(
        metric_name="tool_trajectory_avg_score",
        criterion=MetricCriterion(threshold=1.0, match_type="IN_ORDER"),
    )
    (case,) = await _run(weather, eval_set, [in_order, RESPONSE])
    trajectory, response = case.overall_eval_metric_results
    assert trajectory.eval_status == EvalStatus.PASSED  # expected nothing, got one call
    # No expected final response: that metric is not evaluated, not failed.
    assert response.eval_status == EvalStatus.NOT_EVALUATED and response.score is None
    assert case.final_eval_status == EvalStatus.PASSED


async def test_a_failing_turn_fails_the_case_with_the_reason(weather: App) -> None:
    """When the agent raises, the case fails and its result says which turn and why."""
    eval_set = EvalSet.model_validate(
        {
            "eval_set_id": "s",
            "eval_cases": [
                {
                    "eval_id": "boom",
                    "conversation": [
                        turn("weather in Explode?", "x", [("get_weather", {"city": "Explode"})])
                    ],
                }
            ],
        }
    )
    (case,) = await _run(weather, eval_set, [TRAJECTORY])
    assert case.final_eval_status == EvalStatus.FAILED
    assert case.error_message is not None and "turn 1 failed" in case.error_message
    assert "weather service is down" in case.error_message


async def test_cases_run_as_their_session_input_user_with_its_state(weather: App) -> None:
    """session_input gives the user id and initial state of the case's fresh session."""
    eval_set = EvalSet.model_validate(
        {
            "eval_set_id": "s",
            "eval_cases": [
                {
                    "eval_id": "c",
                    "conversation": [turn("hi", "You said: hi", [])],
                    "session_input": {
                        "app_name": "weather",
                        "user_id": "alice",
                        "state": {"tier": "gold"},
                    },
                },
                {"eval_id": "d", "conversation": [turn("hi", "You said: hi", [])]},
            ],
        }
    )
    with_input, without = await _run(weather, eval_set, [RESPONSE])
    assert with_input.user_id == "alice"
    assert with_input.session_details is not None
    assert with_input.session_details["state"] == {"tier": "gold"}
    assert without.user_id == "test_user_id"
