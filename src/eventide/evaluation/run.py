"""Running an eval set: replay each case's conversation against the app and score it.

Each case runs in a fresh session of its own, as the case's ``session_input`` user with its
state: in memory by default (``eventide eval``), or in the session store given (the dev
server passes its own, as ``adk web`` does, so the UI can open the session a case ran in).
Every user message of the case is sent in turn, whatever the agent answered before, and the
turn's events become the *actual* invocation that the metrics compare with the expected one.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import Sequence

from eventide.agents.base_agent import BaseAgent
from eventide.artifacts.base_artifact_service import BaseArtifactService
from eventide.artifacts.in_memory_artifact_service import InMemoryArtifactService
from eventide.errors import UnknownEvalCaseError
from eventide.evaluation.eval_set import (
    DEFAULT_USER_ID,
    EvalCase,
    EvalCaseResult,
    EvalMetric,
    EvalMetricResult,
    EvalMetricResultPerInvocation,
    EvalSet,
    EvalSetResult,
    EvalStatus,
    Invocation,
    InvocationEvent,
    InvocationEvents,
)
from eventide.evaluation.metrics import METRICS, check_metrics, score_invocation, verdict
from eventide.events import Event
from eventide.plugins.base_plugin import BasePlugin
from eventide.runner import Runner
from eventide.sessions.base_session_service import BaseSessionService
from eventide.sessions.in_memory_session_service import InMemorySessionService
from eventide.sessions.session import Session
from eventide.types import Content

__all__ = ["UnknownEvalCaseError", "invocations_from_events", "run_eval_set", "select_cases"]

# Cases of one run that execute at the same time.
_CONCURRENT_CASES = 4


def invocations_from_events(events: Sequence[Event]) -> list[Invocation]:
    """Group a session's events into invocations: the user's message, the agents' events
    in between, and the final response (the last final-response event with content)."""
    groups: dict[str, list[Event]] = {}
    for event in events:
        if not event.partial:
            groups.setdefault(event.invocation_id, []).append(event)
    invocations: list[Invocation] = []
    for group in groups.values():
        user = next((e for e in group if e.author == "user" and e.content is not None), None)
        if user is None or user.content is None:
            continue  # no user message: nothing to replay
        invocations.append(_invocation(user.content, group, user.timestamp))
    return invocations


def _invocation(user_content: Content, events: Sequence[Event], started: float) -> Invocation:
    """One invocation from the user's message and the events the agents answered with."""
    agents = [e for e in events if e.author != "user" and e.content is not None]
    final = next((e for e in reversed(agents) if e.is_final_response()), None)
    intermediate = [
        InvocationEvent(author=e.author, content=e.content) for e in agents if e is not final
    ]
    return Invocation(
        invocation_id=events[0].invocation_id if events else "",
        user_content=user_content,
        final_response=final.content if final is not None else None,
        intermediate_data=InvocationEvents(invocation_events=intermediate),
        creation_timestamp=started,
    )


def select_cases(eval_set: EvalSet, case_ids: Sequence[str]) -> list[EvalCase]:
    """The cases to run: those named (in the set's order), or all when none is named.

    Raises:
        UnknownEvalCaseError: a named case is not in the set.
    """
    if not case_ids:
        return list(eval_set.eval_cases)
    known = {case.eval_id for case in eval_set.eval_cases}
    missing = [case_id for case_id in case_ids if case_id not in known]
    if missing:
        raise UnknownEvalCaseError(
            f"eval set {eval_set.eval_set_id!r} has no case "
            + ", ".join(repr(m) for m in missing)
            + ". Its cases: "
            + (", ".join(repr(k) for k in sorted(known)) or "none")
            + "."
        )
    wanted = set(case_ids)
    return [case for case in eval_set.eval_cases if case.eval_id in wanted]


