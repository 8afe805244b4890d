"""The eval routes of the dev server, against a real uvicorn server and an app folder.

Paths, methods, status codes and JSON shapes follow ``adk web``'s (google-adk 2.13, compared
by running both): camelCase responses, either case accepted in requests, eval sets stored as
``<app folder>/<id>.evalset.json`` and results under ``.eventide/eval_history``.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from eventide.server import create_app
from tests.evaluation.weather_app import turn, write_weather_app
from tests.server.harness import ThreadedServer

METRICS = [
    {"metricName": "tool_trajectory_avg_score", "threshold": 1.0},
    {"metricName": "response_match_score", "threshold": 0.8},
]
DEV = "/dev/apps/weather"


@pytest.fixture
def app_folder(tmp_path: Path) -> Iterator[Path]:
    saved = list(sys.path)
    try:
        yield write_weather_app(tmp_path / "apps")
    finally:
        sys.path[:] = saved


@pytest.fixture
def client(app_folder: Path) -> Iterator[httpx.Client]:
    with ThreadedServer(create_app(apps_dir=app_folder.parent, web=True)) as server:
        with httpx.Client(base_url=server.url, timeout=30) as http:
            yield http


def _record_session(client: httpx.Client, user: str = "u1") -> str:
    sid = client.post(f"/apps/weather/users/{user}/sessions").json()["id"]
    body = {
        "appName": "weather",
        "userId": user,
        "sessionId": sid,
        "newMessage": {"role": "user", "parts": [{"text": "what is the weather in Paris?"}]},
    }
    assert client.post("/run", json=body).status_code == 200
    return str(sid)


def _files(folder: Path) -> dict[str, str]:
    return {
        str(p.relative_to(folder)): p.read_text()
        for p in sorted(folder.rglob("*"))
        if p.is_file() and "evalset" in p.name
    }


def test_session_to_eval_case_to_run_to_stored_result(
    client: httpx.Client, app_folder: Path
) -> None:
    """The ADK UI's eval flow: create a set, add a recorded session as a case, read the case
    (camelCase), run it (scores both metrics), list and read the stored result."""
    sid = _record_session(client)
    created = client.post(
        f"{DEV}/eval-sets", json={"evalSet": {"eval_set_id": "smoke", "eval_cases": []}}
    )
    assert created.status_code == 200
    assert created.json()["eval_set_id"] == "smoke"  # google-adk answers this one snake_case
    assert client.get(f"{DEV}/eval-sets").json() == {"evalSetIds": ["smoke"]}

    added = client.post(
        f"{DEV}/eval-sets/smoke/add-session",
        json={"evalId": "paris", "sessionId": sid, "userId": "u1"},
    )
    assert added.status_code == 200 and added.json() is None
    case = client.get(f"{DEV}/eval-sets/smoke/eval-cases/paris").json()
    assert case["evalId"] == "paris"
    assert case["sessionInput"] == {"appName": "weather", "userId": "u1", "state": {}}
    (invocation,) = case["conversation"]
    assert invocation["userContent"]["parts"] == [{"text": "what is the weather in Paris?"}]
    assert invocation["finalResponse"]["parts"] == [{"text": "It is sunny in Paris."}]
    events = invocation["intermediateData"]["invocationEvents"]
    assert events[0]["content"]["parts"][0]["functionCall"]["args"] == {"city": "Paris"}

    # The file is snake_case, google-adk's format.
    stored = json.loads((app_folder / "smoke.evalset.json").read_text())
    assert stored["eval_cases"][0]["eval_id"] == "paris"

    run = client.post(f"{DEV}/eval-sets/smoke/run", json={"evalMetrics": METRICS})
    assert run.status_code == 200
    (result,) = run.json()["runEvalResults"]
    assert (result["evalSetId"], result["evalId"], result["finalEvalStatus"]) == (
        "smoke",
        "paris",
        1,
    )
    scores = {
        m["metricName"]: (m["score"], m["evalStatus"]) for m in result["overallEvalMetricResults"]
    }
    assert scores == {"tool_trajectory_avg_score": (1.0, 1), "response_match_score": (1.0, 1)}
    assert result["userId"] == "u1" and result["sessionId"].startswith("eval-session-")
    per_turn = result["evalMetricResultPerInvocation"][0]
    assert per_turn["actualInvocation"]["finalResponse"]["parts"] == [
        {"text": "It is sunny in Paris."}
    ]

    (result_id,) = client.get(f"{DEV}/eval-results").json()["evalResultIds"]
    assert client.get(f"{DEV}/eval_results").json() == [result_id]
    stored_result = client.get(f"{DEV}/eval-results/{result_id}").json()
    assert stored_result["evalSetId"] == "smoke"
    assert stored_result["evalCaseResults"][0]["finalEvalStatus"] == 1
    assert (
        app_folder / ".eventide" / "eval_history" / f"{result_id}.evalset_result.json"
    ).is_file()
    # As with `adk web`, the case ran in a new session of the server's own store, as the
    # case's user, so the UI can open it beside the result: the replayed turn is there.
    listed = client.get("/apps/weather/users/u1/sessions").json()
    assert sorted(s["id"] for s in listed) == sorted([sid, result["sessionId"]])
    replayed = client.get(f"/apps/weather/users/u1/sessions/{result['sessionId']}").json()
    assert replayed["events"][0]["content"]["parts"] == [{"text": "what is the weather in Paris?"}]
    assert replayed["events"][-1]["content"]["parts"] == [{"text": "It is sunny in Paris."}]


def test_update_a_case_and_the_run_fails_where_it_differs(client: httpx.Client) -> None:
    """PUT replaces a case (either case accepted); a wrong expected tool argument fails the
    trajectory metric while the response still matches."""
    client.post(f"{DEV}/eval_sets/edited")
    assert client.get(f"{DEV}/eval_sets").json() == ["edited"]
    sid = _record_session(client)
    client.post(
        f"{DEV}/eval_sets/edited/add_session",
        json={"eval_id": "c1", "session_id": sid, "user_id": "u1"},
    )
    assert client.get(f"{DEV}/eval_sets/edited/evals").json() == ["c1"]
    case = client.get(f"{DEV}/eval_sets/edited/evals/c1").json()
    first = case["conversation"][0]
    first["intermediateData"] = {"toolUses": [{"name": "get_weather", "args": {"city": "Lyon"}}]}
    assert client.put(f"{DEV}/eval_sets/edited/evals/c1", json=case).status_code == 200

    legacy = client.post(f"{DEV}/eval_sets/edited/run_eval", json={"eval_metrics": METRICS})
    assert legacy.status_code == 200
    (result,) = legacy.json()  # the older path answers a plain list
    assert result["finalEvalStatus"] == 2
    statuses = {m["metricName"]: m["evalStatus"] for m in result["overallEvalMetricResults"]}
    assert statuses == {"tool_trajectory_avg_score": 2, "response_match_score": 1}

    assert client.delete(f"{DEV}/eval-sets/edited/eval-cases/c1").status_code == 200
    assert client.get(f"{DEV}/eval_sets/edited/evals").json() == []


def test_metrics_info_lists_what_eventide_scores(client: httpx.Client) -> None:
    """metrics-info lists the two metrics with their value range, camelCase."""
    info = client.get(f"{DEV}/metrics-info").json()["metricsInfo"]
    assert [m["metricName"] for m in info] == ["tool_trajectory_avg_score", "response_match_score"]
    assert info[0]["metricValueInfo"]["interval"] == {
        "minValue": 0.0,
        "openAtMin": False,
        "maxValue": 1.0,
        "openAtMax": False,
    }


@pytest.mark.parametrize(
    ("method", "path", "body", "status", "message"),
    [
        ("post", "/eval-sets/nope/run", {"evalMetrics": METRICS}, 400, "Eval set 'nope' not found"),
        ("get", "/eval_sets/nope/evals", None, 400, "Eval set 'nope' not found"),
        ("get", "/eval-sets/nope/eval-cases/c", None, 404, "not found"),
        ("get", "/eval-results/nope", None, 404, "Eval result 'nope' not found"),
        ("get", "/eval-results/..agent", None, 404, "not found"),
        (
            "post",
            "/eval-sets",
            {"evalSet": {"eval_set_id": "../x", "eval_cases": []}},
            422,
            "letters, digits",
        ),
        ("post", "/eval_sets/bad-id", None, 400, "letters, digits"),
        (
            "post",
            "/eval-sets",
            {"evalSet": {"eval_set_id": "m", "eval_cases": "x"}},
            422,
            "valid list",
        ),
        (
            "post",
            "/eval-sets",
            {"wrong": {}},
            422,
            "Unknown key 'wrong'; the body's keys are evalSet",
        ),
        (
            "post",
            "/eval-sets/kept/run",
            {"evalMetrics": [{"metricName": "safety_v1", "threshold": 1}]},
            400,
            "unknown metric 'safety_v1'",
        ),
        ("post", "/eval-sets/kept/run", {"evalMetrics": []}, 400, "at least one"),
        ("post", "/eval-sets/kept/run", {}, 422, "missing field 'eval_metrics'"),
        (
            "post",
            "/eval-sets/kept/run",
            {"evalMetrics": METRICS, "evalCaseIds": ["ghost"]},
            400,
            "has no case 'ghost'",
        ),
        (
            "post",
            "/eval-sets/kept/add-session",
            {"evalId": "k", "sessionId": "ghost", "userId": "u1"},
            404,
            "Session 'ghost' not found",
        ),
        ("post", "/eval-sets/kept/add-session", {"evalId": "k"}, 422, "missing field 'session_id'"),
        (
            "post",
            "/eval-sets/kept/add-session",
            {"evalId": "k1", "sessionId": "s", "userId": "u"},
            400,
            "already exists",
        ),
        (
            "post",
            "/eval-sets",
            {"evalSet": {"eval_set_id": "kept", "eval_cases": []}},
            400,
            "already exists",
        ),
        ("put", "/eval-sets/kept/eval-cases/k1", {"evalId": "other"}, 400, "must be the same"),
        (
            "put",
            "/eval-sets/kept/eval-cases/k1",
            {"evalId": "k1", "conversation": "x"},
            422,
            "eval case",
        ),
        ("delete", "/eval-sets/kept/eval-cases/ghost", None, 404, "not found"),
    ],
)
def test_bad_input_gets_a_clear_4xx_and_nothing_is_stored(
    client: httpx.Client,
    app_folder: Path,
    method: str,
    path: str,
    body: Any,
    status: int,
    message: str,
) -> None:
    """Unknown eval sets, cases, results and metrics, malformed bodies and unsafe ids are
    refused with a 4xx whose message says what is wrong; no file changes."""
    kept = {
        "eval_set_id": "kept",
        "eval_cases": [{"eval_id": "k1", "conversation": [turn("hi", "You said: hi", [])]}],
    }
    assert client.post(f"{DEV}/eval-sets", json={"evalSet": kept}).status_code == 200
    before = _files(app_folder)
    response = client.request(method, DEV + path, json=body)
    assert response.status_code == status, response.text
    assert message in json.dumps(response.json()["detail"])
    assert _files(app_folder) == before


def test_malformed_json_and_unknown_app(client: httpx.Client) -> None:
    """A body that is not JSON is a 422 saying so; an unknown app is a 404 naming the apps."""
    broken = client.post(
        f"{DEV}/eval-sets", content=b"{not json", headers={"content-type": "application/json"}
    )
    assert broken.status_code == 422 and "not valid JSON" in broken.text
    unknown = client.get("/dev/apps/nope/eval-sets")
    assert unknown.status_code == 404 and "'weather'" in unknown.text


def test_a_broken_eval_set_file_is_reported_not_crashed_on(
    client: httpx.Client, app_folder: Path
) -> None:
    """A hand-edited eval set file that does not parse gives a 422 naming the file."""
    (app_folder / "hand.evalset.json").write_text('{"eval_set_id": "hand", "eval_cases": 3}')
    assert client.get(f"{DEV}/eval-sets").json() == {"evalSetIds": ["hand"]}
    response = client.post(f"{DEV}/eval-sets/hand/run", json={"evalMetrics": METRICS})
    assert response.status_code == 422
    assert "hand.evalset.json is not a valid eval set" in response.json()["detail"]
