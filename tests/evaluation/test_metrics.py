"""The two deterministic eval metrics: tool trajectory match and ROUGE-1 response match."""

from __future__ import annotations

import pytest

from eventide.evaluation.eval_set import EvalMetric, EvalStatus, MetricCriterion
from eventide.evaluation.metrics import (
    UnknownMetricError,
    check_metrics,
    rouge1_f,
    tool_trajectory_score,
    verdict,
)
from eventide.types import FunctionCall


def _call(name: str, call_id: str | None = None, **args: object) -> FunctionCall:
    return FunctionCall(id=call_id, name=name, args=dict(args))


def test_rouge1_f_measure_counts_shared_stemmed_words() -> None:
    """response_match_score is ROUGE-1 F: 2PR/(P+R) over lower-cased, stemmed words.

    The figures are the ones google-adk 2.13 reported for the same pairs of texts.
    """
    assert rouge1_f("It is sunny in Paris.", "It is sunny in Paris.") == 1.0
    assert rouge1_f(
        "It is sunny in Paris.", "The weather is sunny in Paris today, friends!"
    ) == pytest.approx(0.6153846, abs=1e-6)
    assert rouge1_f("It is sunny.", "It is sunny in Paris.") == pytest.approx(0.75)
    assert rouge1_f("Running cats are sunnier.", "It is sunny in Paris.") == 0.0


def test_rouge1_stems_long_words_and_ignores_case_and_punctuation() -> None:
    """Words longer than three letters match by stem; case and punctuation do not count."""
    assert rouge1_f("FORECASTS, running!", "forecast run") == 1.0
    assert rouge1_f("", "anything") == 0.0
    assert rouge1_f("anything", "") == 0.0


def test_rouge1_counts_repeated_words_at_most_as_often_as_they_appear() -> None:
    """Overlap is the multiset intersection: a word repeated once more is not a match."""
    # candidate: 3 words, reference: 2; overlap 2 ("yes" once, "no" once)
    assert rouge1_f("yes yes no", "yes no") == pytest.approx(2 * (2 / 3) * 1 / (2 / 3 + 1))


def test_exact_trajectory_needs_the_same_calls_in_the_same_order() -> None:
    """EXACT (the default): same names and arguments, same order, same count; ids ignored."""
    paris, lyon = _call("get_weather", "a", city="Paris"), _call("get_weather", city="Lyon")
    assert tool_trajectory_score([paris], [_call("get_weather", "other-id", city="Paris")]) == 1.0
    assert tool_trajectory_score([paris, lyon], [lyon, paris]) == 0.0
    assert tool_trajectory_score([paris, paris], [paris]) == 0.0
    assert tool_trajectory_score([paris], [lyon]) == 0.0
    assert tool_trajectory_score([], []) == 1.0


def test_argument_order_inside_a_call_does_not_matter() -> None:
    """Arguments are compared as a mapping, not by the order they were written in."""
    one = FunctionCall(name="book", args={"from": "A", "to": "B"})
    two = FunctionCall(name="book", args={"to": "B", "from": "A"})
    assert tool_trajectory_score([one], [two]) == 1.0


def test_in_order_and_any_order_trajectories() -> None:
    """IN_ORDER: expected calls appear in order, extras allowed; ANY_ORDER: all appear."""
    a, b, c = _call("a"), _call("b"), _call("c")
    assert tool_trajectory_score([a, c, b], [a, b], "IN_ORDER") == 1.0
    assert tool_trajectory_score([b, a], [a, b], "IN_ORDER") == 0.0
    assert tool_trajectory_score([b, c, a], [a, b], "ANY_ORDER") == 1.0
    assert tool_trajectory_score([a], [a, a], "ANY_ORDER") == 0.0


def test_threshold_verdicts() -> None:
    """A score at or above the threshold passes; below fails; no score is not evaluated."""
    assert verdict(0.8, 0.8) == EvalStatus.PASSED
    assert verdict(0.79, 0.8) == EvalStatus.FAILED
    assert verdict(None, 0.8) == EvalStatus.NOT_EVALUATED


def test_unknown_metric_and_match_type_are_refused_with_the_known_ones() -> None:
    """Bad metrics are refused before anything runs, naming what is accepted."""
    with pytest.raises(UnknownMetricError, match="response_match_score"):
        check_metrics([EvalMetric(metric_name="safety_v1", threshold=0.5)])
    with pytest.raises(UnknownMetricError, match="IN_ORDER"):
        check_metrics(
            [
                EvalMetric(
                    metric_name="tool_trajectory_avg_score",
                    criterion=MetricCriterion(threshold=1.0, match_type="SOMETIMES"),
                )
            ]
        )
    with pytest.raises(UnknownMetricError, match="at least one"):
        check_metrics([])