async def run_eval_set(
    *,
    app_name: str,
    agent: BaseAgent,
    plugins: Sequence[BasePlugin],
    eval_set: EvalSet,
    cases: Sequence[EvalCase],
    metrics: Sequence[EvalMetric],
    session_service: BaseSessionService | None = None,
    artifact_service: BaseArtifactService | None = None,
) -> EvalSetResult:
    """Run ``cases`` of ``eval_set`` against ``agent`` and score them with ``metrics``.

    The runner is built here (on in-memory services unless ``session_service`` and
    ``artifact_service`` are given) and is not closed afterwards: it shares the agent (and
    its toolsets) with the app's own runner.

    Raises:
        UnknownMetricError: a metric Eventide does not score (checked before anything runs).
    """
    check_metrics(list(metrics))
    runner = Runner(
        app_name=app_name,
        agent=agent,
        session_service=session_service or InMemorySessionService(),
        artifact_service=artifact_service or InMemoryArtifactService(),
        plugins=list(plugins),
    )
    limit = asyncio.Semaphore(_CONCURRENT_CASES)

    async def one(case: EvalCase) -> EvalCaseResult:
        async with limit:
            return await _run_case(runner, eval_set.eval_set_id, case, metrics)

    results = await asyncio.gather(*(one(case) for case in cases))
    now = time.time()
    result_id = f"{app_name}_{eval_set.eval_set_id}_{now:.6f}"
    return EvalSetResult(
        eval_set_result_id=result_id,
        eval_set_result_name=result_id,
        eval_set_id=eval_set.eval_set_id,
        eval_case_results=list(results),
        creation_timestamp=now,
    )


async def _run_case(
    runner: Runner, eval_set_id: str, case: EvalCase, metrics: Sequence[EvalMetric]
) -> EvalCaseResult:
    session_input = case.session_input
    user_id = session_input.user_id if session_input is not None else DEFAULT_USER_ID
    state = dict(session_input.state) if session_input is not None else None
    session = await runner.session_service.create_session(
        app_name=runner.app_name,
        user_id=user_id,
        session_id=f"eval-session-{uuid.uuid4()}",
        state=state,
    )
    expected = case.conversation or []
    actual: list[Invocation] = []
    error: str | None = None
    if not expected:
        error = "the case has no conversation to replay (conversation scenarios need a user "
        error += "simulator, which Eventide does not run)"
    for invocation in expected:
        started = time.time()
        try:
            events = [
                event
                async for event in runner.run_async(
                    user_id=user_id, session_id=session.id, new_message=invocation.user_content
                )
                if not event.partial
            ]
        except Exception as exc:  # the agent failed: the case fails and says why
            error = f"turn {len(actual) + 1} failed: {type(exc).__name__}: {exc}"
            break
        actual.append(_invocation(invocation.user_content, events, started))
    per_invocation = [
        EvalMetricResultPerInvocation(
            actual_invocation=got,
            expected_invocation=want,
            eval_metric_results=[_result(m, score_invocation(m, got, want)) for m in metrics],
        )
        for got, want in zip(actual, expected, strict=False)
    ]
    if error is None:
        overall = [_overall(metric, i, per_invocation) for i, metric in enumerate(metrics)]
        final_status = _final_status(overall)
    else:  # the case could not be replayed to its end: every metric fails
        overall = [_result(metric, None, EvalStatus.FAILED) for metric in metrics]
        final_status = EvalStatus.FAILED
    stored = await runner.session_service.get_session(
        app_name=runner.app_name, user_id=user_id, session_id=session.id
    )
    return EvalCaseResult(
        eval_set_file=eval_set_id,
        eval_set_id=eval_set_id,
        eval_id=case.eval_id,
        final_eval_status=final_status,
        overall_eval_metric_results=overall,
        eval_metric_result_per_invocation=per_invocation,
        session_id=session.id,
        session_details=_session_json(stored),
        user_id=user_id,
        error_message=error,
    )


def _threshold(metric: EvalMetric) -> float:
    given = metric.effective_threshold()
    return given if given is not None else METRICS[metric.metric_name].default_threshold


def _result(
    metric: EvalMetric, score: float | None, status: EvalStatus | None = None
) -> EvalMetricResult:
    threshold = _threshold(metric)
    return EvalMetricResult(
        metric_name=metric.metric_name,
        threshold=threshold if metric.criterion is None else None,
        criterion=metric.criterion,
        score=score,
        eval_status=status if status is not None else verdict(score, threshold),
    )


def _overall(
    metric: EvalMetric, index: int, per_invocation: list[EvalMetricResultPerInvocation]
) -> EvalMetricResult:
    scores = [
        r.eval_metric_results[index].score
        for r in per_invocation
        if r.eval_metric_results[index].score is not None
    ]
    mean = sum(s for s in scores if s is not None) / len(scores) if scores else None
    return _result(metric, mean)


def _final_status(overall: list[EvalMetricResult]) -> EvalStatus:
    statuses = {r.eval_status for r in overall}
    if EvalStatus.FAILED in statuses:
        return EvalStatus.FAILED
    if EvalStatus.PASSED in statuses:
        return EvalStatus.PASSED
    return EvalStatus.NOT_EVALUATED


def _session_json(session: Session | None) -> dict[str, object] | None:
    if session is None:
        return None
    return session.model_dump(mode="json", exclude_none=True)
