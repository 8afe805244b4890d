"""Eval routes of the dev server, at the paths, with the methods and JSON of ``adk web``.

Under ``/dev/apps/{app_name}``: eval sets (``eval-sets``; the older ``eval_sets`` paths
too), their cases (``eval-cases``, older ``evals``), adding a recorded session as a case,
runs (``.../run``, older ``.../run_eval``), stored results (``eval-results``, older
``eval_results``) and the metrics Eventide scores (``metrics-info``). Responses are
camelCase as google-adk sends them (the created eval set is snake_case, as google-adk
answers it); requests may use either case. Bad input gets a 4xx whose message says what to
fix, and nothing is stored: every eval set and metric is checked before anything is
written or run.

Request bodies are strict, as on the other routes: a key no route field and no google-adk
field of that record has is a 422 naming it (the stored files stay open to unknown fields,
so that files written by newer tools round-trip), and a value of the wrong type is a 422.
A metric's ``criterion`` keeps any key: google-adk's criteria are a family whose members
add their own settings.
"""

from __future__ import annotations

import difflib
import json
import time
from pathlib import Path
from typing import Any, TypeVar, cast

from fastapi import FastAPI, HTTPException, Request, Response
from pydantic import BaseModel, ValidationError

from eventide.errors import AppLoadError, AppNotFoundError
from eventide.evaluation.eval_set import (
    EvalCase,
    EvalMetric,
    EvalSet,
    EvalSetResult,
    Invocation,
    SessionInput,
    check_eval_set_id,
    from_either_case,
    to_camel_json,
)
from eventide.evaluation.metrics import UnknownMetricError, check_metrics, metrics_info
from eventide.evaluation.run import (
    UnknownEvalCaseError,
    invocations_from_events,
    run_eval_set,
    select_cases,
)
from eventide.evaluation.store import (
    EvalSetExistsError,
    EvalStore,
    FolderEvalStore,
    InMemoryEvalStore,
    InvalidEvalFileError,
    UnknownEvalResultError,
    UnknownEvalSetError,
)
from eventide.server.app_registry import AppRegistry
from eventide.server.json_responses import app_load_failed, known_app, read_json
from eventide.server.request_limits import id_problem
from eventide.types import JsonValue

__all__ = ["add_eval_routes"]

_APP = "/dev/apps/{app_name}"
_M = TypeVar("_M", bound=BaseModel)
_TAGS: list[str | Any] = ["evals"]


def _json(data: Any, status: int = 200) -> Response:
    return Response(json.dumps(data), status, media_type="application/json")


def _camel(record: BaseModel) -> Any:
    return to_camel_json(record.model_dump(mode="json", exclude_none=True))


def _unprocessable(location: list[str | int], message: str) -> HTTPException:
    return HTTPException(422, detail=[{"type": "value_error", "loc": location, "msg": message}])


async def _body(request: Request) -> Any:
    data = await read_json(request, required=False)
    return None if data is None else from_either_case(data)


def _validate(model: type[_M], data: Any, where: str) -> _M:
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        raise HTTPException(
            422,
            detail=[
                {
                    "type": error["type"],
                    "loc": ["body", where, *error["loc"]],
                    "msg": f"{where}: {error['msg']}",
                }
                for error in exc.errors(include_url=False, include_input=False)
            ],
        ) from exc


def _field(data: JsonValue, name: str) -> Any:
    if not isinstance(data, dict):
        raise _unprocessable(["body"], f"the body must be a JSON object with {name!r}")
    if name not in data:
        raise _unprocessable(["body", name], f"missing field {name!r}")
    return data[name]


# The fields google-adk's records have besides Eventide's: accepted in request bodies (and
# kept), so that a case google-adk wrote, read back and sent again is not refused.
_ADK_ONLY: dict[type[BaseModel], frozenset[str]] = {
    # google-adk's web UI creates a set with both modes ("live"); its server ignores them.
    EvalSet: frozenset({"model_execution_mode", "tool_execution_mode"}),
    EvalCase: frozenset({"conversation_scenario", "rubrics"}),
    Invocation: frozenset(
        {"duration", "model_duration", "tool_duration", "rubrics", "app_details"}
    ),
    SessionInput: frozenset({"session_id"}),
    EvalMetric: frozenset(),
}


