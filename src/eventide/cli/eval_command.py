"""``eventide eval APP EVALSET``: run an eval set against an app and report each case.

EVALSET is an ``*.evalset.json`` file or the id of an eval set in the app's folder,
optionally followed by ``:case1,case2`` to run only those cases. Thresholds come from
``--metric NAME=THRESHOLD``, else from a config file (``--config``, or ``test_config.json``
beside the eval set, google-adk's ``{"criteria": {"metric": threshold}}``), else the
defaults: every turn's tool calls must match exactly (1.0) and its final response must
reach a ROUGE-1 F-measure of 0.8.
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import ValidationError
from rich.console import Console
from rich.markup import escape
from rich.text import Text

from eventide.apps.demo_model import prepare_models
from eventide.apps.loader import resolve_app
from eventide.cli.adk_apps import load_any_app
from eventide.errors import UsageError
from eventide.evaluation.eval_set import (
    EvalCaseResult,
    EvalMetric,
    EvalSet,
    EvalSetResult,
    EvalStatus,
    Invocation,
    from_either_case,
)
from eventide.evaluation.metrics import (
    METRICS,
    RESPONSE_MATCH,
    TOOL_TRAJECTORY,
    UnknownMetricError,
    check_metrics,
)
from eventide.evaluation.run import UnknownEvalCaseError, run_eval_set, select_cases
from eventide.evaluation.store import (
    EVAL_SET_SUFFIX,
    FolderEvalStore,
    InvalidEvalFileError,
    load_eval_set_file,
)
from eventide.types import FunctionCall, JsonValue

__all__ = ["EvalOptions", "run_eval_command"]

_CONFIG_FILE = "test_config.json"
_STATUS = {
    EvalStatus.PASSED: ("PASS", "bold green"),
    EvalStatus.FAILED: ("FAIL", "bold red"),
    EvalStatus.NOT_EVALUATED: ("N/A ", "bold yellow"),
    EvalStatus.INFORMATIONAL: ("INFO", "dim"),
}


@dataclass(slots=True, kw_only=True)
class EvalOptions:
    """The options of ``eventide eval``."""

    app: str
    eval_set: str
    metrics: tuple[str, ...]
    config: Path | None
    details: bool
    save: bool


def run_eval_command(options: EvalOptions, console: Console) -> bool:
    """Run the eval set, print the report and return whether every case passed.

    Raises:
        UsageError: the app, the eval set, a metric or the config is wrong (exit code 2).
    """
    source = resolve_app(options.app)
    app = load_any_app(options.app).app
    eval_set, case_ids, set_path = _find_eval_set(options.eval_set, source.folder)
    metrics = _metrics(options, set_path)
    try:
        check_metrics(metrics)
        cases = select_cases(eval_set, case_ids)
    except (UnknownMetricError, UnknownEvalCaseError) as exc:
        raise UsageError(str(exc)) from exc
    setup = prepare_models(app.root_agent)
    try:
        setup.check_model_names()
        console.print(Text(setup.notice(), style="bold yellow" if setup.uses_demo_model else "dim"))
        result = asyncio.run(
            run_eval_set(
                app_name=app.name,
                agent=app.root_agent,
                plugins=app.plugins,
                eval_set=eval_set,
                cases=cases,
                metrics=metrics,
            )
        )
    finally:
        setup.restore()
    saved = None
    if options.save:
        store = FolderEvalStore(source.folder)
        store.save_result(result)
        saved = store.history / f"{result.eval_set_result_id}.evalset_result.json"
    _report(console, eval_set, result, metrics, options.details, saved)
    return all(r.final_eval_status == EvalStatus.PASSED for r in result.eval_case_results)


def _find_eval_set(text: str, folder: Path) -> tuple[EvalSet, list[str], Path | None]:
    target, _, cases = text.partition(":")
    case_ids = [c.strip() for c in cases.split(",") if c.strip()]
    path = Path(target)
    if not path.is_file():
        candidate = folder / f"{target}{EVAL_SET_SUFFIX}"
        if not candidate.is_file():
            known = sorted(p.name for p in folder.glob(f"*{EVAL_SET_SUFFIX}"))
            raise UsageError(
                f"Eval set {target!r} not found: it is neither a file nor an eval set id of "
                f"the app (looked for {candidate}). Eval sets in {folder}: "
                + (", ".join(known) or "none")
                + "."
            )
        path = candidate
    try:
        return load_eval_set_file(path), case_ids, path
    except (OSError, InvalidEvalFileError) as exc:
        raise UsageError(str(exc)) from exc


def _metrics(options: EvalOptions, set_path: Path | None) -> list[EvalMetric]:
    criteria: dict[str, Any] = {TOOL_TRAJECTORY: 1.0, RESPONSE_MATCH: 0.8}
    config = options.config
    if config is None and set_path is not None and (set_path.parent / _CONFIG_FILE).is_file():
        config = set_path.parent / _CONFIG_FILE
    if config is not None:
        criteria = _read_criteria(config)
    for item in options.metrics:
        name, sep, value = item.partition("=")
        try:
            criteria[name.strip()] = float(value)
        except ValueError:
            sep = ""
        if not sep:
            raise UsageError(
                f"--metric {item!r}: write NAME=THRESHOLD, e.g. --metric {RESPONSE_MATCH}=0.7"
            )
    try:
        return [
            EvalMetric(metric_name=name, threshold=value)
            if isinstance(value, int | float)
            else EvalMetric.model_validate({"metric_name": name, "criterion": value})
            for name, value in criteria.items()
        ]
    except ValidationError as exc:
        raise UsageError(f"Invalid criteria in {config}: {exc}") from exc


def _read_criteria(path: Path) -> dict[str, Any]:
    try:
        data = from_either_case(json.loads(path.read_text(encoding="utf-8")))
    except (OSError, ValueError) as exc:
        raise UsageError(f"Cannot read the eval config {path}: {exc}") from exc
    parsed: JsonValue = data
    criteria = parsed.get("criteria") if isinstance(parsed, dict) else None
    if not isinstance(criteria, dict) or not criteria:
        raise UsageError(
            f'The eval config {path} needs {{"criteria": {{"metric_name": threshold, ...}}}}; '
            "metrics: " + ", ".join(METRICS)
        )
    return dict(criteria)


def _report(
    console: Console,
    eval_set: EvalSet,
    result: EvalSetResult,
    metrics: list[EvalMetric],
    details: bool,
    saved: Path | None,
) -> None:
    console.print(
        Text(
            f"Eval set {eval_set.eval_set_id}: {len(result.eval_case_results)} case(s), "
            + ", ".join(m.metric_name for m in metrics),
            style="bold",
        )
    )
    counts = dict.fromkeys(EvalStatus, 0)
    for case in result.eval_case_results:
        counts[case.final_eval_status] += 1
        label, style = _STATUS[case.final_eval_status]
        line = Text(f"{label}  ", style=style)
        line.append(case.eval_id, style="bold")
        for metric in case.overall_eval_metric_results:
            line.append(f"  {metric.metric_name} {_score(metric.score)}")
            threshold = metric.criterion.threshold if metric.criterion else metric.threshold
            line.append(f" (>= {threshold:.2f})", style="dim")
        console.print(line)
        if case.error_message:
            console.print(Text(f"      error: {case.error_message}", style="red"))
        if details or case.final_eval_status != EvalStatus.PASSED:
            _print_turns(console, case)
    summary = f"{counts[EvalStatus.PASSED]} passed, {counts[EvalStatus.FAILED]} failed"
    if counts[EvalStatus.NOT_EVALUATED]:
        summary += f", {counts[EvalStatus.NOT_EVALUATED]} not evaluated"
    all_passed = counts[EvalStatus.PASSED] == len(result.eval_case_results)
    console.print(Text(summary, style="bold green" if all_passed else "bold red"))
    if saved is not None:
        console.print(Text(f"Result saved to {saved}", style="dim"))


def _print_turns(console: Console, case: EvalCaseResult) -> None:
    for number, turn in enumerate(case.eval_metric_result_per_invocation, start=1):
        expected = turn.expected_invocation
        actual = turn.actual_invocation
        console.print(f"      turn {number}: [italic]{escape(_quote(_user_text(actual)))}[/]")
        for metric in turn.eval_metric_results:
            mark = "ok" if metric.eval_status == EvalStatus.PASSED else "x "
            if metric.metric_name == TOOL_TRAJECTORY:
                want = _calls(expected.tool_calls()) if expected else "-"
                got = _calls(actual.tool_calls())
                console.print(
                    f"        {mark} tools     expected {escape(want)}; got {escape(got)}"
                )
            elif metric.metric_name == RESPONSE_MATCH:
                want = _quote(expected.final_text()) if expected else "-"
                got = _quote(actual.final_text())
                console.print(
                    f"        {mark} response  {_score(metric.score)}  expected "
                    f"{escape(want)}; got {escape(got)}"
                )


def _score(score: float | None) -> str:
    return "n/a" if score is None else f"{score:.2f}"


def _user_text(invocation: Invocation) -> str:
    return "".join(p.text or "" for p in invocation.user_content.parts or ())


def _quote(text: str, limit: int = 80) -> str:
    text = " ".join(text.split())
    return json.dumps(text if len(text) <= limit else text[: limit - 1] + "…", ensure_ascii=False)


def _calls(calls: list[FunctionCall]) -> str:
    if not calls:
        return "(no tool call)"
    return ", ".join(
        f"{c.name}({', '.join(f'{k}={v!r}' for k, v in (c.args or {}).items())})" for c in calls
    )
