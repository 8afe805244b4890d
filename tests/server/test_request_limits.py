"""Each request limit is a 4xx that names it, and nothing of the refused request is stored
(issue 33: these were 500s from deep inside the stores, or bad input stored with a 200).

Through a real uvicorn server over an apps folder, so that sessions are in a real SQLite
file and artifacts and eval sets are real files: the limits guard what those can hold.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from eventide.server import create_app
from eventide.server.request_limits import (
    MAX_ID_LENGTH,
    MAX_JSON_DEPTH,
    MAX_STATE_KEYS,
    json_text_shallow,
)
from tests.server.harness import ThreadedServer

APP = "hello"
USER = "limits-user"
BASE = f"/apps/{APP}/users/{USER}/sessions"


@pytest.fixture(scope="module")
def apps_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("apps")
    (folder / APP).mkdir()
    (folder / APP / "agent.py").write_text(
        "from eventide import LlmAgent\nfrom eventide.testing import ScriptedModel\n"
        "root_agent = LlmAgent(name='hello', model=ScriptedModel(responses=['hi'] * 20))\n"
    )
    return folder


@pytest.fixture(scope="module")
def client(apps_dir: Path) -> Iterator[httpx.Client]:
    with ThreadedServer(create_app(apps_dir=apps_dir)) as server:
        with httpx.Client(base_url=server.url, timeout=60) as http:
            yield http


@pytest.fixture
def session_id(client: httpx.Client) -> str:
    created = client.post(BASE, json={"state": {"kept": 1}})
    assert created.status_code == 200, created.text
    return str(created.json()["id"])


def _nested(levels: int) -> Any:
    value: Any = "leaf"
    for _ in range(levels):
        value = [value]
    return value


def _send(client: httpx.Client, method: str, path: str, body: str) -> httpx.Response:
    return client.request(method, path, content=body, headers={"Content-Type": "application/json"})


def _messages(answer: httpx.Response) -> str:
    detail = answer.json()["detail"]
    return detail if isinstance(detail, str) else " ".join(d["msg"] for d in detail)


def _unchanged(client: httpx.Client, session_id: str) -> None:
    session = client.get(f"{BASE}/{session_id}").json()
    assert (session["state"], session["events"]) == ({"kept": 1}, [])


def _turn(session_id: str, **extra: Any) -> dict[str, Any]:
    message = {"role": "user", "parts": [{"text": "hi"}]}
    return {"appName": APP, "userId": USER, "sessionId": session_id, "newMessage": message, **extra}


@pytest.mark.parametrize("levels", [MAX_JSON_DEPTH + 1, 300, 1000, 5000])
def test_json_nested_too_deep_is_a_422_naming_the_depth(
    client: httpx.Client, session_id: str, levels: int
) -> None:
    """Rule: nesting depth. 1,000 levels crashed the parser (RecursionError), 300 the
    serializer when the state was stored."""
    deep = "[" * levels + "]" * levels
    requests = [
        ("POST", BASE, '{"state": {"a": ' + deep + "}}"),
        ("PATCH", f"{BASE}/{session_id}", '{"stateDelta": {"a": ' + deep + "}}"),
        (
            "POST",
            "/run",
            json.dumps(_turn(session_id))[:-1] + ', "stateDelta": {"a": ' + deep + "}}",
        ),
        ("POST", "/dev/apps/hello/eval-sets", '{"evalSet": ' + deep + "}"),
    ]
    sessions_before = client.get(BASE).json()
    for method, path, body in requests:
        answer = _send(client, method, path, body)
        assert answer.status_code == 422, (path, answer.text)
        assert f"nested more than {MAX_JSON_DEPTH} levels deep" in _messages(answer), path
    _unchanged(client, session_id)
    assert client.get(BASE).json() == sessions_before


def test_json_at_the_depth_limit_is_stored(client: httpx.Client, session_id: str) -> None:
    value = _nested(MAX_JSON_DEPTH - 3)  # the body's own levels count too
    patched = client.patch(f"{BASE}/{session_id}", json={"stateDelta": {"deep": value}})
    assert patched.status_code == 200, patched.text
    assert patched.json()["state"]["deep"] == value


def test_a_shallow_body_with_many_brackets_is_accepted(
    client: httpx.Client, session_id: str
) -> None:
    """Bodies whose text has more brackets than the depth limit (wide values, brackets in
    strings) are walked, not refused: only their nesting counts."""
    wide = [[i] for i in range(MAX_JSON_DEPTH * 2)]
    text = "[" * (MAX_JSON_DEPTH * 2)
    assert not json_text_shallow(json.dumps(wide).encode())
    assert json_text_shallow(b'{"a": [1, {"b": 2}]}')
    ran = client.post("/run", json=_turn(session_id, stateDelta={"wide": wide, "text": text}))
    assert ran.status_code == 200, ran.text
    state = client.get(f"{BASE}/{session_id}").json()["state"]
    assert (state["wide"], state["text"]) == (wide, text)


def test_too_many_state_keys_is_a_422_naming_the_limit(
    client: httpx.Client, session_id: str
) -> None:
    """Rule: keys in one state change. 200,000 keys were "too many SQL variables", a 500."""
    keys = {f"k{i}": i for i in range(200_000)}
    sessions_before = client.get(BASE).json()
    for method, path, body in [
        ("PATCH", f"{BASE}/{session_id}", {"stateDelta": keys}),
        ("POST", BASE, {"state": keys}),
        ("POST", "/run", _turn(session_id, stateDelta=keys)),
    ]:
        answer = client.request(method, path, json=body)
        assert answer.status_code == 422, (path, answer.text)
        assert f"200000 keys, over the limit of {MAX_STATE_KEYS}" in _messages(answer)
    _unchanged(client, session_id)
    assert client.get(BASE).json() == sessions_before


def test_a_state_change_over_the_event_size_limit_is_a_413(
    client: httpx.Client, session_id: str
) -> None:
    """Rule: the 16 MiB per-event limit of the store is a 413 saying what to do."""
    big = "x" * (17 * 1024 * 1024)
    for method, path, body in [
        ("PATCH", f"{BASE}/{session_id}", {"stateDelta": {"big": big}}),
        ("POST", "/run", _turn(session_id, stateDelta={"big": big})),
    ]:
        answer = client.request(method, path, json=body)
        assert answer.status_code == 413, (path, answer.text[:300])
        assert "over the limit of 16777216 bytes; nothing was stored" in _messages(answer)
    _unchanged(client, session_id)


@pytest.mark.parametrize(
    ("where", "bad", "message"),
    [
        ("user", "u" * 300, f"300 characters long, over the limit of {MAX_ID_LENGTH}"),
        ("session", "s" * 300, f"300 characters long, over the limit of {MAX_ID_LENGTH}"),
        ("session body", "a/b", "contains '/'"),
        ("session body", "x" * 129, f"129 characters long, over the limit of {MAX_ID_LENGTH}"),
        ("session body", "has space", "contains ' '"),
        ("eval set", "e" * 300, f"300 characters long, over the limit of {MAX_ID_LENGTH}"),
        ("eval set body", "e" * 300, f"300 characters long, over the limit of {MAX_ID_LENGTH}"),
    ],
)
def test_ids_over_the_length_limit_or_with_bad_characters_are_a_422(
    client: httpx.Client, apps_dir: Path, where: str, bad: str, message: str
) -> None:
    """Rule: ids are 1 to 128 characters, without '/', '\\', '?', '#', '%', spaces or
    control characters. A 300-character id was ENAMETOOLONG (a 500 blaming the artifact's
    name); 'a/b' was stored but could never be read by URL."""
    requests = {
        "user": ("POST", f"/apps/{APP}/users/{bad}/sessions", {}),
        "session": ("POST", f"{BASE}/{bad}", {}),
        "session body": ("POST", BASE, {"sessionId": bad}),
        "eval set": ("POST", f"/dev/apps/{APP}/eval_sets/{bad}", None),
        "eval set body": ("POST", f"/dev/apps/{APP}/eval-sets", {"evalSet": {"evalSetId": bad}}),
    }
    method, path, body = requests[where]
    before = client.get(BASE).json()
    answer = client.request(method, path, json=body)
    assert answer.status_code == 422, answer.text
    assert message in _messages(answer)
    assert client.get(BASE).json() == before
    assert not list(apps_dir.joinpath(APP).glob("*.evalset.json"))


def test_an_artifact_name_too_long_for_the_file_system_is_a_400(
    client: httpx.Client, session_id: str
) -> None:
    artifacts = f"{BASE}/{session_id}/artifacts"
    answer = client.post(artifacts, json={"filename": "a" * 300, "artifact": {"text": "x"}})
    assert answer.status_code == 400, answer.text
    assert "too long for the file system" in answer.json()["detail"]
    assert client.get(artifacts).json() == []


def test_unknown_fields_are_a_422_naming_them(client: httpx.Client, session_id: str) -> None:
    """Strict request models: a typo is refused, not dropped; both spellings still work."""
    typo = client.post(BASE, json={"state": {"a": 1}, "sesionId": "x"})
    assert typo.status_code == 422
    assert "Unknown key 'sesionId' (did you mean 'sessionId'?)" in _messages(typo)
    not_object = client.post(BASE, json={"state": "notadict"})
    assert not_object.status_code == 422
    assert "state must be a JSON object, got str" in _messages(not_object)
    fork = client.post(f"{BASE}/{session_id}/fork", json={"upToEventID": "e"})
    assert fork.status_code == 422 and "upToEventID" in fork.text
    run = client.post("/run", json=_turn(session_id, stateDeltaa={"a": 1}))
    assert run.status_code == 422 and "stateDeltaa" in run.text
    _unchanged(client, session_id)
    # ADK's other /run fields (a resumed call's ids, metadata) are accepted, in both cases.
    for spelled in ({"invocationId": None}, {"function_call_event_id": None}):
        assert client.post("/run", json=_turn(session_id, **spelled)).status_code == 200
    camel = client.post(f"{BASE}/{session_id}/fork", json={"newSessionId": "forked-1"})
    snake = client.post(f"{BASE}/{session_id}/fork", json={"new_session_id": "forked-2"})
    assert (camel.status_code, snake.status_code) == (200, 200)


def test_eval_bodies_are_strict_in_both_spellings(client: httpx.Client, session_id: str) -> None:
    """The eval routes hold their bodies to the same rule as the others (issue 33): an
    unknown key at any depth or a value of the wrong type is a 422 naming it, and nothing
    is stored; camelCase and snake_case both work, google-adk's own fields included."""
    dev = f"/dev/apps/{APP}"
    refused = {
        "typo at the top": {"evalSett": {"evalSetId": "a"}},
        "typo in the set": {"evalSet": {"evalSetId": "a", "evalCasez": []}},
        "typo in a case": {"evalSet": {"evalSetId": "a", "evalCases": [{"evalId": "c", "x": 1}]}},
        "typo in a turn": {
            "eval_set": {
                "eval_set_id": "a",
                "eval_cases": [
                    {
                        "eval_id": "c",
                        "conversation": [{"user_content": {"parts": []}, "finalRespons": None}],
                    }
                ],
            }
        },
        "wrong type of id": {"evalSet": {"evalSetId": 5}},
        "wrong type of cases": {"evalSet": {"evalSetId": "a", "evalCases": "none"}},
        "wrong type of time": {"evalSet": {"evalSetId": "a", "creationTimestamp": "today"}},
    }
    for why, body in refused.items():
        answer = client.post(f"{dev}/eval-sets", json=body)
        assert answer.status_code == 422, (why, answer.text)
    typo = client.post(f"{dev}/eval-sets", json={"evalSett": {"evalSetId": "a"}})
    assert "Unknown key 'evalSett' (did you mean 'evalSet'?)" in _messages(typo)
    deep = client.post(f"{dev}/eval-sets", json=refused["typo in a turn"])
    assert "evalSet.evalCases.0.conversation.0: unknown field 'finalRespons'" in _messages(deep)
    assert client.get(f"{dev}/eval-sets").json() == {"evalSetIds": []}

    # Both spellings, and google-adk's fields Eventide does not use, are accepted.
    snake = {"eval_set": {"eval_set_id": "snake_set", "eval_cases": []}}
    adk_case = {
        "evalId": "c1",
        "rubrics": [],
        "sessionInput": {"appName": APP, "userId": USER, "sessionId": "s", "state": {}},
        "conversation": [{"userContent": {"role": "user", "parts": [{"text": "hi"}]}}],
    }
    camel = {"evalSet": {"evalSetId": "camel_set", "evalCases": [adk_case]}}
    # The very body google-adk 2.13's web UI posts to create a set.
    adk_ui = {
        "eval_set": {
            "eval_set_id": "ui_set",
            "model_execution_mode": "live",
            "tool_execution_mode": "live",
            "eval_cases": [],
        }
    }
    assert client.post(f"{dev}/eval-sets", json=snake).status_code == 200
    assert client.post(f"{dev}/eval-sets", json=camel).status_code == 200, "camel"
    assert client.post(f"{dev}/eval-sets", json=adk_ui).status_code == 200, "google-adk's UI"
    listed = client.get(f"{dev}/eval-sets").json()["evalSetIds"]
    assert sorted(listed) == ["camel_set", "snake_set", "ui_set"]

    case_path = f"{dev}/eval-sets/camel_set/eval-cases/c1"
    bad_case = client.put(case_path, json={**adk_case, "conversaton": []})
    assert bad_case.status_code == 422 and "conversaton" in bad_case.text
    wrong_case = client.put(case_path, json={**adk_case, "conversation": "x"})
    assert wrong_case.status_code == 422
    assert client.get(case_path).json()["conversation"][0]["userContent"]["parts"] == [
        {"text": "hi"}
    ]
    # What GET answers, sent back as it is (google-adk's UI edits a case this way).
    assert client.put(case_path, json=client.get(case_path).json()).status_code == 200

    add = f"{dev}/eval-sets/snake_set/add-session"
    typo_add = client.post(add, json={"evalId": "e", "sessionId": session_id, "usrId": USER})
    assert typo_add.status_code == 422
    assert "'usrId' (did you mean 'userId'?)" in _messages(typo_add)
    wrong_add = client.post(add, json={"evalId": "e", "sessionId": session_id, "userId": 7})
    assert wrong_add.status_code == 422
    assert client.get(f"{dev}/eval_sets/snake_set/evals").json() == []
    for body in (
        {"evalId": "e1", "sessionId": session_id, "userId": USER},
        {"eval_id": "e2", "session_id": session_id, "user_id": USER},
    ):
        assert client.post(add, json=body).status_code == 200, body
    assert client.get(f"{dev}/eval_sets/snake_set/evals").json() == ["e1", "e2"]

    run = f"{dev}/eval-sets/snake_set/run"
    metric = {"metricName": "response_match_score", "threshold": 0.5}
    for body in (
        {"evalMetrics": [metric], "evalCaseIdz": ["e1"]},
        {"evalMetrics": [{**metric, "treshold": 0.5}]},
        {"evalMetrics": [{**metric, "threshold": "high"}]},
    ):
        answer = client.post(run, json=body)
        assert answer.status_code == 422, (body, answer.text)
    assert client.get(f"{dev}/eval-results").json() == {"evalResultIds": []}
    _unchanged(client, session_id)