def _only(body: Any, known: tuple[str, ...], where: str) -> dict[str, Any]:
    """``body`` (snake_case keys) as a JSON object with no key but ``known``: else a 422
    naming the unknown keys, as the other routes answer a typo."""
    if not isinstance(body, dict):
        raise _unprocessable(["body"], f"the body must be a JSON object ({where})")
    data = cast("dict[str, Any]", body)
    unknown = sorted(data.keys() - set(known))
    if unknown:
        raise _unprocessable(["body", unknown[0]], _unknown_keys(unknown, known))
    return data


def _unknown_keys(unknown: list[str], known: tuple[str, ...]) -> str:
    spelled = [_camel_name(name) for name in known]
    named: list[str] = []
    for key in unknown:
        close = difflib.get_close_matches(_camel_name(key), spelled, n=1, cutoff=0.6)
        named.append(f"{_camel_name(key)!r}" + (f" (did you mean {close[0]!r}?)" if close else ""))
    plural = "s" if len(unknown) > 1 else ""
    return f"Unknown key{plural} {', '.join(named)}; the body's keys are {', '.join(spelled)}."


def _camel_name(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(word[:1].upper() + word[1:] for word in rest)


def _strict(record: _M, where: list[str | int]) -> _M:
    """``record``, validated from a request, with no field its model and google-adk's lack
    (at any depth): else a 422 naming the first one and where it is."""
    for location, extra in _unknown_fields(record, where):
        path = ".".join(str(p) for p in location[1:])
        raise _unprocessable([*location, extra], f"{path}: unknown field {_camel_name(extra)!r}")
    return record


def _unknown_fields(record: BaseModel, where: list[str | int]) -> list[tuple[list[str | int], str]]:
    allowed = _ADK_ONLY.get(type(record), frozenset())
    found = [(where, key) for key in record.model_extra or {} if key not in allowed]
    for name in type(record).model_fields:
        value: object = getattr(record, name)
        items: list[tuple[int | None, object]] = (
            list(enumerate(cast("list[object]", value)))
            if isinstance(value, list)
            else [(None, value)]
        )
        for index, item in items:
            # A metric's criterion is not walked: an open family (the module docstring).
            if isinstance(item, BaseModel) and type(item) in _ADK_ONLY:
                at = [*where, _camel_name(name), *([] if index is None else [index])]
                found += _unknown_fields(item, at)
    return found


class _Evals:
    """Per-app eval stores and the route handlers' shared steps."""

    def __init__(self, registry: AppRegistry) -> None:
        self.registry = registry
        self._stores: dict[str, EvalStore] = {}

    def store(self, app_name: str) -> EvalStore:
        known_app(self.registry, app_name)
        store = self._stores.get(app_name)
        if store is None:
            folder: Path | None = self.registry.folder(app_name)
            store = FolderEvalStore(folder) if folder is not None else InMemoryEvalStore()
            self._stores[app_name] = store
        return store

    def eval_set(self, app_name: str, eval_set_id: str, *, missing: int = 400) -> EvalSet:
        store = self.store(app_name)
        try:
            return store.get_eval_set(eval_set_id)
        except UnknownEvalSetError as exc:
            raise HTTPException(
                missing,
                detail=f"Eval set {eval_set_id!r} not found for app {app_name!r}. Its eval "
                f"sets: {', '.join(store.list_eval_sets()) or 'none'}; create one with POST "
                f"/dev/apps/{app_name}/eval-sets.",
            ) from exc
        except InvalidEvalFileError as exc:
            raise HTTPException(422, detail=f"{exc}. Fix or delete the file.") from exc

    def case(self, app_name: str, eval_set_id: str, eval_case_id: str) -> EvalCase:
        case = self.eval_set(app_name, eval_set_id, missing=404).case(eval_case_id)
        if case is None:
            raise HTTPException(
                404, detail=f"Eval case {eval_case_id!r} not found in eval set {eval_set_id!r}."
            )
        return case

    async def create(self, app_name: str, eval_set: EvalSet) -> EvalSet:
        problem = id_problem("eval set id", eval_set.eval_set_id)
        if problem is not None:
            raise _unprocessable(["body", "evalSet", "evalSetId"], problem)
        if eval_set.name is None:
            eval_set.name = eval_set.eval_set_id
        if not eval_set.creation_timestamp:
            eval_set.creation_timestamp = time.time()
        try:
            return await self.store(app_name).create_eval_set(eval_set)
        except EvalSetExistsError as exc:
            raise HTTPException(400, detail=f"Eval set {exc}.") from exc

    async def add_session(self, app_name: str, eval_set_id: str, body: Any) -> None:
        _only(body, ("eval_id", "session_id", "user_id"), "evalId, sessionId and userId")
        eval_id = _field(body, "eval_id")
        session_id = _field(body, "session_id")
        user_id = _field(body, "user_id")
        if not all(isinstance(v, str) and v for v in (eval_id, session_id, user_id)):
            raise _unprocessable(["body"], "eval_id, session_id and user_id must be strings")
        eval_set = self.eval_set(app_name, eval_set_id)
        if eval_set.case(eval_id) is not None:
            raise HTTPException(
                400, detail=f"Eval case {eval_id!r} already exists in eval set {eval_set_id!r}."
            )
        session = await self.registry.services.session_service.get_session(
            app_name=app_name, user_id=user_id, session_id=session_id
        )
        if session is None:
            raise HTTPException(
                404,
                detail=f"Session {session_id!r} not found for app {app_name!r} and user "
                f"{user_id!r}.",
            )
        state = {k: v for k, v in session.state.items() if not k.startswith("temp:")}
        eval_set.eval_cases.append(
            EvalCase(
                eval_id=eval_id,
                conversation=invocations_from_events(session.events),
                session_input=SessionInput(app_name=app_name, user_id=user_id),
                creation_timestamp=time.time(),
                final_session_state=state,
            )
        )
        await self.store(app_name).replace_eval_set(eval_set)

    async def update_case(
        self, app_name: str, eval_set_id: str, eval_case_id: str, body: Any
    ) -> None:
        case = _strict(_validate(EvalCase, body, "eval case"), ["body"])
        if case.eval_id != eval_case_id:
            raise HTTPException(
                400,
                detail=f"The eval case's evalId {case.eval_id!r} differs from the one in the "
                f"path ({eval_case_id!r}); they must be the same.",
            )
        eval_set = self.eval_set(app_name, eval_set_id, missing=404)
        index = next(
            (i for i, c in enumerate(eval_set.eval_cases) if c.eval_id == eval_case_id), None
        )
        if index is None:
            raise HTTPException(
                404, detail=f"Eval case {eval_case_id!r} not found in eval set {eval_set_id!r}."
            )
        eval_set.eval_cases[index] = case
        await self.store(app_name).replace_eval_set(eval_set)

    async def delete_case(self, app_name: str, eval_set_id: str, eval_case_id: str) -> None:
        self.case(app_name, eval_set_id, eval_case_id)  # 404 when missing
        eval_set = self.eval_set(app_name, eval_set_id, missing=404)
        eval_set.eval_cases = [c for c in eval_set.eval_cases if c.eval_id != eval_case_id]
        await self.store(app_name).replace_eval_set(eval_set)

    async def run(self, app_name: str, eval_set_id: str, body: JsonValue) -> EvalSetResult:
        _only(body, ("eval_metrics", "eval_case_ids", "eval_ids"), "with evalMetrics")
        if not isinstance(body, dict):  # _only said so; narrows the type
            raise _unprocessable(["body"], "the body must be a JSON object with evalMetrics")
        metrics_data: JsonValue = _field(body, "eval_metrics")
        if not isinstance(metrics_data, list):
            raise _unprocessable(["body", "eval_metrics"], "evalMetrics must be a list")
        metrics = [
            _strict(_validate(EvalMetric, m, "eval metric"), ["body", "evalMetrics", index])
            for index, m in enumerate(metrics_data)
        ]
        requested = body.get("eval_case_ids") or body.get("eval_ids") or []
        if not isinstance(requested, list) or not all(isinstance(c, str) for c in requested):
            raise _unprocessable(["body", "eval_case_ids"], "evalCaseIds must be strings")
        case_ids = [str(c) for c in requested]
        try:
            check_metrics(metrics)
        except UnknownMetricError as exc:
            raise HTTPException(400, detail=str(exc)) from exc
        eval_set = self.eval_set(app_name, eval_set_id)
        try:
            cases = select_cases(eval_set, case_ids)
        except UnknownEvalCaseError as exc:
            raise HTTPException(400, detail=str(exc)) from exc
        try:
            app = await self.registry.app(app_name)
        except AppNotFoundError as exc:
            raise HTTPException(404, detail=str(exc)) from exc
        except AppLoadError as exc:
            raise app_load_failed(app_name, exc) from exc
        # As `adk web` does: cases run in the server's own stores, with its plugins (traces),
        # so the UI can open the session each case ran in, and its trace.
        services = self.registry.services
        result = await run_eval_set(
            app_name=app_name,
            agent=app.root_agent,
            plugins=[*app.plugins, *self.registry.server_plugins],
            eval_set=eval_set,
            cases=cases,
            metrics=metrics,
            session_service=services.session_service,
            artifact_service=services.artifact_service,
        )
        self.store(app_name).save_result(result)
        return result

    def result(self, app_name: str, result_id: str) -> EvalSetResult:
        try:
            return self.store(app_name).get_result(result_id)
        except UnknownEvalResultError as exc:
            raise HTTPException(
                404,
                detail=f"Eval result {result_id!r} not found for app {app_name!r}; list them "
                f"with GET /dev/apps/{app_name}/eval-results.",
            ) from exc
        except InvalidEvalFileError as exc:
            raise HTTPException(422, detail=str(exc)) from exc


def _run_results(result: EvalSetResult) -> list[Any]:
    """The run's case results as google-adk answers a run (no session details)."""
    answers: list[Any] = []
    for case in result.eval_case_results:
        data = _camel(case)
        data.pop("sessionDetails", None)
        data["evalMetricResults"] = []
        answers.append(data)
    return answers


def add_eval_routes(api: FastAPI, registry: AppRegistry) -> None:
    """Register the eval routes on ``api``."""
    evals = _Evals(registry)

    @api.post(_APP + "/eval-sets", tags=_TAGS, summary="Create an eval set")
    async def create_eval_set(app_name: str, request: Request) -> Response:
        """Body ``{"evalSet": {"eval_set_id": ..., "eval_cases": [...]}}``."""
        body = _only(await _body(request), ("eval_set",), 'as {"evalSet": {...}}')
        data = _field(body, "eval_set")
        eval_set = _strict(_validate(EvalSet, data, "evalSet"), ["body", "evalSet"])
        created = await evals.create(app_name, eval_set)
        return _json(created.model_dump(mode="json", exclude_none=True))

    @api.get(_APP + "/eval-sets", tags=_TAGS, summary="List eval sets")
    async def list_eval_sets(app_name: str) -> Response:
        return _json({"evalSetIds": evals.store(app_name).list_eval_sets()})

    @api.post(_APP + "/eval_sets/{eval_set_id}", tags=_TAGS, summary="Create an empty eval set")
    async def create_eval_set_legacy(app_name: str, eval_set_id: str) -> Response:
        try:
            check_eval_set_id(eval_set_id)
        except ValueError as exc:
            raise HTTPException(400, detail=str(exc)) from exc
        await evals.create(app_name, EvalSet(eval_set_id=eval_set_id))
        return _json(None)

    @api.get(_APP + "/eval_sets", tags=_TAGS, summary="List eval sets (older path)")
    async def list_eval_sets_legacy(app_name: str) -> Response:
        return _json(evals.store(app_name).list_eval_sets())

    for path, name in (
        ("/eval-sets/{eval_set_id}/add-session", "add_session"),
        ("/eval_sets/{eval_set_id}/add_session", "add_session_legacy"),
    ):

        @api.post(_APP + path, name=name, tags=_TAGS, summary="Add a session as an eval case")
        async def add_session(app_name: str, eval_set_id: str, request: Request) -> Response:
            """Body ``{"evalId": ..., "sessionId": ..., "userId": ...}``: the session's
            turns become the case's conversation, what the agent did the expected behaviour."""
            await evals.add_session(app_name, eval_set_id, await _body(request))
            return _json(None)

    @api.get(_APP + "/eval_sets/{eval_set_id}/evals", tags=_TAGS, summary="List eval cases")
    async def list_cases(app_name: str, eval_set_id: str) -> Response:
        eval_set = evals.eval_set(app_name, eval_set_id)
        return _json(sorted(case.eval_id for case in eval_set.eval_cases))

    for path, suffix in (
        ("/eval-sets/{eval_set_id}/eval-cases/{eval_case_id}", ""),
        ("/eval_sets/{eval_set_id}/evals/{eval_case_id}", "_legacy"),
    ):

        @api.get(_APP + path, name="get_case" + suffix, tags=_TAGS, summary="Get an eval case")
        async def get_case(app_name: str, eval_set_id: str, eval_case_id: str) -> Response:
            return _json(_camel(evals.case(app_name, eval_set_id, eval_case_id)))

        @api.put(
            _APP + path, name="update_case" + suffix, tags=_TAGS, summary="Replace an eval case"
        )
        async def update_case(
            app_name: str, eval_set_id: str, eval_case_id: str, request: Request
        ) -> Response:
            body = await _body(request)
            await evals.update_case(app_name, eval_set_id, eval_case_id, body)
            return _json(None)

        @api.delete(
            _APP + path, name="delete_case" + suffix, tags=_TAGS, summary="Delete an eval case"
        )
        async def delete_case(app_name: str, eval_set_id: str, eval_case_id: str) -> Response:
            await evals.delete_case(app_name, eval_set_id, eval_case_id)
            return _json(None)

    @api.post(_APP + "/eval-sets/{eval_set_id}/run", tags=_TAGS, summary="Run an eval set")
    async def run_eval(app_name: str, eval_set_id: str, request: Request) -> Response:
        """Body ``{"evalMetrics": [{"metricName": ..., "threshold": ...}], "evalCaseIds":
        [...]}`` (all cases when none is named). The result is stored and returned."""
        result = await evals.run(app_name, eval_set_id, await _body(request))
        return _json({"runEvalResults": _run_results(result)})

    @api.post(_APP + "/eval_sets/{eval_set_id}/run_eval", tags=_TAGS, summary="Run an eval set")
    async def run_eval_legacy(app_name: str, eval_set_id: str, request: Request) -> Response:
        result = await evals.run(app_name, eval_set_id, await _body(request))
        return _json(_run_results(result))

    for path, name in (
        ("/eval-results/{eval_result_id}", "get_result"),
        ("/eval_results/{eval_result_id}", "get_result_legacy"),
    ):

        @api.get(_APP + path, name=name, tags=_TAGS, summary="Get a stored eval result")
        async def get_result(app_name: str, eval_result_id: str) -> Response:
            return _json(_camel(evals.result(app_name, eval_result_id)))

    @api.get(_APP + "/eval-results", tags=_TAGS, summary="List stored eval results")
    async def list_results(app_name: str) -> Response:
        return _json({"evalResultIds": evals.store(app_name).list_results()})

    @api.get(_APP + "/eval_results", tags=_TAGS, summary="List stored eval results")
    async def list_results_legacy(app_name: str) -> Response:
        return _json(evals.store(app_name).list_results())

    @api.get(_APP + "/metrics-info", tags=_TAGS, summary="The metrics an eval run can score")
    async def list_metrics(app_name: str) -> Response:
        known_app(registry, app_name)
        return _json({"metricsInfo": to_camel_json(metrics_info())})
