"""Schemathesis over every route of the server's own OpenAPI document (issue 33).

Property-based fuzzing: for each operation the document describes, schemathesis generates
requests from its schema (path parameters, query strings, bodies) and sends them to a real
uvicorn server. No answer may be a 5xx, every status code must be one the document gives
for the operation, and a write refused with a 4xx must leave the user's sessions as they
were. The seed and the number of examples per operation
are fixed, so a run is repeatable and its cost bounded.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any
from urllib.parse import quote

import httpx
import pytest
import schemathesis
from hypothesis import HealthCheck, Phase, given, seed, settings
from schemathesis.checks import not_a_server_error
from schemathesis.core.failures import FailureGroup
from schemathesis.core.result import Ok
from schemathesis.specs.openapi.checks import status_code_conformance

from eventide.server import create_app
from tests.server.fixture_agents import fixture_apps
from tests.server.harness import ThreadedServer

EXAMPLES_PER_OPERATION = 8


@pytest.fixture(scope="module")
def fuzzed_server() -> Iterator[ThreadedServer]:
    with ThreadedServer(create_app(apps=fixture_apps())) as running:
        yield running


def _sessions_of(client: httpx.Client, case: schemathesis.Case[Any]) -> list[Any] | None:
    """The sessions (ids and states) of the case's app and user, when it names them."""
    params = case.path_parameters or {}
    app, user = params.get("app_name"), params.get("user_id")
    if not (isinstance(app, str) and isinstance(user, str)) or case.method == "GET":
        return None
    listed = client.get(f"/apps/{quote(app, safe='')}/users/{quote(user, safe='')}/sessions")
    if listed.status_code != 200:
        return None
    return sorted((s["id"], str(s["state"])) for s in listed.json())


def test_fuzzed_requests_get_documented_non_5xx_answers_and_refusals_store_nothing(
    fuzzed_server: ThreadedServer,
) -> None:
    schema = schemathesis.openapi.from_url(f"{fuzzed_server.url}/openapi.json")
    client = httpx.Client(base_url=fuzzed_server.url, timeout=60)
    failures: list[str] = []
    cases = 0
    operations = 0
    for loaded in schema.get_all_operations():
        assert isinstance(loaded, Ok), loaded  # the document describes every operation
        operation = loaded.ok()
        operations += 1

        @seed(33)
        @settings(
            max_examples=EXAMPLES_PER_OPERATION,
            deadline=None,
            derandomize=True,
            phases=[Phase.explicit, Phase.generate],
            suppress_health_check=list(HealthCheck),
            database=None,
        )
        @given(operation.as_strategy())
        def run(case: schemathesis.Case[Any]) -> None:
            nonlocal cases
            cases += 1
            before = _sessions_of(client, case)
            response = case.call(timeout=60)
            if 400 <= response.status_code < 500 and before is not None:
                after = _sessions_of(client, case)
                if after != before:
                    failures.append(
                        f"{case.method} {case.formatted_path} -> {response.status_code} "
                        f"but the user's sessions changed: {before} -> {after}"
                    )
            try:
                case.validate_response(
                    response, checks=[not_a_server_error, status_code_conformance]
                )
            except FailureGroup as failed:
                failures.append(
                    f"{case.method} {case.formatted_path} -> {response.status_code}: "
                    f"{failed.exceptions[0].title}: {response.text[:300]}"
                )

        run()
    client.close()
    print(f"schemathesis: {cases} cases over {operations} operations")
    assert operations > 40
    assert not failures, "\n".join(failures)
