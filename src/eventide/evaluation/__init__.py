"""Evals: replay recorded conversations against an app and score what it does.

The format is google-adk's eval sets (``*.evalset.json`` in the app's folder), so sets
written for ``adk eval`` run here unchanged; ``eventide eval APP EVALSET`` runs one from the
command line and the dev server's ``/dev/apps/{app}/eval-sets/...`` routes run them from a
browser. Two deterministic metrics score each turn: ``tool_trajectory_avg_score`` (the tool
calls made) and ``response_match_score`` (ROUGE-1 F-measure of the final response).
"""

from eventide.evaluation.eval_set import (
    EvalCase,
    EvalCaseResult,
    EvalMetric,
    EvalMetricResult,
    EvalSet,
    EvalSetResult,
    EvalStatus,
    Invocation,
)
from eventide.evaluation.metrics import METRICS, UnknownMetricError, rouge1_f
from eventide.evaluation.run import invocations_from_events, run_eval_set
from eventide.evaluation.store import (
    EvalStore,
    FolderEvalStore,
    InMemoryEvalStore,
    load_eval_set_file,
)

__all__ = [
    "METRICS",
    "EvalCase",
    "EvalCaseResult",
    "EvalMetric",
    "EvalMetricResult",
    "EvalSet",
    "EvalSetResult",
    "EvalStatus",
    "EvalStore",
    "FolderEvalStore",
    "InMemoryEvalStore",
    "Invocation",
    "UnknownMetricError",
    "invocations_from_events",
    "load_eval_set_file",
    "rouge1_f",
    "run_eval_set",
]
