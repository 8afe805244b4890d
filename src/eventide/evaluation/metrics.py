"""The metrics an eval run scores: tool trajectory match and response match.

Both are deterministic (no model is asked to judge) and compare one actual invocation with
the expected one; a case's overall score for a metric is the mean over its invocations,
and it passes when that mean is at least the metric's threshold.

- ``tool_trajectory_avg_score``: 1.0 when the tool calls match, else 0.0. A call is its
  tool name and arguments (call ids differ from run to run and are ignored). The match type
  (``criterion.match_type``) is ``EXACT`` by default: the same calls in the same order, no
  more, no fewer; ``IN_ORDER``: the expected calls appear in this order, other calls may
  come between; ``ANY_ORDER``: every expected call appears, in any order.
- ``response_match_score``: ROUGE-1 F-measure of the final response's words against the
  expected final response's, in [0, 1]. Texts are lower-cased, split on anything but
  letters and digits, and words longer than three letters are reduced to their stem (the
  Porter stemmer), so "forecasts" matches "forecast" and "running" matches "run".
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from eventide.errors import UnknownMetricError
from eventide.evaluation.eval_set import EvalMetric, EvalStatus, Invocation
from eventide.types import FunctionCall

__all__ = [
    "METRICS",
    "RESPONSE_MATCH",
    "TOOL_TRAJECTORY",
    "MetricSpec",
    "UnknownMetricError",
    "check_metrics",
    "metrics_info",
    "rouge1_f",
    "score_invocation",
    "tool_trajectory_score",
    "verdict",
]

TOOL_TRAJECTORY = "tool_trajectory_avg_score"
RESPONSE_MATCH = "response_match_score"
MATCH_TYPES = ("EXACT", "IN_ORDER", "ANY_ORDER")


@dataclass(frozen=True, slots=True)
class MetricSpec:
    """A metric Eventide scores: its name, what it measures and its default threshold."""

    name: str
    description: str
    default_threshold: float
    score: Callable[[Invocation, Invocation, EvalMetric], float | None]


def _call_key(call: FunctionCall) -> tuple[str, str]:
    return call.name or "", json.dumps(call.args or {}, sort_keys=True, default=str)


def tool_trajectory_score(
    actual: list[FunctionCall], expected: list[FunctionCall], match_type: str = "EXACT"
) -> float:
    """1.0 when ``actual`` matches ``expected`` under ``match_type``, else 0.0."""
    got = [_call_key(c) for c in actual]
    want = [_call_key(c) for c in expected]
    if match_type == "EXACT":
        return 1.0 if got == want else 0.0
    if match_type == "IN_ORDER":
        remaining = iter(got)
        return 1.0 if all(any(g == w for g in remaining) for w in want) else 0.0
    if match_type == "ANY_ORDER":
        return 1.0 if not Counter(want) - Counter(got) else 0.0
    raise UnknownMetricError(
        f"unknown match_type {match_type!r} for {TOOL_TRAJECTORY}: use one of "
        + ", ".join(MATCH_TYPES)
    )


@lru_cache(maxsize=1)
def _stemmer() -> Any:
    import snowballstemmer

    return snowballstemmer.stemmer("porter")  # pyright: ignore[reportUnknownMemberType]


def _require_stemmer() -> None:
    import importlib.util

    if importlib.util.find_spec("snowballstemmer") is None:
        raise UnknownMetricError(
            f"{RESPONSE_MATCH} needs the 'evals' extra: pip install 'eventide[evals]'"
        )


def _words(text: str) -> list[str]:
    stem = _stemmer().stemWord
    words = re.sub(r"[^a-z0-9]+", " ", text.lower()).split()
    return [stem(w) if len(w) > 3 else w for w in words]


def rouge1_f(candidate: str, reference: str) -> float:
    """ROUGE-1 F-measure of ``candidate`` against ``reference`` (0.0 when either has no word)."""
    got, want = Counter(_words(candidate)), Counter(_words(reference))
    overlap = sum((got & want).values())
    if not overlap:
        return 0.0
    precision = overlap / sum(got.values())
    recall = overlap / sum(want.values())
    return 2 * precision * recall / (precision + recall)


def _trajectory(actual: Invocation, expected: Invocation, metric: EvalMetric) -> float | None:
    criterion = metric.criterion
    match_type = (criterion.match_type if criterion is not None else None) or "EXACT"
    return tool_trajectory_score(actual.tool_calls(), expected.tool_calls(), match_type.upper())


def _response(actual: Invocation, expected: Invocation, metric: EvalMetric) -> float | None:
    if expected.final_response is None:
        return None  # nothing to compare with: this invocation is not evaluated
    return rouge1_f(actual.final_text(), expected.final_text())


METRICS: dict[str, MetricSpec] = {
    spec.name: spec
    for spec in (
        MetricSpec(
            TOOL_TRAJECTORY,
            "Compares the tool calls the agent made with the expected ones (tool name and "
            "arguments; EXACT, IN_ORDER or ANY_ORDER). 1.0 when they match, 0.0 when not; "
            "averaged over the turns. Higher is better.",
            1.0,
            _trajectory,
        ),
        MetricSpec(
            RESPONSE_MATCH,
            "Compares the agent's final response with the expected one by ROUGE-1 "
            "F-measure (shared words, stemmed). Values in [0, 1], averaged over the turns; "
            "closer to 1 is better.",
            0.8,
            _response,
        ),
    )
}


def check_metrics(metrics: list[EvalMetric]) -> None:
    """Raise :class:`UnknownMetricError` unless every metric (and criterion) is scorable."""
    if not metrics:
        raise UnknownMetricError(
            "no metric given: ask for at least one of " + ", ".join(METRICS) + "."
        )
    for metric in metrics:
        if metric.metric_name not in METRICS:
            raise UnknownMetricError(
                f"unknown metric {metric.metric_name!r}: Eventide scores "
                + ", ".join(METRICS)
                + "."
            )
        if metric.metric_name == RESPONSE_MATCH:
            _require_stemmer()
        criterion = metric.criterion
        if criterion is not None and criterion.match_type is not None:
            if criterion.match_type.upper() not in MATCH_TYPES:
                raise UnknownMetricError(
                    f"unknown match_type {criterion.match_type!r} for {metric.metric_name}: "
                    "use one of " + ", ".join(MATCH_TYPES) + "."
                )


def score_invocation(metric: EvalMetric, actual: Invocation, expected: Invocation) -> float | None:
    """The metric's score for one invocation (None: not evaluated)."""
    return METRICS[metric.metric_name].score(actual, expected, metric)


def verdict(score: float | None, threshold: float) -> EvalStatus:
    """PASSED when ``score`` reaches ``threshold``, FAILED below, NOT_EVALUATED without one."""
    if score is None:
        return EvalStatus.NOT_EVALUATED
    return EvalStatus.PASSED if score >= threshold else EvalStatus.FAILED


def metrics_info() -> list[dict[str, Any]]:
    """Every metric as google-adk's ``metrics-info`` lists them (snake_case keys)."""
    return [
        {
            "metric_name": spec.name,
            "description": spec.description,
            "metric_value_info": {
                "interval": {
                    "min_value": 0.0,
                    "open_at_min": False,
                    "max_value": 1.0,
                    "open_at_max": False,
                }
            },
            "requires_threshold": True,
            "default_threshold": spec.default_threshold,
        }
        for spec in METRICS.values()
    ]
