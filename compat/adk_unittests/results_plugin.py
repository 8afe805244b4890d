"""A pytest plugin loaded (``-p adk_unittests.results_plugin``) into each run of google-adk's
unit tests, on google-adk and on Eventide alike.

It writes one JSON record per test (outcome, the phase that decided it, a one-line reason)
and one per file that could not be collected, to the file named by ``$ADK_RESULTS_FILE_ENV``.
With ``$IMPORT_MAP_ENV=1`` it first installs the import map, so that every ``google.adk``
import of the run (the tests', their ``conftest.py``'s and ``testing_utils``') lands on
Eventide.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, cast

import pytest

RESULTS_FILE_ENV = "ADK_CONFORMANCE_RESULTS_FILE"
IMPORT_MAP_ENV = "ADK_CONFORMANCE_IMPORT_MAP"

if os.environ.get(IMPORT_MAP_ENV) == "1":
    from adk_unittests.import_map import install

    install()

_tests: dict[str, dict[str, str]] = {}
_collection_errors: dict[str, str] = {}


def _reason(report: pytest.TestReport | pytest.CollectReport) -> str:
    longrepr: Any = report.longrepr
    crash = getattr(longrepr, "reprcrash", None)
    if crash is not None:
        text = str(crash.message)
    elif isinstance(longrepr, tuple):  # a skip: (file, line, reason)
        text = str(cast("tuple[object, ...]", longrepr)[-1])
    else:
        text = str(longrepr)
    first = text.strip().splitlines()[0] if text.strip() else ""
    return first[:400]


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    """Keep the deciding phase of each test: the first failure or skip, else the call."""
    record = _tests.get(report.nodeid)
    if record is not None and record["outcome"] != "passed":
        return  # an earlier phase already decided it (a teardown error does not undo that)
    if report.when == "call" or report.outcome != "passed":
        outcome: str = report.outcome
        if hasattr(report, "wasxfail"):
            outcome = "xfailed" if report.skipped else "xpassed"
        elif report.failed and report.when != "call":
            outcome = "error"
        _tests[report.nodeid] = {
            "outcome": outcome,
            "when": report.when,
            "reason": "" if outcome == "passed" else _reason(report),
        }


def pytest_collectreport(report: pytest.CollectReport) -> None:
    """Remember each file that could not be collected, with why."""
    if report.failed:
        _collection_errors[report.nodeid] = _reason(report)


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """Write the records (when the run was given a file for them)."""
    target = os.environ.get(RESULTS_FILE_ENV)
    if not target:
        return
    Path(target).write_text(
        json.dumps(
            {"tests": _tests, "collection_errors": _collection_errors, "exit_status": exitstatus},
            indent=1,
            sort_keys=True,
        )
    )
